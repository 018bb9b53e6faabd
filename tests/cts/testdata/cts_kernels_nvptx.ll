; GPU kernels of the HAL conformance suite for the hip driver on NVIDIA,
; mirroring cts_kernels.c (the host kernels). CMake compiles this file to
; PTX with llc (-march=nvptx64 -mcpu=sm_80); the tests feed the PTX text to
; the executable cache as format "ptx".
;
; Kernel ABI (runtime/src/drivers/hip/hip_executable.h): one pointer per
; binding, then the push constants as i32.

target datalayout = "e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()

; out[i] = a[i] + b[i] for i < n; one thread per element, i = block * ntid + tid
; (the tests launch 64-thread workgroups).
define ptx_kernel void @cts_add_f32(ptr %a, ptr %b, ptr %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %block = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %block, %ntid
  %i = add i32 %base, %tid
  %inside = icmp ult i32 %i, %n
  br i1 %inside, label %body, label %exit
body:
  %index = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr %a, i64 %index
  %pb = getelementptr inbounds float, ptr %b, i64 %index
  %po = getelementptr inbounds float, ptr %out, i64 %index
  %va = load float, ptr %pa, align 4
  %vb = load float, ptr %pb, align 4
  %sum = fadd float %va, %vb
  store float %sum, ptr %po, align 4
  br label %exit
exit:
  ret void
}

; counters[linear workgroup id] += 1 (uint32, atomic; thread 0 only) so a
; test can check that each workgroup of a 3D grid ran exactly once.
define ptx_kernel void @cts_mark_grid(ptr %counters) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %body, label %exit
body:
  %x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %z = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
  %zy = mul i32 %z, %ny
  %row = add i32 %zy, %y
  %rowx = mul i32 %row, %nx
  %linear = add i32 %rowx, %x
  %index = zext i32 %linear to i64
  %p = getelementptr inbounds i32, ptr %counters, i64 %index
  %old = atomicrmw add ptr %p, i32 1 monotonic, align 4
  br label %exit
exit:
  ret void
}

; GPU kernels cannot return an error code; this export exists so that the
; export table matches the host kernels (the failing-kernel test is
; host-only; the hip driver tests failures through failure injection).
define ptx_kernel void @cts_fail_at(i32 %workgroup, i32 %code) {
entry:
  ret void
}

; Symmetric-window put (cts_window_put in cts_kernels.c), one thread:
; writes 100 + rank into 32-bit word |rank| of every rank's data (the peer
; table's entries 0 .. count-1), then stores 1 into 64-bit signal slot
; |rank| of every rank (entries count .. 2 x count - 1) with a system-scope
; release, so a reader that sees the signal sees the data.
define ptx_kernel void @cts_window_put(ptr %table, i32 %rank, i32 %count) {
entry:
  %r = zext i32 %rank to i64
  %n = zext i32 %count to i64
  %value = add i32 %rank, 100
  br label %loop
loop:
  %peer = phi i64 [ 0, %entry ], [ %next, %loop ]
  %dataSlot = getelementptr inbounds i64, ptr %table, i64 %peer
  %dataAddress = load i64, ptr %dataSlot, align 8
  %data = inttoptr i64 %dataAddress to ptr
  %word = getelementptr inbounds i32, ptr %data, i64 %r
  store atomic i32 %value, ptr %word monotonic, align 4
  %signalIndex = add i64 %n, %peer
  %signalSlot = getelementptr inbounds i64, ptr %table, i64 %signalIndex
  %signalAddress = load i64, ptr %signalSlot, align 8
  %signals = inttoptr i64 %signalAddress to ptr
  %flag = getelementptr inbounds i64, ptr %signals, i64 %r
  store atomic i64 1, ptr %flag release, align 8
  %next = add i64 %peer, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; Copies the group's abort word (the peer table's entry 2 x count points at
; it) into out[0] (cts_window_abort_word in cts_kernels.c), one thread.
define ptx_kernel void @cts_window_abort_word(ptr %table, ptr %out, i32 %count) {
entry:
  %n = zext i32 %count to i64
  %index = shl i64 %n, 1
  %slot = getelementptr inbounds i64, ptr %table, i64 %index
  %address = load i64, ptr %slot, align 8
  %word = inttoptr i64 %address to ptr
  %value = load atomic i64, ptr %word acquire, align 8
  store i64 %value, ptr %out, align 8
  ret void
}

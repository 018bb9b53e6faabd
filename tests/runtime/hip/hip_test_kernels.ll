; GPU kernels of the hip kiln-run test module (make_hip_test_module.cc),
; mirroring tests/runtime/module/test_kernels.c for the 2x3xf32 functions of
; the standard test module. Compiled to PTX by llc (sm_80). Kernel ABI: one
; pointer per binding (runtime/src/drivers/hip/hip_executable.h).

target datalayout = "e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

; out = a + b over the 6 elements of a 2x3xf32 tensor.
define ptx_kernel void @add_f32(ptr %a, ptr %b, ptr %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %block = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %block, %ntid
  %i = add i32 %base, %tid
  %inside = icmp ult i32 %i, 6
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

; The host kernel returns an error; a GPU kernel cannot, so this does
; nothing (the export table must match the host variant's).
define ptx_kernel void @fail_always(ptr %a, ptr %b, ptr %out) {
entry:
  ret void
}

// REQUIRES: kiln-dump
// A workgroup exchange through shared memory: st.shared / bar.sync /
// ld.shared, and the static shared memory size recorded in the export.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile --compile-mode=executable --target=cuda --cuda-chip=sm_90 %s -o %t/m.vmfb --dump-intermediates=%t/dump
// RUN: FileCheck %s --check-prefix=PTX < %t/dump/pairsum/pairsum.sm_90.ptx
// RUN: kiln-dump %t/m.vmfb --resources | FileCheck %s --check-prefix=RESOURCES

// PTX: .visible .entry pairsum(
// PTX: .shared .align 4 .b8 {{.*}}[1024];
// PTX: st.shared.b32
// PTX: bar.sync 0;
// PTX: ld.shared.b32
// PTX: st.global.b32

// RESOURCES: pairsum cuda:sm_90 256x1x1 8x1x1 0 0 0 1024 0

kiln.executable @pairsum {
  llvm.mlir.global internal @partial() {addr_space = 3 : i32} : !llvm.array<256 x f32>
  llvm.func @pairsum(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {
      nvvm.kernel, kiln.workgroup_count = array<i64: 8, 1, 1>,
      kiln.workgroup_size = array<i64: 256, 1, 1>,
      kiln.shared_memory_bytes = 1024 : i64} {
    %wg = nvvm.read.ptx.sreg.ctaid.x : i32
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %c256 = llvm.mlir.constant(256 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %base = llvm.mul %wg, %c256 : i32
    %i = llvm.add %base, %tid : i32
    %pin = llvm.getelementptr inbounds %in[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
    %x = llvm.load %pin : !llvm.ptr<1> -> f32
    %lds = llvm.mlir.addressof @partial : !llvm.ptr<3>
    %mine = llvm.getelementptr %lds[0, %tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, !llvm.array<256 x f32>
    llvm.store %x, %mine : f32, !llvm.ptr<3>
    nvvm.barrier0
    %peer = llvm.xor %tid, %c1 : i32
    %theirs = llvm.getelementptr %lds[0, %peer] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, !llvm.array<256 x f32>
    %y = llvm.load %theirs : !llvm.ptr<3> -> f32
    %s = llvm.fadd %x, %y : f32
    %pout = llvm.getelementptr inbounds %out[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
    llvm.store %s, %pout : f32, !llvm.ptr<1>
    llvm.return
  }
}

// REQUIRES: kiln-dump
// A workgroup exchange through LDS (one step of a shared-memory reduction):
// each thread stores its value, the workgroup synchronizes, and each thread
// adds its neighbour's. LDS use shows as ds_* instructions and in the
// code object's .group_segment_fixed_size, which kiln-dump reports.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile --compile-mode=executable --target=rocm --rocm-chip=gfx90a,gfx1201 %s -o %t/m.vmfb --dump-intermediates=%t/dump
// RUN: llvm-objdump -d --mcpu=gfx90a %t/dump/pairsum/pairsum.gfx90a.hsaco | FileCheck %s --check-prefix=ISA90A
// RUN: llvm-objdump -d --mcpu=gfx1201 %t/dump/pairsum/pairsum.gfx1201.hsaco | FileCheck %s --check-prefix=ISA1201
// RUN: llvm-readobj --notes %t/dump/pairsum/pairsum.gfx90a.hsaco | FileCheck %s --check-prefix=NOTES
// RUN: kiln-dump %t/m.vmfb --resources | FileCheck %s --check-prefix=RESOURCES

// ISA90A-LABEL: <pairsum>:
// ISA90A: global_load_dword
// ISA90A: ds_write_b32
// ISA90A: s_barrier
// ISA90A: ds_read_b32
// ISA90A: v_add_f32
// ISA90A: global_store_dword

// ISA1201-LABEL: <pairsum>:
// ISA1201: ds_store_b32
// ISA1201: s_barrier
// ISA1201: ds_load_b32
// ISA1201: global_store_b32

// NOTES: .group_segment_fixed_size: 1024
// NOTES: .name: pairsum
// NOTES: .wavefront_size: 64

// RESOURCES: kernel target workgroup count vgpr sgpr agpr lds scratch
// RESOURCES-NEXT: pairsum rocm:gfx90a 256x1x1 8x1x1 {{[1-9][0-9]*}} {{[1-9][0-9]*}} {{[0-9]+}} 1024 0
// RESOURCES-NEXT: pairsum rocm:gfx1201 256x1x1 8x1x1 {{[1-9][0-9]*}} {{[1-9][0-9]*}} 0 1024 0

kiln.executable @pairsum {
  llvm.mlir.global internal @partial() {addr_space = 3 : i32} : !llvm.array<256 x f32>
  llvm.func @pairsum(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {
      rocdl.kernel, kiln.workgroup_count = array<i64: 8, 1, 1>,
      kiln.workgroup_size = array<i64: 256, 1, 1>,
      kiln.shared_memory_bytes = 1024 : i64} {
    %wg = rocdl.workgroup.id.x : i32
    %tid = rocdl.workitem.id.x : i32
    %c256 = llvm.mlir.constant(256 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %base = llvm.mul %wg, %c256 : i32
    %i = llvm.add %base, %tid : i32
    %pin = llvm.getelementptr inbounds %in[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
    %x = llvm.load %pin : !llvm.ptr<1> -> f32
    %lds = llvm.mlir.addressof @partial : !llvm.ptr<3>
    %mine = llvm.getelementptr %lds[0, %tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, !llvm.array<256 x f32>
    llvm.store %x, %mine : f32, !llvm.ptr<3>
    rocdl.barrier
    %peer = llvm.xor %tid, %c1 : i32
    %theirs = llvm.getelementptr %lds[0, %peer] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, !llvm.array<256 x f32>
    %y = llvm.load %theirs : !llvm.ptr<3> -> f32
    %s = llvm.fadd %x, %y : f32
    %pout = llvm.getelementptr inbounds %out[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
    llvm.store %s, %pout : f32, !llvm.ptr<1>
    llvm.return
  }
}

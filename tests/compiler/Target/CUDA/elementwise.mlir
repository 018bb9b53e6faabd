// REQUIRES: kiln-dump
// PTX emission for a lowered elementwise kernel (the form the GPU codegen
// pipeline produces): c = exp2(a + b) on 4-wide f32 vectors. One PTX text per
// chip, with the PTX ISA version the chip needs, the kernel entry and its
// block size; the binary in the module is the text plus a terminating NUL.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile --compile-mode=executable --target=cuda --cuda-chip=sm_80,sm_90 %s -o %t/m.vmfb --dump-intermediates=%t/dump
// RUN: FileCheck %s --check-prefix=SM90 < %t/dump/ew/ew.sm_90.ptx
// RUN: FileCheck %s --check-prefix=SM80 < %t/dump/ew/ew.sm_80.ptx
// RUN: kiln-dump %t/m.vmfb | FileCheck %s --check-prefix=DUMP
// RUN: ls %t/dump/ew | FileCheck %s --check-prefix=FILES

// SM90: .version 7.8
// SM90: .target sm_90
// SM90: .address_size 64
// SM90: .visible .entry ew(
// SM90-NEXT: .param .u64 {{.*}}ew_param_0,
// SM90-NEXT: .param .u64 {{.*}}ew_param_1,
// SM90-NEXT: .param .u64 {{.*}}ew_param_2
// SM90-NEXT: )
// SM90-NEXT: .reqntid 64, 1, 1
// SM90: ld.global.v4.b32
// SM90: ex2.approx.f32
// SM90: st.global.v4.b32

// SM80: .version 7.0
// SM80: .target sm_80
// SM80: .visible .entry ew(

// DUMP: variant cuda:sm_80: format ptx
// DUMP-NEXT: export 0: ew workgroup count 4x1x1, workgroup size 64x1x1, bindings 3, push constants 0, shared memory 0
// DUMP: variant cuda:sm_90: format ptx

// FILES: ew.sm_80.input.mlir
// FILES: ew.sm_80.ll
// FILES: ew.sm_80.opt.ll
// FILES: ew.sm_80.ptx
// FILES: ew.sm_80.s

kiln.executable @ew {
  llvm.func @ew(%a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %c: !llvm.ptr<1>) attributes {
      nvvm.kernel, kiln.workgroup_count = array<i64: 4, 1, 1>,
      kiln.workgroup_size = array<i64: 64, 1, 1>,
      kiln.shared_memory_bytes = 0 : i64} {
    %wg = nvvm.read.ptx.sreg.ctaid.x : i32
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %c64 = llvm.mlir.constant(64 : i32) : i32
    %base = llvm.mul %wg, %c64 : i32
    %i = llvm.add %base, %tid : i32
    %pa = llvm.getelementptr inbounds %a[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xf32>
    %pb = llvm.getelementptr inbounds %b[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xf32>
    %pc = llvm.getelementptr inbounds %c[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xf32>
    %x = llvm.load %pa {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %y = llvm.load %pb {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %s = llvm.fadd %x, %y : vector<4xf32>
    %e = llvm.intr.exp2(%s) : (vector<4xf32>) -> vector<4xf32>
    llvm.store %e, %pc {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
    llvm.return
  }
}

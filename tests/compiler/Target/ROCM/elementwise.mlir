// HSACO emission for a lowered elementwise kernel (the form the GPU codegen
// pipeline produces): c = exp(a + b) on 4-wide f32 vectors, one vector per
// thread. One code object per chip, with the amdhsa metadata the HIP loader
// reads and the instructions the kernel should compile to.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile --compile-mode=executable --target=rocm --rocm-chip=gfx942,gfx1100 %s -o %t/m.vmfb --dump-intermediates=%t/dump
// RUN: llvm-readobj --notes %t/dump/ew/ew.gfx942.hsaco | FileCheck %s --check-prefix=NOTES942
// RUN: llvm-readobj --notes %t/dump/ew/ew.gfx1100.hsaco | FileCheck %s --check-prefix=NOTES1100
// RUN: llvm-objdump -d --mcpu=gfx942 %t/dump/ew/ew.gfx942.hsaco | FileCheck %s --check-prefix=ISA942
// RUN: llvm-objdump -d --mcpu=gfx1100 %t/dump/ew/ew.gfx1100.hsaco | FileCheck %s --check-prefix=ISA1100
// RUN: llvm-readelf -h %t/dump/ew/ew.gfx942.hsaco | FileCheck %s --check-prefix=ELF
// Every stage of --dump-intermediates is there, per chip.
// RUN: ls %t/dump/ew | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --check-prefix=ASM < %t/dump/ew/ew.gfx942.s

// NOTES942: amdhsa.kernels:
// NOTES942: .kernarg_segment_size: 24
// NOTES942: .max_flat_workgroup_size: 64
// NOTES942: .name: ew
// NOTES942: .private_segment_fixed_size: 0
// NOTES942: .reqd_workgroup_size:
// NOTES942-NEXT: - 64
// NOTES942-NEXT: - 1
// NOTES942-NEXT: - 1
// NOTES942: .symbol: ew.kd
// NOTES942: .wavefront_size: 64
// NOTES942: amdhsa.target: amdgcn-amd-amdhsa--gfx942
// NOTES942: amdhsa.version:
// NOTES942-NEXT: - 1
// NOTES942-NEXT: - 2

// NOTES1100: .name: ew
// NOTES1100: .wavefront_size: 32
// NOTES1100: amdhsa.target: amdgcn-amd-amdhsa--gfx1100

// Whole 16-byte vectors in and out, exp on the hardware unit.
// ISA942-LABEL: <ew>:
// ISA942-DAG: global_load_dwordx4
// ISA942-DAG: global_load_dwordx4
// ISA942: v_exp_f32
// ISA942: global_store_dwordx4
// ISA942: s_endpgm

// ISA1100-LABEL: <ew>:
// ISA1100-DAG: global_load_b128
// ISA1100-DAG: global_load_b128
// ISA1100: v_exp_f32
// ISA1100: global_store_b128
// ISA1100: s_endpgm

// ELF: Class: ELF64
// ELF: Type: DYN
// ELF: Machine: EM_AMDGPU

// FILES: ew.gfx1100.hsaco
// FILES: ew.gfx1100.input.mlir
// FILES: ew.gfx1100.ll
// FILES: ew.gfx1100.opt.ll
// FILES: ew.gfx1100.s
// FILES: ew.gfx942.hsaco

// ASM: .amdgcn_target "amdgcn-amd-amdhsa--gfx942"
// ASM: .amdhsa_kernel ew

kiln.executable @ew {
  llvm.func @ew(%a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %c: !llvm.ptr<1>) attributes {
      rocdl.kernel, kiln.workgroup_count = array<i64: 4, 1, 1>,
      kiln.workgroup_size = array<i64: 64, 1, 1>,
      kiln.shared_memory_bytes = 0 : i64} {
    %wg = rocdl.workgroup.id.x : i32
    %tid = rocdl.workitem.id.x : i32
    %c64 = llvm.mlir.constant(64 : i32) : i32
    %base = llvm.mul %wg, %c64 : i32
    %i = llvm.add %base, %tid : i32
    %pa = llvm.getelementptr inbounds %a[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xf32>
    %pb = llvm.getelementptr inbounds %b[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xf32>
    %pc = llvm.getelementptr inbounds %c[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xf32>
    %x = llvm.load %pa {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %y = llvm.load %pb {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %s = llvm.fadd %x, %y : vector<4xf32>
    %e = llvm.intr.exp(%s) : (vector<4xf32>) -> vector<4xf32>
    llvm.store %e, %pc {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
    llvm.return
  }
}

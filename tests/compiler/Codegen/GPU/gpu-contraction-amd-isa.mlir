// The contraction recipe on AMD matrix cores, the default for f16 and bf16
// on every chip that has them: MFMA 16x16x16 (gfx90a, gfx942), MFMA
// 16x16x32 (gfx950), WMMA on RDNA 3 (gfx1100) and RDNA 4 (gfx1201). A and B
// K slices are staged in LDS with 128-bit global loads and 128-bit LDS
// stores, fragments are read from LDS by the layouts of the table that
// tests/compiler/unit/MatrixIntrinsicsTest.cpp checks against AMD's
// documented layouts, and the truncating epilogue runs on the accumulators.
// No AMD GPU runs these here: they are verified at the ISA level (the
// instruction, the LDS staging, no scratch and no spills, the LDS size the
// strategy planned), and the same recipe's tiling runs on NVIDIA GPUs
// through mma.sync.
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx90a" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx90a | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx90a | FileCheck %s --check-prefixes=ISA,CDNA,MFMA16
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx942" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | FileCheck %s --check-prefixes=ISA,CDNA,MFMA16
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx950" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx950 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx950 | FileCheck %s --check-prefixes=ISA,CDNA,MFMA32
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx1100" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 | FileCheck %s --check-prefixes=ISA,RDNA,WMMA
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx1201" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1201 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1201 | FileCheck %s --check-prefixes=ISA,RDNA,WMMA
// The instruction in the IR, per chip: the operand vectors carry the
// table's element counts (4 or 8 per lane on CDNA; 16 on RDNA 3, whose half
// waves repeat A and B; 8 on RDNA 4).
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx942" | FileCheck %s --check-prefix=IR942
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx950" | FileCheck %s --check-prefix=IR950
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx1100" | FileCheck %s --check-prefix=IR1100
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx1201" | FileCheck %s --check-prefix=IR1201

// 128x128 output in 64x64 tiles of 2x2 subgroups (each 32x32: 2x2
// instruction tiles), K = 64 in two LDS slices of 32: 16 instructions of
// K = 16 (8 of K = 32 on gfx950). LDS: A 64x(32+8) and B 32x(64+8) f16 =
// 9728 bytes.
// IR942-LABEL: llvm.func @matmul_f16(
// IR942: rocdl.mfma.f32.16x16x16f16 {{.*}} : (vector<4xf16>, vector<4xf16>, vector<4xf32>
// IR950-LABEL: llvm.func @matmul_f16(
// IR950: rocdl.mfma.f32.16x16x32.f16 {{.*}} : (vector<8xf16>, vector<8xf16>, vector<4xf32>
// IR1100-LABEL: llvm.func @matmul_f16(
// IR1100: rocdl.wmma.f32.16x16x16.f16 {{.*}} : (vector<16xf16>, vector<16xf16>, vector<8xf32>
// IR1201-LABEL: llvm.func @matmul_f16(
// IR1201: rocdl.wmma.f32.16x16x16.f16 {{.*}} : (vector<8xf16>, vector<8xf16>, vector<8xf32>
// ISA-LABEL: matmul_f16:
// CDNA: global_load_dwordx4
// CDNA: ds_write_b128
// RDNA: global_load_b128
// RDNA: ds_store_b128
// ISA: s_barrier
// MFMA16-COUNT-16: v_mfma_f32_16x16x16{{_?}}f16
// MFMA32-COUNT-8: v_mfma_f32_16x16x32_f16
// WMMA-COUNT-16: v_wmma_f32_16x16x16_f16
// ISA-NOT: v_{{mfma|wmma}}
// ISA: s_endpgm
// ISA: .amdhsa_group_segment_fixed_size 9728
// ISA: .amdhsa_private_segment_fixed_size 0
// ISA: ; ScratchSize: 0
func.func @matmul_f16(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>) -> tensor<128x128xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x64xf16>, tensor<64x128xf16>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  %e2 = tensor.empty() : tensor<128x128xf16>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<128x128xf32>) outs(%e2 : tensor<128x128xf16>) {
  ^bb0(%x: f32, %o: f16):
    %y = arith.truncf %x : f32 to f16
    linalg.yield %y : f16
  } -> tensor<128x128xf16>
  return %t : tensor<128x128xf16>
}

// bf16: the same shapes through the bf16 forms (bf16_1k on gfx90a).
// IR942-LABEL: llvm.func @matmul_bf16(
// IR942: rocdl.mfma.f32.16x16x16bf16.1k {{.*}} : (vector<4xi16>, vector<4xi16>, vector<4xf32>
// IR950-LABEL: llvm.func @matmul_bf16(
// IR950: rocdl.mfma.f32.16x16x32.bf16 {{.*}} : (vector<8xbf16>, vector<8xbf16>, vector<4xf32>
// IR1100-LABEL: llvm.func @matmul_bf16(
// IR1100: rocdl.wmma.f32.16x16x16.bf16 {{.*}} : (vector<16xi16>, vector<16xi16>, vector<8xf32>
// IR1201-LABEL: llvm.func @matmul_bf16(
// IR1201: rocdl.wmma.f32.16x16x16.bf16 {{.*}} : (vector<8xi16>, vector<8xi16>, vector<8xf32>
// ISA-LABEL: matmul_bf16:
// ISA: s_barrier
// MFMA16-COUNT-16: v_mfma_f32_16x16x16{{_?}}bf16
// MFMA32-COUNT-8: v_mfma_f32_16x16x32_bf16
// WMMA-COUNT-16: v_wmma_f32_16x16x16_bf16
// ISA-NOT: v_{{mfma|wmma}}
// ISA: s_endpgm
// ISA: .amdhsa_group_segment_fixed_size 9728
// ISA: .amdhsa_private_segment_fixed_size 0
// ISA: ; ScratchSize: 0
func.func @matmul_bf16(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x64xbf16>, tensor<64x128xbf16>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %m : tensor<128x128xf32>
}

// A 64x32 output that 64x64 tiles do not divide: 32x32 tiles of one
// subgroup (2 workgroups), K = 128 in four slices of 8 instructions of K =
// 16 (4 of K = 32) each, in a loop. LDS: A 32x40 and B 32x40 f16 = 5120
// bytes.
// ISA-LABEL: matmul_small:
// MFMA16-COUNT-8: v_mfma_f32_16x16x16{{_?}}f16
// MFMA32-COUNT-4: v_mfma_f32_16x16x32_f16
// WMMA-COUNT-8: v_wmma_f32_16x16x16_f16
// ISA: s_endpgm
// ISA: .amdhsa_group_segment_fixed_size 5120
// ISA: .amdhsa_private_segment_fixed_size 0
// ISA: ; ScratchSize: 0
func.func @matmul_small(%a: tensor<64x128xf16>, %b: tensor<128x32xf16>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf16>, tensor<128x32xf16>) outs(%f : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

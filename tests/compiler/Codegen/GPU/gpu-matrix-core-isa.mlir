// Matmuls with the matrix-core strategy compile to MFMA (CDNA) and WMMA
// (RDNA 3) instructions through amdgpu.mfma / amdgpu.wmma, without scratch.
// There is no AMD GPU to run them on: these kernels are verified at the
// ISA level only (instruction selection, register use, no spills).
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx942 matrix-cores=true" | FileCheck %s --check-prefix=IR
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx942 matrix-cores=true" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | FileCheck %s --check-prefix=MFMA
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx90a matrix-cores=true" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx90a | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx90a | FileCheck %s --check-prefix=MFMA
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx950 matrix-cores=true" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx950 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx950 | FileCheck %s --check-prefix=MFMA
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx1100 matrix-cores=true" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 | FileCheck %s --check-prefix=WMMA

// K = 128: eight 16x16x16 steps per 16x16 output tile, 8 workgroups of
// one wave (64 lanes on CDNA, 32 on RDNA).
// IR-LABEL: llvm.func @matmul_f16(
// IR-SAME: kiln.workgroup_count = array<i64: 8, 1, 1>, kiln.workgroup_size = array<i64: 64, 1, 1>
// IR: rocdl.mfma.f32.16x16x16f16
// MFMA-LABEL: matmul_f16:
// MFMA-COUNT-8: v_mfma_f32_16x16x16{{_?}}f16
// MFMA: s_endpgm
// MFMA: .amdhsa_private_segment_fixed_size 0
// MFMA: .vgpr_spill_count: 0
// WMMA-LABEL: matmul_f16:
// WMMA-COUNT-8: v_wmma_f32_16x16x16_f16
// WMMA: s_endpgm
// WMMA: .amdhsa_private_segment_fixed_size 0
// WMMA: .vgpr_spill_count: 0
func.func @matmul_f16(%a: tensor<64x128xf16>, %b: tensor<128x32xf16>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf16>, tensor<128x32xf16>) outs(%f : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

// The contraction recipe's MFMA form on CDNA (wave64), selected with
// --rocm-matrix-cores (matrix-cores=true): 2x2 waves per workgroup, A and B
// K slices staged in LDS with 128-bit global loads and ds_write_b128,
// fragments read from LDS by the MFMA layout of the table that
// tests/compiler/unit/MatrixIntrinsicsTest.cpp checks against AMD's
// documented layout, the truncating epilogue on the accumulators. No AMD GPU
// runs it here: verified at the ISA level (and the same recipe's tiling runs
// on NVIDIA GPUs through mma.sync).
// RUN: kiln-opt %s --kiln-gpu-select-strategy="subgroup-size=64 chip=gfx942 matrix-cores=true" | FileCheck %s --check-prefix=STRATEGY
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx942 matrix-cores=true" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | FileCheck %s --check-prefix=ISA
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx90a matrix-cores=true" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx90a | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx90a | FileCheck %s --check-prefix=ISA
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx950 matrix-cores=true" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx950 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx950 | FileCheck %s --check-prefix=ISA
// Without matrix cores the generic strategy stays.
// RUN: kiln-opt %s --kiln-gpu-select-strategy="subgroup-size=64 chip=gfx942" | FileCheck %s --check-prefix=OFF

// STRATEGY: intrinsic = "mfma_f32_16x16x16_f16", k_tile = 32 : i64, kind = "contraction"
// STRATEGY-SAME: subgroup_grid = array<i64: 2, 2>
// STRATEGY-SAME: workgroup_size = array<i64: 256, 1, 1>, workgroup_tile = array<i64: 64, 64>
// OFF: kind = "matmul"
// ISA-LABEL: matmul_f16:
// ISA: global_load_dwordx4
// ISA: ds_write_b128
// ISA: s_barrier
// ISA: ds_read
// ISA-COUNT-8: v_mfma_f32_16x16x16{{_?}}f16
// ISA: s_barrier
// ISA-COUNT-8: v_mfma_f32_16x16x16{{_?}}f16
// ISA: s_endpgm
// ISA: .amdhsa_private_segment_fixed_size 0
// ISA: .vgpr_spill_count: 0
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

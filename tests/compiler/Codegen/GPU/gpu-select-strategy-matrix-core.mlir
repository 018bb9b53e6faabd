// Contractions on AMD matrix cores (the default): f16 and bf16 inputs with
// an f32 accumulator get the contraction recipe with the chip's instruction
// (MFMA 16x16x16 on gfx90a/gfx942, 16x16x32 on gfx950, WMMA on gfx11 and
// gfx12), 32x32 tiles of one subgroup here since 64 does not divide N.
// Other types, odd sizes and f16 accumulators keep the generic matmul
// strategy; so does everything with matrix-cores=false or on a chip
// without matrix cores.
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=64 chip=gfx942" | FileCheck %s --check-prefixes=CHECK,MFMA
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=64 chip=gfx90a" | FileCheck %s --check-prefixes=CHECK,MFMA
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=64 chip=gfx950" | FileCheck %s --check-prefixes=CHECK,MFMA950
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=gfx1100" | FileCheck %s --check-prefixes=CHECK,WMMA11
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=gfx1201" | FileCheck %s --check-prefixes=CHECK,WMMA12
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=64 chip=gfx942 matrix-cores=false" | FileCheck %s --check-prefix=NONE
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=gfx1030" | FileCheck %s --check-prefix=NONE
// (NVIDIA chips take the recipe with mma.sync: gpu-select-strategy-contraction.mlir.)

// CHECK-LABEL: func.func @matmul_f16
// MFMA-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 64, subgroup_size = 64, workgroup_tile = [32, 32, 0], workgroup_count = 2, intrinsic = mfma_f32_16x16x16_f16, subgroup_grid = [1, 1], k_tile = 32>
// MFMA950-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 64, subgroup_size = 64, workgroup_tile = [32, 32, 0], workgroup_count = 2, intrinsic = mfma_f32_16x16x32_f16, subgroup_grid = [1, 1], k_tile = 32>
// WMMA11-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 32, subgroup_size = 32, workgroup_tile = [32, 32, 0], workgroup_count = 2, intrinsic = wmma_gfx11_f32_16x16x16_f16, subgroup_grid = [1, 1], k_tile = 32>
// WMMA12-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 32, subgroup_size = 32, workgroup_tile = [32, 32, 0], workgroup_count = 2, intrinsic = wmma_gfx12_f32_16x16x16_f16, subgroup_grid = [1, 1], k_tile = 32>
// NONE-LABEL: func.func @matmul_f16
// NONE-SAME: kind = matmul{{[,>]}}
// NONE-NOT: intrinsic
func.func @matmul_f16(%a: tensor<64x128xf16>, %b: tensor<128x32xf16>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf16>, tensor<128x32xf16>) outs(%f : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

// -----

// Enough 128x128 tiles (16 x 16): 2x2 subgroups of 64x64, except on RDNA 3,
// whose WMMA fragments repeat the operands in both half-waves: 4x2
// subgroups of 32x64 there (8 waves), so that fragments and accumulators
// leave room in the 256 VGPRs (2x2 took 243-256 and spilled for some
// shapes).
// CHECK-LABEL: func.func @large_f16
// MFMA-SAME: workgroup_size = 256, subgroup_size = 64, workgroup_tile = [128, 128, 0], workgroup_count = 256, intrinsic = mfma_f32_16x16x16_f16, subgroup_grid = [2, 2]
// WMMA11-SAME: workgroup_size = 256, subgroup_size = 32, workgroup_tile = [128, 128, 0], workgroup_count = 256, intrinsic = wmma_gfx11_f32_16x16x16_f16, subgroup_grid = [4, 2]
// WMMA12-SAME: workgroup_size = 128, subgroup_size = 32, workgroup_tile = [128, 128, 0], workgroup_count = 256, intrinsic = wmma_gfx12_f32_16x16x16_f16, subgroup_grid = [2, 2]
// NONE-LABEL: func.func @large_f16
// NONE-SAME: kind = matmul{{[,>]}}
func.func @large_f16(%a: tensor<2048x64xf16>, %b: tensor<64x2048xf16>) -> tensor<2048x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2048x64xf16>, tensor<64x2048xf16>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %r : tensor<2048x2048xf32>
}

// -----

// 256x256 bf16 with a batch: 64x64 tiles of 2x2 subgroups, one batch per
// workgroup row.
// CHECK-LABEL: func.func @batch_matmul_bf16
// CHECK-SAME: kind = contraction{{[,>]}}
// CHECK-SAME: workgroup_tile = [1, 64, 64, 0], workgroup_count = 32,
// MFMA-SAME: intrinsic = mfma_f32_16x16x16_bf16{{[,>]}}
// MFMA950-SAME: intrinsic = mfma_f32_16x16x32_bf16{{[,>]}}
// WMMA11-SAME: intrinsic = wmma_gfx11_f32_16x16x16_bf16{{[,>]}}
// WMMA12-SAME: intrinsic = wmma_gfx12_f32_16x16x16_bf16{{[,>]}}
// CHECK-SAME: subgroup_grid = [2, 2]
// NONE-LABEL: func.func @batch_matmul_bf16
// NONE-NOT: intrinsic
func.func @batch_matmul_bf16(%a: tensor<2x256x64xbf16>, %b: tensor<2x64x256xbf16>) -> tensor<2x256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x256x256xf32>) -> tensor<2x256x256xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x256x64xbf16>, tensor<2x64x256xbf16>) outs(%f : tensor<2x256x256xf32>) -> tensor<2x256x256xf32>
  return %r : tensor<2x256x256xf32>
}

// -----

// Not for matrix cores: f32 inputs, sizes that 32x32x32 tiles do not
// divide, an f16 accumulator. A matmul whose result feeds an elementwise op
// takes the recipe with the op as its epilogue.
// CHECK-LABEL: func.func @matmul_f32
// CHECK-SAME: kind = matmul{{[,>]}}
// CHECK-NOT: intrinsic
// CHECK-LABEL: func.func @matmul_odd
// CHECK-SAME: kind = matmul{{[,>]}}
// CHECK-NOT: intrinsic
// CHECK-LABEL: func.func @matmul_f16_acc
// CHECK-SAME: kind = matmul{{[,>]}}
// CHECK-NOT: intrinsic
// CHECK-LABEL: func.func @matmul_relu
// CHECK-SAME: kind = contraction{{[,>]}}
// CHECK-SAME: intrinsic =
// NONE-LABEL: func.func @matmul_relu
// NONE-NOT: intrinsic
func.func @matmul_f32(%a: tensor<64x128xf32>, %b: tensor<128x32xf32>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x32xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}
func.func @matmul_odd(%a: tensor<64x120xf16>, %b: tensor<120x32xf16>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x120xf16>, tensor<120x32xf16>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}
func.func @matmul_f16_acc(%a: tensor<64x128xf16>, %b: tensor<128x32xf16>, %c: tensor<64x32xf16>) -> tensor<64x32xf16> {
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf16>, tensor<128x32xf16>) outs(%c : tensor<64x32xf16>) -> tensor<64x32xf16>
  return %r : tensor<64x32xf16>
}
func.func @matmul_relu(%a: tensor<64x128xf16>, %b: tensor<128x32xf16>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<64x128xf16>, tensor<128x32xf16>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

// Matmuls on AMD matrix cores: f16 x f16 -> f32 with every size a multiple
// of 16 gets the chip's 16x16x16 instruction, one subgroup per 16x16 output
// tile. Other chips, types and shapes keep the generic matmul strategy.
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=64 chip=gfx942 matrix-cores=true" | FileCheck %s --check-prefix=MFMA
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=64 chip=gfx90a matrix-cores=true" | FileCheck %s --check-prefix=MFMA
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=gfx1100 matrix-cores=true" | FileCheck %s --check-prefix=WMMA
// (NVIDIA chips take the contraction recipe for these: gpu-select-strategy-contraction.mlir.)
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=64" | FileCheck %s --check-prefix=NONE
// Opt-in only (--rocm-matrix-cores): without matrix-cores=true gfx942 keeps the generic strategy.
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=64 chip=gfx942" | FileCheck %s --check-prefix=NONE

// MFMA-LABEL: func.func @matmul_f16
// MFMA-SAME: kiln.gpu_strategy = {intrinsic = "mfma_f32_16x16x16_f16", kind = "matmul", reduction = "thread", reduction_vector = 1 : i64, root = "linalg.matmul", subgroup_size = 64 : i64, thread_tile = 1 : i64, workgroup_count = array<i64: 8, 1, 1>, workgroup_size = array<i64: 64, 1, 1>, workgroup_tile = array<i64: 16, 16, 0>}
// WMMA-LABEL: func.func @matmul_f16
// WMMA-SAME: kiln.gpu_strategy = {intrinsic = "wmma_f32_16x16x16_f16", kind = "matmul", reduction = "thread", reduction_vector = 1 : i64, root = "linalg.matmul", subgroup_size = 32 : i64, thread_tile = 1 : i64, workgroup_count = array<i64: 8, 1, 1>, workgroup_size = array<i64: 32, 1, 1>, workgroup_tile = array<i64: 16, 16, 0>}
// NONE-LABEL: func.func @matmul_f16
// NONE-NOT: intrinsic
// NONE-SAME: kind = "matmul"
func.func @matmul_f16(%a: tensor<64x128xf16>, %b: tensor<128x32xf16>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf16>, tensor<128x32xf16>) outs(%f : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

// -----

// Not for matrix cores: f32 inputs, a size that is not a multiple of 16, an
// f16 accumulator, and a matmul whose result feeds an elementwise op.
// MFMA-LABEL: func.func @matmul_f32
// MFMA-NOT: intrinsic
// MFMA-SAME: kind = "matmul"
// MFMA-LABEL: func.func @matmul_odd
// MFMA-NOT: intrinsic
// MFMA-SAME: kind = "matmul"
// MFMA-LABEL: func.func @matmul_f16_acc
// MFMA-NOT: intrinsic
// MFMA-SAME: kind = "matmul"
// MFMA-LABEL: func.func @matmul_relu
// MFMA-NOT: intrinsic
// MFMA-SAME: kind = "matmul"
// WMMA-LABEL: func.func @matmul_f32
// WMMA-NOT: intrinsic
// WMMA-SAME: kind = "matmul"
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

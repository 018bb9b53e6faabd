// RUN: kiln-opt %s --split-input-file --kiln-host-select-strategy=vector-width=128 | FileCheck %s --check-prefix=SSE
// RUN: kiln-opt %s --split-input-file --kiln-host-select-strategy=vector-width=256 | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s --split-input-file --kiln-host-select-strategy=vector-width=512 | FileCheck %s --check-prefix=AVX512
// RUN: kiln-opt %s --split-input-file --kiln-host-select-strategy=vector-width=0 | FileCheck %s --check-prefix=SCALAR

// The register tile of a matmul: rows x (2 registers) of accumulators, K
// step 1. 6 rows fit in the 16 registers of SSE2/AVX2 (12 accumulators, 2
// of B, a broadcast of A), 8 in the 32 of AVX-512.
// SSE-LABEL: func.func @matmul
// SSE-SAME: vector_width = 128, vector_sizes = [6, 8, 1]>
// AVX2-LABEL: func.func @matmul
// AVX2-SAME: vector_width = 256, vector_sizes = [6, 16, 1]>
// AVX512-LABEL: func.func @matmul
// AVX512-SAME: vector_width = 512, vector_sizes = [8, 32, 1]>
// Width 0: no vectorization, nothing recorded.
// SCALAR-LABEL: func.func @matmul
// SCALAR-SAME: workgroup_count = [{{[0-9, ]+}}]>
// SCALAR-NOT: vector_
func.func @matmul(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// -----

// Batch dims get 1; lanes follow the widest element type (f64: half as many).
// SSE-LABEL: func.func @batch_matmul_f64
// SSE-SAME: vector_sizes = [1, 6, 4, 1]>
// AVX512-LABEL: func.func @batch_matmul_f64
// AVX512-SAME: vector_sizes = [1, 8, 16, 1]>
func.func @batch_matmul_f64(%a: tensor<4x64x32xf64>, %b: tensor<4x32x64xf64>) -> tensor<4x64x64xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x64x64xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<4x64x64xf64>) -> tensor<4x64x64xf64>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xf64>, tensor<4x32x64xf64>) outs(%f : tensor<4x64x64xf64>) -> tensor<4x64x64xf64>
  return %r : tensor<4x64x64xf64>
}

// -----

// Elementwise: one register along the innermost loop.
// SSE-LABEL: func.func @add
// SSE-SAME: vector_sizes = [1, 4]>
// AVX2-LABEL: func.func @add
// AVX2-SAME: vector_sizes = [1, 8]>
// AVX512-LABEL: func.func @add
// AVX512-SAME: vector_sizes = [1, 16]>
func.func @add(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %e = tensor.empty() : tensor<512x512xf32>
  %r = linalg.add ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}

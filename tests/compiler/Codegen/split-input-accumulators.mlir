// RUN: kiln-opt %s --split-input-file --kiln-split-input-accumulators | FileCheck %s

// A matmul accumulating into a kernel argument becomes a matmul from zero
// plus an elementwise add of the argument.
// CHECK-LABEL: func.func @matmul_into_argument
// CHECK-SAME: (%[[A:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<4x16xf32>, %[[C:.*]]: tensor<8x16xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<8x16xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[F]] : tensor<8x16xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[C]] : tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK: arith.addf
// CHECK: return %[[R]]
func.func @matmul_into_argument(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// Integers add with addi.
// CHECK-LABEL: func.func @batch_matmul_i32
// CHECK: linalg.fill
// CHECK: linalg.batch_matmul
// CHECK: arith.addi
func.func @batch_matmul_i32(%a: tensor<2x3x5xi32>, %b: tensor<2x5x4xi32>, %c: tensor<2x3x4xi32>) -> tensor<2x3x4xi32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x5xi32>, tensor<2x5x4xi32>) outs(%c : tensor<2x3x4xi32>) -> tensor<2x3x4xi32>
  return %r : tensor<2x3x4xi32>
}

// -----

// An accumulator made inside the kernel is left alone.
// CHECK-LABEL: func.func @filled_accumulator
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul
// CHECK-NOT: linalg.generic
func.func @filled_accumulator(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

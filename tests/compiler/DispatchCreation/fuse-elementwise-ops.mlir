// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise-ops))' | FileCheck %s

// Named elementwise ops (add, exp, broadcast) fuse into one generic.
// CHECK-LABEL: func.func @chain
// CHECK:         %[[G:.+]] = linalg.generic
// CHECK-SAME:        ins(%{{.+}}, %{{.+}} : tensor<4x16xf32>, tensor<16xf32>)
// CHECK:           arith.addf
// CHECK:           math.exp
// CHECK:           linalg.yield
// CHECK-NEXT:    } -> tensor<4x16xf32>
// CHECK:         return %[[G]]
func.func @chain(%x: tensor<4x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %bb = linalg.broadcast ins(%b : tensor<16xf32>) outs(%e : tensor<4x16xf32>) dimensions = [0]
  %add = linalg.add ins(%x, %bb : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %exp = linalg.exp ins(%add : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %exp : tensor<4x16xf32>
}

// -----

// A producer with two users is not fused (it would be computed twice); the
// matmul and the fill stay named.
// CHECK-LABEL: func.func @shared_producer
// CHECK:         %[[N:.+]] = linalg.generic
// CHECK:           arith.negf
// CHECK:         linalg.fill
// CHECK:         linalg.matmul ins(%[[N]], %[[N]]
// CHECK:         linalg.generic {{.*}} ins(%[[N]]
// CHECK:           math.exp
func.func @shared_producer(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %n = linalg.negf ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%n, %n : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %exp = linalg.exp ins(%n : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %mm, %exp : tensor<4x4xf32>, tensor<4x4xf32>
}

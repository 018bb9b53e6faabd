// RUN: kiln-opt %s --kiln-decompose-aggregated-ops | FileCheck %s

// linalg.softmax becomes a max reduction, exp(x - max), a sum reduction and
// a division, each a linalg op that dispatch creation can fuse.
// CHECK-LABEL: func.func @softmax
//   CHECK-NOT:   linalg.softmax
//       CHECK:   linalg.fill
//       CHECK:   linalg.generic
//  CHECK-SAME:     iterator_types = ["parallel", "reduction"]
//       CHECK:     arith.maxnumf
//       CHECK:   linalg.generic
//       CHECK:     arith.subf
//       CHECK:     math.exp
//       CHECK:   linalg.generic
//       CHECK:     arith.addf
//       CHECK:   linalg.generic
//       CHECK:     arith.divf
func.func @softmax(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %e = tensor.empty() : tensor<2x16xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<2x16xf32>)
                                   outs(%e : tensor<2x16xf32>) -> tensor<2x16xf32>
  return %r : tensor<2x16xf32>
}

// Ops that are not aggregates are left alone.
// CHECK-LABEL: func.func @plain
//       CHECK:   linalg.matmul
func.func @plain(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>)
                     outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

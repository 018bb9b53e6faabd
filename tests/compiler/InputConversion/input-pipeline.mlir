// RUN: kiln-opt %s --split-input-file --kiln-input-pipeline | FileCheck %s

// tosa lowers to linalg (named and generic) and tensor ops; a tosa.reshape
// becomes a tensor.expand_shape (a host alias later).
// CHECK-LABEL: func.func @tosa_ops
// CHECK-NOT: tosa.
// CHECK: linalg.generic
// CHECK:   arith.addf
// CHECK: linalg.generic
// CHECK:   math.exp
// CHECK: tensor.expand_shape {{.*}} into tensor<1x2x3xf32>
// CHECK: linalg.batch_matmul
// CHECK: linalg.transpose
// CHECK-NOT: tosa.
func.func @tosa_ops(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %w: tensor<1x3x4xf32>)
    -> (tensor<2x3xf32>, tensor<1x2x4xf32>, tensor<3x2xf32>) {
  %0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = tosa.exp %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = tosa.const_shape {values = dense<[1, 2, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %r = tosa.reshape %1, %s : (tensor<2x3xf32>, !tosa.shape<3>) -> tensor<1x2x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mm = tosa.matmul %r, %w, %zp, %zp : (tensor<1x2x3xf32>, tensor<1x3x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %t = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %1, %mm, %t : tensor<2x3xf32>, tensor<1x2x4xf32>, tensor<3x2xf32>
}

// -----

// arith/math on whole tensors become linalg.generic; unreachable private
// functions are dropped.
// CHECK-NOT: func.func private @unused
// CHECK-LABEL: func.func @tensor_arith
// CHECK: linalg.generic
// CHECK:   arith.mulf
// CHECK:   math.tanh
func.func private @unused(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func @tensor_arith(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %a, %a : tensor<4xf32>
  %1 = math.tanh %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

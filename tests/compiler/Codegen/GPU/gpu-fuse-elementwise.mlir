// RUN: kiln-opt %s --kiln-gpu-fuse-elementwise | FileCheck %s

// exp(x - max) is computed inside the sum (and again inside the division)
// instead of being stored between them; the named reduce and the
// elementwise ops become generics, the matmul keeps its name.
// CHECK-LABEL: func.func @softmax_tail
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   arith.subf
// CHECK:   math.exp
// CHECK:   arith.addf
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1, %[[SUM]] :
// CHECK:   math.exp
// CHECK:   arith.divf
// CHECK-NOT: linalg.generic
func.func @softmax_tail(%x: tensor<4x64xf32>, %max: tensor<4xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x64xf32>
  %exp = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4x64xf32>, tensor<4xf32>) outs(%e2 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%exp : tensor<4x64xf32>) outs(%s0 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<4x64xf32>, tensor<4xf32>) outs(%e2 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %0 = arith.divf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// CHECK-LABEL: func.func @matmul_stays_named
// CHECK: linalg.matmul
func.func @matmul_stays_named(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-host-convert-to-bindings | FileCheck %s

// Arguments then results become memref bindings; inputs are read through
// restrict tensor views, results are materialized into their binding.
// CHECK-LABEL: func.func @add(
// CHECK-SAME: %[[A:.+]]: memref<4x8xf32>, %[[B:.+]]: memref<8xf32>, %[[OUT:.+]]: memref<4x8xf32>) {
// CHECK-DAG: %[[TA:.+]] = bufferization.to_tensor %[[A]] restrict : memref<4x8xf32> to tensor<4x8xf32>
// CHECK-DAG: %[[TB:.+]] = bufferization.to_tensor %[[B]] restrict : memref<8xf32> to tensor<8xf32>
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[TA]], %[[TB]] :
// CHECK: bufferization.materialize_in_destination %[[R]] in restrict writable %[[OUT]] : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK: return{{$}}
func.func @add(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Several results, one of them an argument, i1 elements.
// CHECK-LABEL: func.func @two(
// CHECK-SAME: %[[A:.+]]: memref<3xi1>, %[[O0:.+]]: memref<3xi1>, %[[O1:.+]]: memref<3xi1>) {
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[A]] restrict
// CHECK: bufferization.materialize_in_destination %[[T]] in restrict writable %[[O0]]
// CHECK: bufferization.materialize_in_destination %[[T]] in restrict writable %[[O1]]
func.func @two(%a: tensor<3xi1>) -> (tensor<3xi1>, tensor<3xi1>) {
  return %a, %a : tensor<3xi1>, tensor<3xi1>
}

// -----

// expected-error @+1 {{host kernel argument #0 must be a statically shaped tensor, found 'tensor<?xf32>'}}
func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}

// RUN: kiln-opt %s --kiln-dispatch-creation-pipeline | FileCheck %s

// Collectives are boundaries of dispatch creation: they stay in the host
// function between the dispatches, and elementwise producers and consumers
// on either side are never fused through them (the square before the
// all_reduce and the sqrt after it are two kernels).
// CHECK-LABEL: kiln.executable @around_collective_dispatch_0
// CHECK:         arith.mulf
// CHECK-NOT:     math.sqrt
// CHECK-LABEL: kiln.executable @around_collective_dispatch_1
// CHECK:         math.sqrt
// CHECK-LABEL: func.func @around_collective(
// CHECK-NEXT:    %[[D0:.*]] = kiln.dispatch @around_collective_dispatch_0::@around_collective_dispatch_0(%arg0)
// CHECK-NEXT:    %[[R:.*]] = kiln.collective all_reduce reduction = sum %[[D0]]
// CHECK-NEXT:    %[[D1:.*]] = kiln.dispatch @around_collective_dispatch_1::@around_collective_dispatch_1(%[[R]])
// CHECK-NEXT:    %[[G:.*]] = kiln.collective all_gather %[[D1]]
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[G]]
// CHECK-NEXT:    return %[[C]]
#map = affine_map<(d0) -> (d0)>
func.func @around_collective(%x: tensor<4xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %1 = kiln.collective all_reduce reduction = sum %0 over <@grid, axes = [0], shape = [2]> : tensor<4xf32> -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%1 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.sqrt %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %3 = kiln.collective all_gather %2 over <@grid, axes = [0], shape = [2]> : tensor<4xf32> -> tensor<2x4xf32>
  %4 = tensor.collapse_shape %3 [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  return %4 : tensor<8xf32>
}

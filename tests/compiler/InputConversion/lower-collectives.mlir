// RUN: kiln-opt %s --split-input-file --kiln-lower-collectives --verify-diagnostics | FileCheck %s

// all_reduce maps one to one; the grid is gone afterwards (channels carry
// its shape).
// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @all_reduce
// CHECK:         %[[R:.*]] = kiln.collective all_reduce reduction = avg %arg0 over <@grid, axes = [1, 0], shape = [2, 2]> : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK:         return %[[R]]
shard.grid @grid(shape = 2x2)
func.func @all_reduce(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [1, 0] reduction = average : tensor<4x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Gathering the outermost dimension: the rank-major result is already the
// concatenation, a collapse (host alias) names it.
// CHECK-LABEL: func.func @all_gather_outer
// CHECK:         %[[G:.*]] = kiln.collective all_gather %arg0 over <@grid, axes = [0], shape = [2]> : tensor<4x3xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[G]] {{\[\[}}0, 1], [2]] : tensor<2x4x3xf32> into tensor<8x3xf32>
// CHECK-NEXT:    return %[[C]]
shard.grid @grid(shape = 2)
func.func @all_gather_outer(%x: tensor<4x3xf32>) -> tensor<8x3xf32> {
  %0 = shard.all_gather %x on @grid grid_axes = [0] gather_axis = 0 : tensor<4x3xf32> -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// Gathering dimension 1: [N][4][3] rank-major, transposed to [4][N][3],
// collapsed to 4x6.
// CHECK-LABEL: func.func @all_gather_inner
// CHECK:         %[[G:.*]] = kiln.collective all_gather %arg0 over <@grid, axes = [0], shape = [2]> : tensor<4x3xf32> -> tensor<2x4x3xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[G]] : tensor<2x4x3xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [1, 0, 2]
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0], [1, 2]] : tensor<4x2x3xf32> into tensor<4x6xf32>
// CHECK-NEXT:    return %[[C]]
shard.grid @grid(shape = 2)
func.func @all_gather_inner(%x: tensor<4x3xf32>) -> tensor<4x6xf32> {
  %0 = shard.all_gather %x on @grid grid_axes = [0] gather_axis = 1 : tensor<4x3xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// Scattering dimension 1: split it into [N][3], move N outermost so chunk r
// is contiguous, then reduce-scatter.
// CHECK-LABEL: func.func @reduce_scatter_inner
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf32> into tensor<4x2x3xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[E]] : tensor<4x2x3xf32>) outs(%{{.*}} : tensor<2x4x3xf32>) permutation = [1, 0, 2]
// CHECK-NEXT:    %[[R:.*]] = kiln.collective reduce_scatter reduction = min %[[T]] over <@grid, axes = [1], shape = [3, 2]> : tensor<2x4x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]]
shard.grid @grid(shape = 3x2)
func.func @reduce_scatter_inner(%x: tensor<4x6xf32>) -> tensor<4x3xf32> {
  %0 = shard.reduce_scatter %x on @grid grid_axes = [1] reduction = min scatter_axis = 1 : tensor<4x6xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Outermost scatter: only an expand (host alias).
// CHECK-LABEL: func.func @reduce_scatter_outer
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [4, 2] : tensor<8xi32> into tensor<4x2xi32>
// CHECK-NEXT:    kiln.collective reduce_scatter reduction = prod %[[E]] over <@grid, axes = [0], shape = [4]> : tensor<4x2xi32> -> tensor<2xi32>
shard.grid @grid(shape = 4)
func.func @reduce_scatter_outer(%x: tensor<8xi32>) -> tensor<2xi32> {
  %0 = shard.reduce_scatter %x on @grid grid_axes = [0] reduction = product scatter_axis = 0 : tensor<8xi32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// all_to_all: split dimension 0 into [N][2] (already outermost), exchange,
// then concatenate the received chunks along dimension 1.
// CHECK-LABEL: func.func @all_to_all
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [2, 2, 6] : tensor<4x6xi32> into tensor<2x2x6xi32>
// CHECK-NEXT:    %[[X:.*]] = kiln.collective all_to_all %[[E]] over <@grid, axes = [0], shape = [2]> : tensor<2x2x6xi32> -> tensor<2x2x6xi32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x2x6xi32>) outs(%{{.*}} : tensor<2x2x6xi32>) permutation = [1, 0, 2]
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0], [1, 2]] : tensor<2x2x6xi32> into tensor<2x12xi32>
// CHECK-NEXT:    return %[[C]]
shard.grid @grid(shape = 2)
func.func @all_to_all(%x: tensor<4x6xi32>) -> tensor<2x12xi32> {
  %0 = shard.all_to_all %x on @grid grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<4x6xi32> -> tensor<2x12xi32>
  return %0 : tensor<2x12xi32>
}

// -----

// The root's multi-index [1, 2] over grid axes [0, 1] of a 2x3 grid is the
// group's rank 1 * 3 + 2 = 5.
// CHECK-LABEL: func.func @broadcast
// CHECK:         kiln.collective broadcast root = 5 %arg0 over <@grid, axes = [0, 1], shape = [2, 3]> : tensor<3xi1> -> tensor<3xi1>
shard.grid @grid(shape = 2x3)
func.func @broadcast(%x: tensor<3xi1>) -> tensor<3xi1> {
  %0 = shard.broadcast %x on @grid grid_axes = [0, 1] root = [1, 2] : (tensor<3xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// A group of one rank (axis of size 1) moves nothing.
// CHECK-LABEL: func.func @single_rank
// CHECK-NOT:     kiln.collective
// CHECK:         return %arg0
shard.grid @grid(shape = 1x2)
func.func @single_rank(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @widening(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{'shard.all_reduce' converts 'f32' to 'f64'; convert the operand first (collectives keep the element type)}}
  %0 = shard.all_reduce %x on @grid grid_axes = [0] : tensor<4xf32> -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

shard.grid @grid(shape = 2)
func.func @generic(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{reduction 'generic' of 'shard.all_reduce' is not supported; supported: sum, product, min, max, average, bitwise_and, bitwise_or, bitwise_xor}}
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = generic : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Bitwise reductions lower like the others (legality decides where they
// run: compiled collective kernels only).
// CHECK-LABEL: func.func @bitwise(
// CHECK:         kiln.collective all_reduce reduction = xor %{{.*}} over <@grid, axes = [0], shape = [2]>
shard.grid @grid(shape = 2)
func.func @bitwise(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = bitwise_xor : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// RUN: kiln-opt %s --split-input-file --kiln-host-select-strategy | FileCheck %s

// A big matmul feeding a fused bias+relu: the op producing the result is
// split into near-square tiles over both parallel loops, up to 256
// workgroups; the innermost tiled loop runs along x. Inside a workgroup the
// matmul is computed in 6x8 register tiles of accumulators (two 128-bit
// registers per row), one K step at a time.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK-SAME: kiln.host_strategy = #kiln.host_strategy<kind = matmul, root = "linalg.matmul",
// CHECK-SAME: tile_sizes = [16, 32], workgroup_count = [16, 16, 1], vector_width = 128, vector_sizes = [6, 8, 1]>
func.func @matmul_bias_relu(%a: tensor<256x128xf32>, %b: tensor<128x512xf32>, %bias: tensor<512xf32>) -> tensor<256x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x512xf32>) outs(%f : tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<256x512xf32>, tensor<512xf32>) outs(%e : tensor<256x512xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<256x512xf32>
  return %r : tensor<256x512xf32>
}

// -----

// A reduction along the innermost loop: only the parallel loop is split
// (tile size 0 for the reduction), so no two workgroups write one element.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: #kiln.host_strategy<kind = reduction, root = "linalg.reduce", tile_sizes = [4, 0], workgroup_count = [256, 1, 1], vector_width = 128, vector_sizes = [1, 4]>
func.func @row_sum(%a: tensor<1024x1024xf32>) -> tensor<1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %r = linalg.reduce ins(%a : tensor<1024x1024xf32>) outs(%f : tensor<1024xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<1024xf32>
}

// -----

// Convolutions split (at most three) outer parallel loops: batch and output
// rows/columns; never the filter window or input channels. They are not
// vectorized, so no register tile is recorded.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: #kiln.host_strategy<kind = conv, root = "linalg.conv_2d_nhwc_hwcf", tile_sizes = [2, 2, 4, 0, 0, 0, 0], workgroup_count = [8, 16, 2], vector_width = 128>
func.func @conv(%in: tensor<4x34x34x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<4x32x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32x32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32x32x32xf32>) -> tensor<4x32x32x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : tensor<4x34x34x16xf32>, tensor<3x3x16x32xf32>) outs(%f : tensor<4x32x32x32xf32>) -> tensor<4x32x32x32xf32>
  return %r : tensor<4x32x32x32xf32>
}

// -----

// Tiny elementwise work stays in one workgroup.
// CHECK-LABEL: func.func @tiny_add
// CHECK-SAME: #kiln.host_strategy<kind = elementwise, root = "linalg.add", workgroup_count = [1, 1, 1], vector_width = 128, vector_sizes = [1, 4]>
func.func @tiny_add(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.add ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Kernels with several results, results that are arguments, or results of
// ops without a tiling interface run as one workgroup.
// CHECK-LABEL: func.func @two_results
// CHECK-SAME: #kiln.host_strategy<kind = single, workgroup_count = [1, 1, 1], vector_width = 128>
func.func @two_results(%a: tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
  %e = tensor.empty() : tensor<1024x1024xf32>
  %r = linalg.add ins(%a, %a : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r, %a : tensor<1024x1024xf32>, tensor<1024x1024xf32>
}

// CHECK-LABEL: func.func @copy
// CHECK-SAME: <kind = single
func.func @copy(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  return %a : tensor<1024x1024xf32>
}

// CHECK-LABEL: func.func @concat
// CHECK-SAME: <kind = single
func.func @concat(%a: tensor<512x1024xf32>, %b: tensor<512x1024xf32>) -> tensor<1024x1024xf32> {
  %r = tensor.concat dim(0) %a, %b : (tensor<512x1024xf32>, tensor<512x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

// -----

// A row-fused kernel (the row sum and the division by it): the result runs
// over the root reduction's whole loop space, so the reduced loop is not
// split either; each workgroup owns whole rows.
// CHECK-LABEL: func.func @row_fused_normalize
// CHECK-SAME: <kind = reduction
// CHECK-SAME: tile_sizes = [{{[0-9]+}}, 0]
func.func @row_fused_normalize(%x: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<512xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<512xf32>) -> tensor<512xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<512x1024xf32>) outs(%s0 : tensor<512xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<512xf32>
  %e2 = tensor.empty() : tensor<512x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<512x1024xf32>, tensor<512xf32>) outs(%e2 : tensor<512x1024xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %0 = arith.divf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<512x1024xf32>
  return %r : tensor<512x1024xf32>
}

// RUN: kiln-opt %s --split-input-file --kiln-convolutions-to-matmuls | FileCheck %s

// f16 input and filter, f32 result: the im2col gather with the stride and
// dilation in its input map, both operands viewed as matrices, a matmul
// into the convolution's own (collapsed) init, the result expanded back.
// CHECK-DAG: #[[$PATCH:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d3 * 3, d2 * 2 + d4 * 3, d5)>
// CHECK-LABEL: func.func @f32_result
// CHECK-SAME: (%[[X:.*]]: tensor<1x20x20x8xf16>, %[[W:.*]]: tensor<3x3x8x16xf16>)
// CHECK: %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<1x7x7x16xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[$PATCH]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]] : tensor<1x20x20x8xf16>) outs(%{{.*}} : tensor<1x7x7x3x3x8xf16>)
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<1x7x7x3x3x8xf16> into tensor<49x72xf16>
// CHECK: %[[B:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1, 2], [3]] : tensor<3x3x8x16xf16> into tensor<72x16xf16>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[INIT]] {{\[\[}}0, 1, 2], [3]] : tensor<1x7x7x16xf32> into tensor<49x16xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<49x72xf16>, tensor<72x16xf16>) outs(%[[C]] : tensor<49x16xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 7, 7, 16]
// CHECK: return %[[R]]
// CHECK-NOT: linalg.conv_2d
func.func @f32_result(%x: tensor<1x20x20x8xf16>, %w: tensor<3x3x8x16xf16>) -> tensor<1x7x7x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<3> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x20x20x8xf16>, tensor<3x3x8x16xf16>) outs(%f : tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32>
  return %c : tensor<1x7x7x16xf32>
}

// -----

// bf16 result from a fill: the matmul accumulates into an f32 fill of the
// widened value, and the product is truncated once.
// CHECK-LABEL: func.func @bf16_result_fill
// CHECK: %[[V:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[V]] : f32) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x18xbf16>, tensor<18x4xbf16>) outs(%[[ACC]] : tensor<16x4xf32>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<16x4xf32>) outs(%{{.*}} : tensor<16x4xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: tensor.expand_shape %[[T]]
func.func @bf16_result_fill(%x: tensor<1x6x6x2xbf16>, %w: tensor<3x3x2x4xbf16>) -> tensor<1x4x4x4xbf16> {
  %one = arith.constant 1.0 : bf16
  %e = tensor.empty() : tensor<1x4x4x4xbf16>
  %f = linalg.fill ins(%one : bf16) outs(%e : tensor<1x4x4x4xbf16>) -> tensor<1x4x4x4xbf16>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x6x2xbf16>, tensor<3x3x2x4xbf16>) outs(%f : tensor<1x4x4x4xbf16>) -> tensor<1x4x4x4xbf16>
  return %c : tensor<1x4x4x4xbf16>
}

// -----

// An f16 init that is not a fill (an accumulation into an input): extended
// to f32 elementwise first.
// CHECK-LABEL: func.func @f16_accumulate
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<1x4x4x4xf16> into tensor<16x4xf16>
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<16x4xf16>) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK: arith.extf
// CHECK: linalg.matmul {{.*}} outs(%[[E]] : tensor<16x4xf32>)
// CHECK: arith.truncf
func.func @f16_accumulate(%x: tensor<1x6x6x2xf16>, %w: tensor<3x3x2x4xf16>, %acc: tensor<1x4x4x4xf16>) -> tensor<1x4x4x4xf16> {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x6x2xf16>, tensor<3x3x2x4xf16>) outs(%acc : tensor<1x4x4x4xf16>) -> tensor<1x4x4x4xf16>
  return %c : tensor<1x4x4x4xf16>
}

// -----

// Left alone: f32 convolutions (the targets' own kernels) and mixed types.
// CHECK-LABEL: func.func @f32_conv
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK-LABEL: func.func @mixed_types
// CHECK: linalg.conv_2d_nhwc_hwcf
func.func @f32_conv(%x: tensor<1x6x6x2xf32>, %w: tensor<3x3x2x4xf32>, %acc: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x6x2xf32>, tensor<3x3x2x4xf32>) outs(%acc : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}
func.func @mixed_types(%x: tensor<1x6x6x2xf16>, %w: tensor<3x3x2x4xbf16>, %acc: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x6x2xf16>, tensor<3x3x2x4xbf16>) outs(%acc : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}

// -----

// NCHW x FCHW, batch 1: the filter is the F x (C*KH*KW) matrix A, the
// patches (n, c, kh, kw, oh, ow) are B, and the F x (OH*OW) product is the
// output as it is.
// CHECK-DAG: #[[$NCHW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
// CHECK-LABEL: func.func @nchw_batch1
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[$NCHW]], {{.*}}]{{.*}} outs(%{{.*}} : tensor<1x2x3x3x4x4xf16>)
// CHECK: %[[B:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1, 2, 3], [4, 5]] : tensor<1x2x3x3x4x4xf16> into tensor<18x16xf16>
// CHECK: %[[A:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<8x2x3x3xf16> into tensor<8x18xf16>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<8x18xf16>, tensor<18x16xf16>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xf16>)
// CHECK: tensor.expand_shape %[[T]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 8, 4, 4]
func.func @nchw_batch1(%x: tensor<1x2x6x6xf16>, %w: tensor<8x2x3x3xf16>) -> tensor<1x8x4x4xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x8x4x4xf16>
  %f = linalg.fill ins(%zero : f16) outs(%e : tensor<1x8x4x4xf16>) -> tensor<1x8x4x4xf16>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x6x6xf16>, tensor<8x2x3x3xf16>) outs(%f : tensor<1x8x4x4xf16>) -> tensor<1x8x4x4xf16>
  return %c : tensor<1x8x4x4xf16>
}

// -----

// A batch: a batch_matmul of the filter broadcast over the images and the
// N x (C*KH*KW) x (OH*OW) patches, into the (collapsed) f32 init; the
// product is the NCHW output as it is.
// CHECK-LABEL: func.func @nchw_batch2
// CHECK: %[[B:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3], [4, 5]] : tensor<2x2x3x3x4x4xf16> into tensor<2x18x16xf16>
// CHECK: %[[A:.*]] = linalg.broadcast ins(%{{.*}} : tensor<8x18xf16>) outs(%{{.*}} : tensor<2x8x18xf16>) dimensions = [0]
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<2x8x4x4xf32> into tensor<2x8x16xf32>
// CHECK: %[[M:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<2x8x18xf16>, tensor<2x18x16xf16>) outs(%[[C]] : tensor<2x8x16xf32>)
// CHECK: tensor.expand_shape %[[M]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 8, 4, 4]
// CHECK-NOT: linalg.transpose
func.func @nchw_batch2(%x: tensor<2x2x6x6xf16>, %w: tensor<8x2x3x3xf16>, %acc: tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x2x6x6xf16>, tensor<8x2x3x3xf16>) outs(%acc : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  return %c : tensor<2x8x4x4xf32>
}

// -----

// The convolution's elementwise consumers (a per-channel bias, then a ReLU)
// move onto the product's F x (OH*OW) shape, the bias map renamed from
// (n, f, oh, ow) -> (f) to (f, p) -> (f); the result is expanded once, at
// the end.
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$CH:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @nchw_bias_relu
// CHECK: %[[M:.*]] = linalg.matmul
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xf16>)
// CHECK: %[[B:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$CH]], #[[$ID2]]]{{.*}} ins(%[[T]], %{{.*}} : tensor<8x16xf16>, tensor<8xf16>)
// CHECK: arith.addf
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<8x16xf16>)
// CHECK: arith.maximumf
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 8, 4, 4]
// CHECK: return %[[E]]
func.func @nchw_bias_relu(%x: tensor<1x2x6x6xf16>, %w: tensor<8x2x3x3xf16>, %bias: tensor<8xf16>) -> tensor<1x8x4x4xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x8x4x4xf16>
  %f = linalg.fill ins(%zero : f16) outs(%e : tensor<1x8x4x4xf16>) -> tensor<1x8x4x4xf16>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x6x6xf16>, tensor<8x2x3x3xf16>) outs(%f : tensor<1x8x4x4xf16>) -> tensor<1x8x4x4xf16>
  %b = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (b)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %bias : tensor<1x8x4x4xf16>, tensor<8xf16>) outs(%e : tensor<1x8x4x4xf16>) {
  ^bb0(%v: f16, %k: f16, %o: f16):
    %s = arith.addf %v, %k : f16
    linalg.yield %s : f16
  } -> tensor<1x8x4x4xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<1x8x4x4xf16>) outs(%e : tensor<1x8x4x4xf16>) {
  ^bb0(%v: f16, %o: f16):
    %m = arith.maximumf %v, %zero : f16
    linalg.yield %m : f16
  } -> tensor<1x8x4x4xf16>
  return %r : tensor<1x8x4x4xf16>
}

// A relu before a padded convolution (the usual CNN block): the pad used to
// take the relu into its kernel, whose tile then had a dynamic shape that
// GPU codegen could not size ("cannot bound the size of the shared-memory
// temporary"). The pad now takes no producer: three kernels (relu, pad,
// convolution) for every target. tests/e2e/conv/relu_pad_conv_f32.mlir
// runs the same block.
// RUN: kiln-compile %s --target=cuda,rocm,host -o %t.vmfb
// RUN: kiln-dump %t.vmfb | FileCheck %s
// CHECK: executables (3):
func.func @main(%x: tensor<2x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x4x8x8xf32>) outs(%e : tensor<2x4x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x4x8x8xf32>
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x4x8x8xf32> to tensor<2x4x10x10xf32>
  %e2 = tensor.empty() : tensor<2x8x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<2x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %c : tensor<2x8x8x8xf32>
}

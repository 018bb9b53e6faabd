// A tensor.pad whose workgroup tiles can be all padding (the tiling guards
// them with scf.if + tensor.generate) compiles for the GPU targets: the guard
// goes (a pad of an empty slice is all padding), as it bufferized to buffers
// in two memory spaces. Before, `memory space not implemented yet` /
// `inconsistent memory space on then/else branches`. The host variant runs
// here: a 3x3 convolution of ones over 3 channels of ones, padded by 1.
// RUN: kiln-compile %s --target=cuda,rocm,host -o %t.vmfb
// RUN: kiln-run %t.vmfb --function=main --input=1x3x16x16xf32=1 --input=2x3x3x3xf32=1 | FileCheck %s
// REQUIRES: host-target, kiln-run
// CHECK: result[0]: 1x2x16x16xf32=[{{\[}}[12 18 18 18 18 18 18 18 18 18 18 18 18 18 18 12][18 27 27 27 27 27 27 27 27 27 27 27 27 27 27 18]

func.func @main(%x: tensor<1x3x16x16xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x3x16x16xf32> to tensor<1x3x18x18xf32>
  %e = tensor.empty() : tensor<1x2x16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x3x18x18xf32>, tensor<2x3x3x3xf32>) outs(%c : tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
  return %r : tensor<1x2x16x16xf32>
}

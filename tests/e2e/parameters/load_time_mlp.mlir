// Load-time parameters end to end: a two-layer MLP whose weights (f32, and
// an f16 scale) live in numpy archives, compiled once with the weights bound
// at compile time (--parameters) and once with them left for load time
// (--parameter-mode=load); kiln-run --parameters on `local` gives the same
// result for a compressed .npz, a plain .npz and two archives at once, and
// both equal numpy's.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/make_mlp_parameters.py %t
// RUN: kiln-compile %s --target=host --parameters=%t/all.npz -o %t/bound.vmfb
// RUN: kiln-compile %s --target=host --parameter-mode=load -o %t/load.vmfb
// RUN: kiln-run %t/bound.vmfb --input=@%t/x.npy --output=@%t/bound.npy \
// RUN:   --expected-output=@%t/expected.npy --atol=1e-4 --rtol=1e-4
// RUN: kiln-run %t/load.vmfb --input=@%t/x.npy --parameters=%t/all.npz \
// RUN:   --expected-output=@%t/bound.npy --atol=0 --rtol=0
// RUN: kiln-run %t/load.vmfb --input=@%t/x.npy --parameters=%t/stored.npz \
// RUN:   --expected-output=@%t/bound.npy --atol=0 --rtol=0
// RUN: kiln-run %t/load.vmfb --input=@%t/x.npy --parameters=%t/layer1.npz \
// RUN:   --parameters=%t/layer2.npz --expected-output=@%t/bound.npy --atol=0 --rtol=0
// The module without the weights is small; the bound one holds them.
// RUN: %python -c "import os, sys; b, l = (os.path.getsize(sys.argv[i]) for i in (1, 2)); sys.exit(0 if b - l >= 4 * (64 * 128 + 128 * 16) else 1)" %t/bound.vmfb %t/load.vmfb

func.func @main(%x: tensor<8x64xf32>,
                %w1: tensor<64x128xf32> {kiln.parameter = "layer1.weight"},
                %b1: tensor<128xf32> {kiln.parameter = "layer1.bias"},
                %w2: tensor<128x16xf32> {kiln.parameter = "layer2.weight"},
                %s: tensor<16xf16> {kiln.parameter = "layer2.scale"})
    -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x128xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<8x64xf32>, tensor<64x128xf32>)
                      outs(%f1 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %bb = linalg.broadcast ins(%b1 : tensor<128xf32>) outs(%e1 : tensor<8x128xf32>) dimensions = [0]
  %a1 = linalg.add ins(%m1, %bb : tensor<8x128xf32>, tensor<8x128xf32>)
                   outs(%e1 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %h = linalg.max ins(%a1, %f1 : tensor<8x128xf32>, tensor<8x128xf32>)
                  outs(%e1 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m2 = linalg.matmul ins(%h, %w2 : tensor<8x128xf32>, tensor<128x16xf32>)
                      outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %es = tensor.empty() : tensor<16xf32>
  %s32 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
      ins(%s : tensor<16xf16>) outs(%es : tensor<16xf32>) {
    ^bb0(%in: f16, %out: f32):
      %v = arith.extf %in : f16 to f32
      linalg.yield %v : f32
  } -> tensor<16xf32>
  %sb = linalg.broadcast ins(%s32 : tensor<16xf32>) outs(%e2 : tensor<8x16xf32>) dimensions = [0]
  %r = linalg.mul ins(%m2, %sb : tensor<8x16xf32>, tensor<8x16xf32>)
                  outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

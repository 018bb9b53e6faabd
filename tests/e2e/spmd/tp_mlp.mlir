// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py tp_mlp %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://2 --function=mlp \
// RUN:   --input=@%t/in0_%%r.npy --input=@%t/in1_%%r.npy --input=@%t/in2_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy --expected-output=@%t/out1_%%r.npy

// Tensor-parallel two-layer MLP: W1 split by columns and W2 by rows over 2
// ranks. The hidden activations are all-gathered along dimension 1 (first
// result); the partial second-layer products are reduce-scattered along
// dimension 0 (second result: the rows of this rank).
shard.grid @grid(shape = 2)
func.func @mlp(%x: tensor<4x5xf32>, %w1: tensor<5x3xf32>, %w2: tensor<3x3xf32>) -> (tensor<4x6xf32>, tensor<2x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<4x5xf32>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %zeros = arith.constant dense<0.0> : tensor<4x3xf32>
  %relu = arith.maximumf %h, %zeros : tensor<4x3xf32>
  %full = shard.all_gather %relu on @grid grid_axes = [0] gather_axis = 1 : tensor<4x3xf32> -> tensor<4x6xf32>
  %z = linalg.matmul ins(%relu, %w2 : tensor<4x3xf32>, tensor<3x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %rows = shard.reduce_scatter %z on @grid grid_axes = [0] reduction = sum scatter_axis = 0 : tensor<4x3xf32> -> tensor<2x3xf32>
  return %full, %rows : tensor<4x6xf32>, tensor<2x3xf32>
}

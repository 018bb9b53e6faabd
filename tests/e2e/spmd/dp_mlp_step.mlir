// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py dp_mlp_step %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://2 --function=step \
// RUN:   --input=@%t/in0_%%r.npy --input=@%t/in1_%%r.npy --input=@%t/in2_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy

// Data-parallel SGD step of a linear layer with MSE loss: each rank computes
// the gradient of its 4 samples, the gradients are averaged with all_reduce,
// and every rank applies the same update.
shard.grid @grid(shape = 2)
func.func @step(%x: tensor<4x3xf32>, %y: tensor<4x2xf32>, %w: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e42 = tensor.empty() : tensor<4x2xf32>
  %f42 = linalg.fill ins(%zero : f32) outs(%e42 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %pred = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%f42 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %diff = arith.subf %pred, %y : tensor<4x2xf32>
  %e34 = tensor.empty() : tensor<3x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e34 : tensor<3x4xf32>) permutation = [1, 0]
  %e32 = tensor.empty() : tensor<3x2xf32>
  %f32 = linalg.fill ins(%zero : f32) outs(%e32 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %g = linalg.matmul ins(%xt, %diff : tensor<3x4xf32>, tensor<4x2xf32>) outs(%f32 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %scale = arith.constant dense<0.5> : tensor<3x2xf32>
  %local = arith.mulf %g, %scale : tensor<3x2xf32>
  %avg = shard.all_reduce %local on @grid grid_axes = [0] reduction = average : tensor<3x2xf32> -> tensor<3x2xf32>
  %lr = arith.constant dense<0.1> : tensor<3x2xf32>
  %delta = arith.mulf %avg, %lr : tensor<3x2xf32>
  %new = arith.subf %w, %delta : tensor<3x2xf32>
  return %new : tensor<3x2xf32>
}

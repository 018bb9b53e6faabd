// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py sharded_matmul %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://2 --function=mm \
// RUN:   --input=@%t/in0_%%r.npy --input=@%t/in1_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy

// A global-view matmul with sharding annotations: partitioning makes the
// function per-rank (A's column shard, B's row shard) and sums the partial
// products with an all_reduce.
shard.grid @grid(shape = 2)
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s0 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a1 = shard.shard %a to %s0 annotate_for_users : tensor<4x8xf32>
  %s1 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %b1 = shard.shard %b to %s1 annotate_for_users : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %m = linalg.matmul ins(%a1, %b1 : tensor<4x8xf32>, tensor<8x6xf32>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s2 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %m1 = shard.shard %m to %s2 : tensor<4x6xf32>
  return %m1 : tensor<4x6xf32>
}

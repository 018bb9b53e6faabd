// RUN: kiln-opt %s --split-input-file --kiln-partition-shards --verify-diagnostics | FileCheck %s

// A matmul whose contraction dimension is split over 2 ranks: each rank
// multiplies its 4x4 and 4x6 shards (the signature becomes per-rank) and the
// partial products are summed with an all_reduce. The select partitioning
// puts around the replicated zero accumulator folds away.
// CHECK-LABEL: func.func @matmul_k_split
// CHECK-SAME:      (%[[A:.*]]: tensor<4x4xf32>, %[[B:.*]]: tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK-NOT:     scf.if
// CHECK:         %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x4xf32>, tensor<4x6xf32>)
// CHECK-NEXT:    %[[R:.*]] = shard.all_reduce %[[M]] on @grid grid_axes = [0] : tensor<4x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    return %[[R]]
shard.grid @grid(shape = 2)
func.func @matmul_k_split(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
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

// -----

// Without annotations nothing is partitioned, not even explicit collectives.
// CHECK-LABEL: func.func @explicit
// CHECK-SAME:      (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    shard.all_reduce %[[X]]
shard.grid @grid(shape = 2)
func.func @explicit(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{grid @grid must have a static shape}}
shard.grid @grid(shape = ?)
func.func @dynamic(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %x to %s : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// REQUIRES: host-target, kiln-dump
// RUN: rm -rf %t
// RUN: split-file %s %t
// Library collectives (compiled collective kernels: compiled-collectives.mlir).
// RUN: kiln-compile %t/explicit.mlir --target=host --collective-kernel-max-bytes=0 -o %t/explicit.vmfb
// RUN: kiln-dump %t/explicit.vmfb --commands | FileCheck %s --check-prefix=EXPLICIT
// RUN: kiln-compile %t/sharded.mlir --target=host --collective-kernel-max-bytes=0 -o %t/sharded.vmfb
// RUN: kiln-dump %t/sharded.vmfb --commands | FileCheck %s --check-prefix=SHARDED
// RUN: not kiln-compile %t/dynamic-grid.mlir -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=DYNGRID
// RUN: not kiln-compile %t/dynamic-grid-sharded.mlir -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=DYNGRID2
// RUN: not kiln-compile %t/bad-reduction.mlir --collective-kernel-max-bytes=0 -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=REDUCTION
// RUN: not kiln-compile %t/bad-type.mlir --collective-kernel-max-bytes=0 -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not kiln-compile %t/bad-op.mlir -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=OP
// RUN: not test -e %t/bad.vmfb

// Explicit collectives on a 2x2 grid: every (grid, axes) is one channel;
// the all_gather along dimension 1 is followed by the transpose kernel that
// puts the rank-major chunks side by side; the broadcast root [1, 0] over
// axes [1, 0] is rank 1 * 2 + 0 = 2 of its group.
// EXPLICIT:      f(4x3xf32, 3xi1) -> (4x3xf32, 4x6xf32, 3xi1)
// EXPLICIT:      channels: 3
// EXPLICIT-NEXT:   channel 0: grid grid axes [0, 1] shape [2, 2]
// EXPLICIT-NEXT:   channel 1: grid grid axes [1] shape [2, 2]
// EXPLICIT-NEXT:   channel 2: grid grid axes [1, 0] shape [2, 2]
// EXPLICIT-NEXT:   0: collective AllReduce Sum f32 x12 send input0[0, +48) recv output0[0, +48) root 0 channel 0
// EXPLICIT-NEXT:   1: collective AllGather None f32 x12 send input0[0, +48) recv transient[0, +96) root 0 channel 1
// EXPLICIT-NEXT:   2: barrier
// EXPLICIT-NEXT:   3: dispatch f_dispatch_0::f_dispatch_0
// EXPLICIT-NEXT:     bindings: transient[0, +96) output1[0, +96)
// EXPLICIT-NEXT:   4: collective Broadcast None i1 x3 send input1[0, +3) recv output2[0, +3) root 2 channel 2

//--- explicit.mlir
shard.grid @grid(shape = 2x2)
func.func @f(%x: tensor<4x3xf32>, %b: tensor<3xi1>) -> (tensor<4x3xf32>, tensor<4x6xf32>, tensor<3xi1>) {
  %0 = shard.all_reduce %x on @grid grid_axes = [0, 1] : tensor<4x3xf32> -> tensor<4x3xf32>
  %1 = shard.all_gather %x on @grid grid_axes = [1] gather_axis = 1 : tensor<4x3xf32> -> tensor<4x6xf32>
  %2 = shard.broadcast %b on @grid grid_axes = [1, 0] root = [1, 0] : (tensor<3xi1>) -> tensor<3xi1>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<4x6xf32>, tensor<3xi1>
}

// A global-view matmul annotated with shardings: partitioned per rank (the
// exported signature takes the 4x4 and 4x6 shards), the partial products
// summed by an all_reduce written straight into the output.
// SHARDED:      mm(4x4xf32, 4x6xf32) -> (4x6xf32)
// SHARDED:      channels: 1
// SHARDED-NEXT:   channel 0: grid grid axes [0] shape [2]
// SHARDED-NEXT:   0: dispatch mm_dispatch_0::mm_dispatch_0
// SHARDED-NEXT:     bindings: input0[0, +64) input1[0, +96) transient[0, +96)
// SHARDED-NEXT:   1: barrier
// SHARDED-NEXT:   2: collective AllReduce Sum f32 x24 send transient[0, +96) recv output0[0, +96) root 0 channel 0

//--- sharded.mlir
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

// DYNGRID: dynamic-grid.mlir:1:1: error: grid @grid must have a static shape: the number of ranks of a run is fixed when it starts
//--- dynamic-grid.mlir
shard.grid @grid(shape = 2x?)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// DYNGRID2: dynamic-grid-sharded.mlir:1:1: error: grid @grid must have a static shape
//--- dynamic-grid-sharded.mlir
shard.grid @grid(shape = ?)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %x to %s : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// REDUCTION: bad-reduction.mlir:3:8: error: reduction 'bitwise_or' of 'shard.all_reduce' runs only as a compiled collective kernel
//--- bad-reduction.mlir
shard.grid @grid(shape = 2)
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = bitwise_or : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// TYPE: bad-type.mlir:3:8: error: element type 'i1' of 'shard.reduce_scatter' is not supported; supported: i8, i16, i32, i64, f16, bf16, f32, f64 (i1 reductions run as compiled collective kernels)
//--- bad-type.mlir
shard.grid @grid(shape = 2)
func.func @f(%x: tensor<4xi1>) -> tensor<2xi1> {
  %0 = shard.reduce_scatter %x on @grid grid_axes = [0] reduction = max scatter_axis = 0 : tensor<4xi1> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// OP: bad-op.mlir:3:8: error: shard op 'shard.process_linear_index' is not supported; Kiln lowers static shard.grid and
//--- bad-op.mlir
shard.grid @grid(shape = 2)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %i = shard.process_linear_index on @grid : index
  return %x : tensor<4xf32>
}

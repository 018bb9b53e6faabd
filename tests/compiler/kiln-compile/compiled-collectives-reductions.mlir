// REQUIRES: kiln-dump
// RUN: rm -rf %t
// RUN: split-file %s %t
// RUN: kiln-compile %t/ok.mlir --target=host -o %t/ok.vmfb
// RUN: kiln-dump %t/ok.vmfb --commands | FileCheck %s --check-prefix=OK
// RUN: not kiln-compile %t/ok.mlir --target=host --collective-kernel-max-bytes=0 -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: kiln-compile %t/ok.mlir --target=cuda -o %t/cuda-default.vmfb
// RUN: kiln-dump %t/cuda-default.vmfb --commands | FileCheck %s --check-prefix=OK
// RUN: not kiln-compile %t/ok.mlir --target=cuda --collective-kernel-max-bytes=0 -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: kiln-compile %t/ok.mlir --target=cuda --collective-kernel-max-bytes=4 -o %t/cuda.vmfb
// RUN: not kiln-compile %t/float.mlir --target=host -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=FLOAT
// RUN: kiln-compile %t/scatter.mlir --target=host --collective-kernel-max-bytes=4 -o %t/scatter.vmfb
// RUN: kiln-dump %t/scatter.vmfb --commands | FileCheck %s --check-prefix=SCATTER
// RUN: not kiln-compile %t/scatter.mlir --target=host --collective-kernel-max-bytes=0 -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=SCATTEROFF

// Reductions no collective library runs are compiled collective kernels at
// any size (8 KiB of i32 and 4096 i1 are above a 4-byte threshold; every
// one has its window): bitwise and/or/xor of integers, and i1 (logical);
// on the GPU targets too, by default.
// OK:      window 0: channel 0, 16384 bytes
// OK-NEXT: window 1: channel 0, 16384 bytes
// OK-NEXT: window 2: channel 0, 16384 bytes
// OK-NEXT: window 3: channel 0, 8192 bytes
// OK:      dispatch f_all_reduce_0::f_all_reduce_0
// OK:      dispatch f_all_reduce_1::f_all_reduce_1
// OK:      dispatch f_all_reduce_2::f_all_reduce_2
// OK:      dispatch f_all_reduce_3::f_all_reduce_3
// OK-NOT:  collective AllReduce

// With collective kernels turned off they are errors that say how to get
// them.
// OFF: ok.mlir:3:8: error: reduction 'bitwise_and' of 'shard.all_reduce' runs only as a compiled collective kernel: an all_reduce or reduce_scatter, compiled with collective kernels on (the default; --collective-kernel-max-bytes=0 turns them off) (no collective library has bitwise reductions)

// FLOAT: error: reduction 'bitwise_or' of 'shard.all_reduce' needs an integer element type, got 'f32'

// reduce_scatter the same: above the threshold, a kernel all the same.
// SCATTER:     window 0: channel 0, 64 bytes
// SCATTER:     dispatch f_reduce_scatter_0::f_reduce_scatter_0
// SCATTER-NOT: collective ReduceScatter
// SCATTEROFF: error: reduction 'bitwise_xor' of 'shard.reduce_scatter' runs only as a compiled collective kernel

//--- ok.mlir
shard.grid @grid(shape = 2)
func.func @f(%x: tensor<2048xi32>, %b: tensor<4096xi1>) -> (tensor<2048xi32>, tensor<2048xi32>, tensor<2048xi32>, tensor<4096xi1>) {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = bitwise_and : tensor<2048xi32> -> tensor<2048xi32>
  %1 = shard.all_reduce %x on @grid grid_axes = [0] reduction = bitwise_or : tensor<2048xi32> -> tensor<2048xi32>
  %2 = shard.all_reduce %x on @grid grid_axes = [0] reduction = bitwise_xor : tensor<2048xi32> -> tensor<2048xi32>
  %3 = shard.all_reduce %b on @grid grid_axes = [0] reduction = max : tensor<4096xi1> -> tensor<4096xi1>
  return %0, %1, %2, %3 : tensor<2048xi32>, tensor<2048xi32>, tensor<2048xi32>, tensor<4096xi1>
}

//--- float.mlir
shard.grid @grid(shape = 2)
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = bitwise_or : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

//--- scatter.mlir
shard.grid @grid(shape = 2)
func.func @f(%x: tensor<8xi32>) -> tensor<4xi32> {
  %0 = shard.reduce_scatter %x on @grid grid_axes = [0] reduction = bitwise_xor scatter_axis = 0 : tensor<8xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

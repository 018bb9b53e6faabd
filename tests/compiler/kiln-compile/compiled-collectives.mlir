// REQUIRES: host-target, kiln-dump
// RUN: rm -rf %t
// RUN: split-file %s %t
// RUN: kiln-compile %t/explicit.mlir --target=host -o %t/explicit.vmfb
// RUN: kiln-dump %t/explicit.vmfb --commands | FileCheck %s --check-prefix=EXPLICIT
// RUN: kiln-compile %t/explicit.mlir --target=host --collective-kernel-max-bytes=47 -o %t/threshold.vmfb
// RUN: kiln-dump %t/threshold.vmfb --commands | FileCheck %s --check-prefix=THRESHOLD
// RUN: kiln-compile %t/large.mlir --target=host -o %t/large.vmfb
// RUN: kiln-dump %t/large.vmfb --commands | FileCheck %s --check-prefix=LARGE
// RUN: not kiln-compile %t/explicit.mlir --target=host --collective-kernel-max-bytes=-1 -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=BADFLAG

// all_reduce and all_gather of at most --collective-kernel-max-bytes per
// rank (default 1 MiB on the host target) become dispatches of a kernel of
// their own over a window of the program: data (two halves of the send),
// a flag per rank and an epoch counter per workgroup, the peer table (2 x 4
// addresses and the abort word's). broadcast stays a library collective.
// EXPLICIT:      f(4x3xf32, 3xi1) -> (4x3xf32, 4x6xf32, 3xi1)
// EXPLICIT:      channels: 3
// EXPLICIT-NEXT:   channel 0: grid grid axes [0, 1] shape [2, 2]
// EXPLICIT-NEXT:   channel 1: grid grid axes [1] shape [2, 2]
// EXPLICIT-NEXT:   channel 2: grid grid axes [1, 0] shape [2, 2]
// EXPLICIT-NEXT:   window 0: channel 0, 96 bytes, 5 signal slots
// EXPLICIT-NEXT:   window 1: channel 1, 96 bytes, 3 signal slots
// EXPLICIT-NEXT:   0: dispatch f_all_reduce_0::f_all_reduce_0 workgroups 1x1x1
// EXPLICIT-NEXT:     bindings: input0[0, +48) output0[0, +48) window0.data[0, +96) window0.signals[0, +40) window0.peers[0, +72)
// EXPLICIT-NEXT:   1: dispatch f_all_gather_1::f_all_gather_1 workgroups 1x1x1
// EXPLICIT-NEXT:     bindings: input0[0, +48) transient[0, +96) window1.data[0, +96) window1.signals[0, +24) window1.peers[0, +40)
// EXPLICIT-NEXT:   2: barrier
// EXPLICIT-NEXT:   3: dispatch f_dispatch_0::f_dispatch_0
// EXPLICIT-NEXT:     bindings: transient[0, +96) output1[0, +96)
// EXPLICIT-NEXT:   4: collective Broadcast None i1 x3 send input1[0, +3) recv output2[0, +3) root 2 channel 2
// EXPLICIT:      executables (3):
// EXPLICIT:        export 0: f_dispatch_0
// EXPLICIT:        export 0: f_all_reduce_0 workgroup count 1x1x1, workgroup size 1x1x1, bindings 5
// EXPLICIT:        export 0: f_all_gather_1 workgroup count 1x1x1, workgroup size 1x1x1, bindings 5

// 48 bytes per rank is over a 47-byte threshold: library collectives.
// THRESHOLD-NOT:  window
// THRESHOLD:      0: collective AllReduce Sum f32 x12
// THRESHOLD:      1: collective AllGather None f32 x12

// 100000 f32 (390 KiB) per rank: 64 workgroups (at most 64, at least 4 KiB
// each) of 1563 elements, each with its flags and epoch counter (64 x (4 +
// 1) slots); 2 MiB per rank stays a library collective.
// LARGE:      window 0: channel 0, 800000 bytes, 320 signal slots
// LARGE-NEXT: 0: dispatch g_all_reduce_0::g_all_reduce_0 workgroups 64x1x1
// LARGE-NEXT:   bindings: input0[0, +400000) output0[0, +400000)
// LARGE-NEXT: 1: collective AllReduce Max f32 x524288

// BADFLAG: --collective-kernel-max-bytes must be 0 to 1073741824, not '-1'

//--- explicit.mlir
shard.grid @grid(shape = 2x2)
func.func @f(%x: tensor<4x3xf32>, %b: tensor<3xi1>) -> (tensor<4x3xf32>, tensor<4x6xf32>, tensor<3xi1>) {
  %0 = shard.all_reduce %x on @grid grid_axes = [0, 1] : tensor<4x3xf32> -> tensor<4x3xf32>
  %1 = shard.all_gather %x on @grid grid_axes = [1] gather_axis = 1 : tensor<4x3xf32> -> tensor<4x6xf32>
  %2 = shard.broadcast %b on @grid grid_axes = [1, 0] root = [1, 0] : (tensor<3xi1>) -> tensor<3xi1>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<4x6xf32>, tensor<3xi1>
}

//--- large.mlir
shard.grid @grid(shape = 4)
func.func @g(%x: tensor<100000xf32>, %y: tensor<524288xf32>) -> (tensor<100000xf32>, tensor<524288xf32>) {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] : tensor<100000xf32> -> tensor<100000xf32>
  %1 = shard.all_reduce %y on @grid grid_axes = [0] reduction = max : tensor<524288xf32> -> tensor<524288xf32>
  return %0, %1 : tensor<100000xf32>, tensor<524288xf32>
}

// REQUIRES: host-target, kiln-dump
// RUN: rm -rf %t
// RUN: split-file %s %t
// RUN: kiln-compile %t/explicit.mlir --target=host -o %t/explicit.vmfb
// RUN: kiln-dump %t/explicit.vmfb --commands | FileCheck %s --check-prefix=EXPLICIT
// RUN: kiln-compile %t/explicit.mlir --target=host --collective-kernel-max-bytes=47 -o %t/threshold.vmfb
// RUN: kiln-dump %t/threshold.vmfb --commands | FileCheck %s --check-prefix=THRESHOLD
// RUN: kiln-compile %t/large.mlir --target=host -o %t/large.vmfb
// RUN: kiln-dump %t/large.vmfb --commands | FileCheck %s --check-prefix=LARGE
// RUN: kiln-compile %t/large.mlir --target=host --collective-two-shot-min-bytes=400000 -o %t/two-shot.vmfb
// RUN: kiln-dump %t/two-shot.vmfb --commands | FileCheck %s --check-prefix=TWOSHOT
// RUN: kiln-compile %t/large.mlir --target=host --collective-two-shot-min-bytes=400001 -o %t/one-shot-threshold.vmfb
// RUN: kiln-dump %t/one-shot-threshold.vmfb --commands | FileCheck %s --check-prefix=LARGE
// RUN: kiln-compile %t/scatter.mlir --target=host -o %t/scatter.vmfb
// RUN: kiln-dump %t/scatter.vmfb --commands | FileCheck %s --check-prefix=SCATTER
// RUN: not kiln-compile %t/explicit.mlir --target=host --collective-kernel-max-bytes=-1 -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=BADFLAG
// RUN: not kiln-compile %t/explicit.mlir --target=host --collective-two-shot-min-bytes=-5 -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=BADTWOSHOT

// all_reduce, all_gather and reduce_scatter of at most
// --collective-kernel-max-bytes per rank (default 1 MiB on the host target)
// become dispatches of a kernel of
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

// At or above --collective-two-shot-min-bytes (off by default), over more
// than 2 ranks: two-shot, a reduce_scatter into parts of 25000, then an
// all_gather; 64 workgroups of 391 elements of every part, with flags of
// two phases and an epoch counter each (64 x (2 x 4 + 1) slots).
// TWOSHOT:      window 0: channel 0, 800000 bytes, 576 signal slots
// TWOSHOT-NEXT: 0: dispatch g_all_reduce_two_shot_0::g_all_reduce_two_shot_0 workgroups 64x1x1
// TWOSHOT-NEXT:   bindings: input0[0, +400000) output0[0, +400000)

// reduce_scatter: each rank's send holds a part for every rank; the
// workgroups split the parts (2 x 2048 f32: 16 KiB of send, 4 workgroups
// of 512 elements of each part). Bitwise (and i1) reductions too.
// SCATTER:      window 0: channel 0, 16 bytes, 3 signal slots
// SCATTER-NEXT: window 1: channel 0, 32768 bytes, 12 signal slots
// SCATTER-NEXT: 0: dispatch s_reduce_scatter_0::s_reduce_scatter_0 workgroups 1x1x1
// SCATTER-NEXT:   bindings: input0[0, +8) output0[0, +4) window0.data[0, +16)
// SCATTER-NEXT: 1: dispatch s_reduce_scatter_1::s_reduce_scatter_1 workgroups 4x1x1
// SCATTER-NEXT:   bindings: input1[0, +16384) output1[0, +8192) window1.data[0, +32768)

// BADFLAG: --collective-kernel-max-bytes must be 0 to 1073741824, not '-1'
// BADTWOSHOT: --collective-two-shot-min-bytes must be 0 to 1073741824, not '-5'

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

//--- scatter.mlir
shard.grid @grid(shape = 2)
func.func @s(%x: tensor<4xi16>, %y: tensor<2x2048xf32>) -> (tensor<2xi16>, tensor<1x2048xf32>) {
  %0 = shard.reduce_scatter %x on @grid grid_axes = [0] reduction = bitwise_xor scatter_axis = 0 : tensor<4xi16> -> tensor<2xi16>
  %1 = shard.reduce_scatter %y on @grid grid_axes = [0] reduction = min scatter_axis = 0 : tensor<2x2048xf32> -> tensor<1x2048xf32>
  return %0, %1 : tensor<2xi16>, tensor<1x2048xf32>
}

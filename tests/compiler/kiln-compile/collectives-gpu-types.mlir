// REQUIRES: kiln-dump
// Reductions NCCL/RCCL cannot run are compile errors for the GPU targets
// (the hip driver runs collectives through them), and fine for host only.
// RUN: kiln-compile %s --target=host -o %t.vmfb
// RUN: not kiln-compile %s --target=host,cuda -o %t.vmfb 2>&1 | FileCheck %s
// RUN: not kiln-compile %s --target=rocm -o %t.vmfb 2>&1 | FileCheck %s
// With compiled collectives (on request for GPU targets), an all_reduce of
// a type NCCL/RCCL lack is a kernel at any size (8 x i16 is above a 4-byte
// threshold), and the gather stays a library collective.
// RUN: kiln-compile %s --target=host,cuda --collective-kernel-max-bytes=4 -o %t.compiled.vmfb
// RUN: kiln-dump %t.compiled.vmfb --commands | FileCheck %s --check-prefix=COMPILED
// COMPILED:      sum_i16(8xi16) -> (8xi16)
// COMPILED:        window 0: channel 0, 32 bytes, 3 signal slots
// COMPILED-NEXT:   0: dispatch sum_i16_all_reduce_0::sum_i16_all_reduce_0
// COMPILED:      gather_i16(8xi16) -> (16xi16)
// COMPILED-NOT:    window
// COMPILED:        0: collective AllGather None i16 x8

shard.grid @g(shape = 2)

func.func @sum_i16(%x: tensor<8xi16>) -> tensor<8xi16> {
  // CHECK: collectives-gpu-types.mlir:[[@LINE+1]]:8: error: reduction 'sum' of 'shard.all_reduce' on 'i16' cannot run on the rocm and cuda targets: NCCL and RCCL have no 16-bit integer type
  %0 = shard.all_reduce %x on @g grid_axes = [0] reduction = sum : tensor<8xi16> -> tensor<8xi16>
  return %0 : tensor<8xi16>
}

// Byte-moving collectives take any type.
func.func @gather_i16(%x: tensor<8xi16>) -> tensor<16xi16> {
  %0 = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0 : tensor<8xi16> -> tensor<16xi16>
  return %0 : tensor<16xi16>
}

// REQUIRES: kiln-dump
// Reductions NCCL/RCCL cannot run (16-bit integers) are compiled collective
// kernels for the GPU targets at any size, by default (the hip driver runs
// them over symmetric windows; other collectives stay library calls there
// until the GPU threshold is set), and compile errors for the GPU targets
// with collective kernels turned off.
// RUN: kiln-compile %s --target=host -o %t.vmfb
// RUN: kiln-compile %s --target=host,cuda -o %t.default.vmfb
// RUN: kiln-dump %t.default.vmfb --commands | FileCheck %s --check-prefix=COMPILED
// RUN: not kiln-compile %s --target=host,cuda --collective-kernel-max-bytes=0 -o %t.vmfb 2>&1 | FileCheck %s
// RUN: not kiln-compile %s --target=rocm --collective-kernel-max-bytes=0 -o %t.vmfb 2>&1 | FileCheck %s
// With a threshold (4 bytes: 8 x i16 is above it) the same: the all_reduce
// of a type NCCL/RCCL lack is a kernel at any size, and the gather stays a
// library collective.
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
  // CHECK: collectives-gpu-types.mlir:[[@LINE+1]]:8: error: reduction 'sum' of 'shard.all_reduce' on 'i16' cannot run on the rocm and cuda targets: NCCL and RCCL have no 16-bit integer type and collective kernels are off (--collective-kernel-max-bytes=0); leave them on, or extend the operand to i32 first
  %0 = shard.all_reduce %x on @g grid_axes = [0] reduction = sum : tensor<8xi16> -> tensor<8xi16>
  return %0 : tensor<8xi16>
}

// Byte-moving collectives take any type.
func.func @gather_i16(%x: tensor<8xi16>) -> tensor<16xi16> {
  %0 = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0 : tensor<8xi16> -> tensor<16xi16>
  return %0 : tensor<16xi16>
}

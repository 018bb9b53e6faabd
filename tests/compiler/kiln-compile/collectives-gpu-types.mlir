// Reductions NCCL/RCCL cannot run are compile errors for the GPU targets
// (the hip driver runs collectives through them), and fine for host only.
// RUN: kiln-compile %s --target=host -o %t.vmfb
// RUN: not kiln-compile %s --target=host,cuda -o %t.vmfb 2>&1 | FileCheck %s
// RUN: not kiln-compile %s --target=rocm -o %t.vmfb 2>&1 | FileCheck %s

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

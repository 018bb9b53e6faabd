// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py all_reduce_2x2 %t
// RUN: kiln-compile %s --target=host --collective-two-shot-min-bytes=1 -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://4 --function=main --repeat=100000 \
// RUN:   --input=@%t/in0_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy --expected-output=@%t/out1_%%r.npy

// compiled_collectives_stress.mlir with the 4-rank all_reduce two-shot (the
// 2-rank one stays one-shot): its window halves are single buffers, and its
// two phases' flags keep a rank from overwriting what a peer still reads.
// 10^5 calls in a row, every result checked: a wrong argument shows as a
// mismatch, a hang (the lit timeout) or a kernel status 3.
shard.grid @grid(shape = 2x2)
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = shard.all_reduce %x on @grid grid_axes = [0, 1] reduction = sum : tensor<8xf32> -> tensor<8xf32>
  %1 = shard.all_reduce %x on @grid grid_axes = [1] reduction = max : tensor<8xf32> -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

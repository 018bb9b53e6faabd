// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py all_reduce_sum_2 %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://2 --function=main \
// RUN:   --input=@%t/in0_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy

// all_reduce sum of a 4x3xf32 over 2 ranks; every rank gets the sum.
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = sum : tensor<4x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

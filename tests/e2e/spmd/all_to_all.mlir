// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py all_to_all %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://2 --function=main \
// RUN:   --input=@%t/in0_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy

// all_to_all: split rows into 2 chunks (chunk j to rank j), concatenate the
// received chunks along columns.
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4x6xf32>) -> tensor<2x12xf32> {
  %0 = shard.all_to_all %x on @grid grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<4x6xf32> -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}

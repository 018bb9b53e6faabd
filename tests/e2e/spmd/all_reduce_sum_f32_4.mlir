// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py all_reduce_2x2 %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://4 --function=main \
// RUN:   --input=@%t/in0_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy --expected-output=@%t/out1_%%r.npy
// RUN: kiln-run %t/m.vmfb --device=local --function=main --input=@%t/in0_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy --expected-output=@%t/out1_%%r.npy

// 4 ranks as a 2x2 grid: a sum over the whole grid and a max within each
// row (axis 1: ranks {0, 1} and {2, 3}), i.e. two channels. `local` picks
// the grid size.
shard.grid @grid(shape = 2x2)
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = shard.all_reduce %x on @grid grid_axes = [0, 1] reduction = sum : tensor<8xf32> -> tensor<8xf32>
  %1 = shard.all_reduce %x on @grid grid_axes = [1] reduction = max : tensor<8xf32> -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

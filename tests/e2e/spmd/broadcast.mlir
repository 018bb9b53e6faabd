// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py broadcast_2x2 %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://4 --function=main \
// RUN:   --input=@%t/in0_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy

// broadcast within each row of a 2x2 grid from the row's second rank.
shard.grid @grid(shape = 2x2)
func.func @main(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = shard.broadcast %x on @grid grid_axes = [1] root = [1] : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

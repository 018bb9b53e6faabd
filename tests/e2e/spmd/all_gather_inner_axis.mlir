// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py all_gather_inner %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://2 --function=main \
// RUN:   --input=@%t/in0_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy

// all_gather along dimension 1 (not the outermost): the collective gathers
// rank-major 2x4x3 and a transpose kernel lays the chunks side by side.
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x6xf32> {
  %0 = shard.all_gather %x on @grid grid_axes = [0] gather_axis = 1 : tensor<4x3xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

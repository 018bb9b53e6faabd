// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py reduce_scatter_inner %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://2 --function=main \
// RUN:   --input=@%t/in0_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy

// reduce_scatter sum along dimension 1 of a 4x6xi32: a transpose kernel
// makes each rank's 4x3 chunk contiguous first.
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4x6xi32>) -> tensor<4x3xi32> {
  %0 = shard.reduce_scatter %x on @grid grid_axes = [0] reduction = sum scatter_axis = 1 : tensor<4x6xi32> -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_data.py all_reduce_2x2 %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local://4 --function=main --repeat=100000 \
// RUN:   --input=@%t/in0_%%r.npy \
// RUN:   --expected-output=@%t/out0_%%r.npy --expected-output=@%t/out1_%%r.npy

// 10^5 calls in a row of two compiled collectives (kernels over symmetric
// windows on the host target) on 4 ranks and two channels: each call's
// epoch is one more than the last on every rank, the data halves alternate,
// and every call's results are checked. A wrong flag protocol shows as a
// mismatch (data overwritten while a peer reads it), a hang (a lost
// signal: the lit timeout), or a kernel status 3 (a peer's signal did not
// arrive in time).
shard.grid @grid(shape = 2x2)
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = shard.all_reduce %x on @grid grid_axes = [0, 1] reduction = sum : tensor<8xf32> -> tensor<8xf32>
  %1 = shard.all_reduce %x on @grid grid_axes = [1] reduction = max : tensor<8xf32> -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

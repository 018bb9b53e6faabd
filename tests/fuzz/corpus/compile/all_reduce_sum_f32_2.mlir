shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = sum : tensor<4x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

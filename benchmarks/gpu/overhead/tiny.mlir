#id = affine_map<(i) -> (i)>
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = arith.mulf %in, %two : f32
    linalg.yield %0 : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

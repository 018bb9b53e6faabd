func.func @add(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.add ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

func.func @triple(%v: tensor<5xi32>) -> tensor<5xi32> {
  %c3 = arith.constant 3 : i32
  %e = tensor.empty() : tensor<5xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%v : tensor<5xi32>) outs(%e : tensor<5xi32>) {
  ^bb0(%x: i32, %o: i32):
    %0 = arith.muli %x, %c3 : i32
    linalg.yield %0 : i32
  } -> tensor<5xi32>
  return %r : tensor<5xi32>
}

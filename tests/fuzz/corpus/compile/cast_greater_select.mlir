func.func @main(%i: tensor<2x4xi32>, %a: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xi1>) {
  %0 = tosa.cast %i : (tensor<2x4xi32>) -> tensor<2x4xf32>
  %1 = tosa.greater %0, %a : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  %2 = tosa.select %1, %0, %a : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2, %1 : tensor<2x4xf32>, tensor<2x4xi1>
}

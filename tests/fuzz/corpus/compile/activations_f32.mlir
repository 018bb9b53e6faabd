func.func @main(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = tosa.exp %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = tosa.tanh %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %2 = tosa.sigmoid %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %3 = tosa.reciprocal %0 : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0, %1, %2, %3 : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>
}

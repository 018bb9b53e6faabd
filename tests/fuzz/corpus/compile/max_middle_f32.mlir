func.func @main(%x: tensor<2x5x4xf32>) -> tensor<2x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = linalg.reduce ins(%x : tensor<2x5x4xf32>) outs(%init : tensor<2x4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  return %r : tensor<2x4xf32>
}

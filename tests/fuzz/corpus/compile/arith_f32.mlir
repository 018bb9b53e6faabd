func.func @main(%a0: tensor<3x4xf32>, %a1: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %init = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a0, %a1 : tensor<3x4xf32>, tensor<3x4xf32>) outs(%init : tensor<3x4xf32>) {
  ^bb0(%x0: f32, %x1: f32, %out: f32):
    %0 = arith.subf %x0, %x1 : f32
    %1 = arith.mulf %0, %x0 : f32
    %2 = arith.divf %1, %x1 : f32
    %3 = arith.negf %x0 : f32
    %4 = arith.maximumf %2, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

func.func @main(%a0: tensor<2x5xf16>, %a1: tensor<2x5xf32>) -> tensor<2x5xf16> {
  %init = tensor.empty() : tensor<2x5xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a0, %a1 : tensor<2x5xf16>, tensor<2x5xf32>) outs(%init : tensor<2x5xf16>) {
  ^bb0(%x0: f16, %x1: f32, %out: f16):
    %0 = arith.extf %x0 : f16 to f32
    %1 = arith.addf %0, %x1 : f32
    %2 = arith.truncf %1 : f32 to f16
    linalg.yield %2 : f16
  } -> tensor<2x5xf16>
  return %r : tensor<2x5xf16>
}

func.func @main(%a0: tensor<2x4xi1>, %a1: tensor<2x4xi1>, %a2: tensor<2x4xi1>) -> tensor<2x4xi1> {
  %init = tensor.empty() : tensor<2x4xi1>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a0, %a1, %a2 : tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>) outs(%init : tensor<2x4xi1>) {
  ^bb0(%x0: i1, %x1: i1, %x2: i1, %out: i1):
    %0 = arith.andi %x0, %x1 : i1
    %1 = arith.ori %x2, %x0 : i1
    %2 = arith.xori %0, %1 : i1
    linalg.yield %2 : i1
  } -> tensor<2x4xi1>
  return %r : tensor<2x4xi1>
}

func.func @main(%a0: tensor<3x4xi32>, %a1: tensor<3x4xi32>) -> tensor<3x4xi32> {
  %init = tensor.empty() : tensor<3x4xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a0, %a1 : tensor<3x4xi32>, tensor<3x4xi32>) outs(%init : tensor<3x4xi32>) {
  ^bb0(%x0: i32, %x1: i32, %out: i32):
    %c1000 = arith.constant 1000 : i32
    %0 = arith.divsi %x0, %x1 : i32
    %1 = arith.remsi %x0, %x1 : i32
    %2 = arith.muli %0, %c1000 : i32
    %3 = arith.addi %2, %1 : i32
    %4 = arith.minsi %3, %x0 : i32
    linalg.yield %4 : i32
  } -> tensor<3x4xi32>
  return %r : tensor<3x4xi32>
}

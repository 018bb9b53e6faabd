#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @main(%x: tensor<6x200xf32>, %g: tensor<200xf32>, %b: tensor<200xf32>) -> tensor<6x200xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 200.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<6xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<6xf32>) -> tensor<6xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x200xf32>) outs(%s0 : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<6xf32>
  %mean = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<6xf32>) outs(%e1 : tensor<6xf32>) {
  ^bb0(%s: f32, %o: f32):
    %0 = arith.divf %s, %n : f32
    linalg.yield %0 : f32
  } -> tensor<6xf32>
  %e2 = tensor.empty() : tensor<6x200xf32>
  %xc = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<6x200xf32>, tensor<6xf32>) outs(%e2 : tensor<6x200xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    linalg.yield %0 : f32
  } -> tensor<6x200xf32>
  %v0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<6xf32>) -> tensor<6xf32>
  %ssq = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%xc : tensor<6x200xf32>) outs(%v0 : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %acc : f32
    linalg.yield %1 : f32
  } -> tensor<6xf32>
  %out = linalg.generic {indexing_maps = [#id, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xc, %ssq, %g, %b : tensor<6x200xf32>, tensor<6xf32>, tensor<200xf32>, tensor<200xf32>) outs(%e2 : tensor<6x200xf32>) {
  ^bb0(%c: f32, %q: f32, %gi: f32, %bi: f32, %o: f32):
    %0 = arith.divf %q, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.mulf %c, %2 : f32
    %4 = arith.mulf %3, %gi : f32
    %5 = arith.addf %4, %bi : f32
    linalg.yield %5 : f32
  } -> tensor<6x200xf32>
  return %out : tensor<6x200xf32>
}

func.func @main(%q: tensor<2x128x64xf16>, %k: tensor<2x192x64xf16>, %v: tensor<2x192x64xf16>) -> tensor<2x128x64xf16> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e_s = tensor.empty() : tensor<2x128x192xf32>
  %f_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<2x128x192xf32>) -> tensor<2x128x192xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, l) -> (b, i, l)>, affine_map<(b, i, j, l) -> (b, j, l)>, affine_map<(b, i, j, l) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x128x64xf16>, tensor<2x192x64xf16>) outs(%f_s : tensor<2x128x192xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %af = arith.extf %a : f16 to f32
    %bf = arith.extf %b : f16 to f32
    %p = arith.mulf %af, %bf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x128x192xf32>
  %e_c = tensor.empty() : tensor<2x128x192xf32>
  %sc0 = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x128x192xf32>) outs(%e_c : tensor<2x128x192xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %after = arith.cmpi ugt, %j, %i : index
    %minf = arith.constant 0xFF800000 : f32
    %r = arith.select %after, %minf, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x128x192xf32>
  %e_m = tensor.empty() : tensor<2x128xf32>
  %f_m = linalg.fill ins(%ninf : f32) outs(%e_m : tensor<2x128xf32>) -> tensor<2x128xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sc0 : tensor<2x128x192xf32>) outs(%f_m : tensor<2x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x128xf32>
  %e_p = tensor.empty() : tensor<2x128x192xf32>
  %pr = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sc0, %mx : tensor<2x128x192xf32>, tensor<2x128xf32>) outs(%e_p : tensor<2x128x192xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %c = arith.subf %a, %m : f32
    %sc = arith.constant 0.125 : f32
    %z = arith.mulf %c, %sc : f32
    %x = math.exp %z : f32
    linalg.yield %x : f32
  } -> tensor<2x128x192xf32>
  %e_l = tensor.empty() : tensor<2x128xf32>
  %f_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<2x128xf32>) -> tensor<2x128xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%pr : tensor<2x128x192xf32>) outs(%f_l : tensor<2x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x128xf32>
  %e_t = tensor.empty() : tensor<2x128x192xf16>
  %pt = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pr : tensor<2x128x192xf32>) outs(%e_t : tensor<2x128x192xf16>) {
  ^bb0(%a: f32, %o: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x128x192xf16>
  %e_o = tensor.empty() : tensor<2x128x64xf32>
  %f_o = linalg.fill ins(%zero : f32) outs(%e_o : tensor<2x128x64xf32>) -> tensor<2x128x64xf32>
  %o = linalg.batch_matmul ins(%pt, %v : tensor<2x128x192xf16>, tensor<2x192x64xf16>) outs(%f_o : tensor<2x128x64xf32>) -> tensor<2x128x64xf32>
  %e_out = tensor.empty() : tensor<2x128x64xf16>
  %out = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%o, %l : tensor<2x128x64xf32>, tensor<2x128xf32>) outs(%e_out : tensor<2x128x64xf16>) {
  ^bb0(%a: f32, %ls: f32, %r: f16):
    %n = arith.divf %a, %ls : f32
    %y = arith.truncf %n : f32 to f16
    linalg.yield %y : f16
  } -> tensor<2x128x64xf16>
  return %out : tensor<2x128x64xf16>
}

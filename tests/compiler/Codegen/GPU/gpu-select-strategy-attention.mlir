// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_90 max-shared-memory-bytes=232448" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_90 max-shared-memory-bytes=49152" | FileCheck %s --check-prefix=SMALL
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_75 max-shared-memory-bytes=65536" | FileCheck %s --check-prefix=SM75

// A fused attention kernel (one dispatch of the whole chain): the
// "attention" strategy on sm_80+, one workgroup of 4 warps per 128 query
// rows of a batch at head dim 64 (2 x 128 / 128 = 2), no workgroup tiling (the lowering makes its
// own workgroup loop), blocks of 64 keys (k_tile) in 2 shared stages. Its
// shared memory (4 x 64 rows of 64 + 8 f16: 36864 bytes) fits 48 KiB
// too; sm_75 has no mma.sync m16n8k16 in the recipe: no attention kernel.
#qk_q = affine_map<(b, i, j, l) -> (b, i, l)>
#qk_k = affine_map<(b, i, j, l) -> (b, j, l)>
#qk_s = affine_map<(b, i, j, l) -> (b, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row3 = affine_map<(b, i, j) -> (b, i)>

// CHECK-LABEL: func.func @attention
// CHECK-SAME: kind = attention{{[,>]}}
// CHECK-SAME: workgroup_size = 128{{[,>]}}
// CHECK-SAME: workgroup_count = 2{{[,>]}}
// CHECK-SAME: intrinsic = mma_sync_f32_16x8x16_f16{{[,>]}}
// CHECK-SAME: k_tile = 64{{[,>]}}
// CHECK-SAME: pipeline_depth = 2{{[,>]}}
// CHECK-SAME: query_rows = 128{{[,>]}}
// CHECK-NOT: workgroup_tile =
// CHECK-NOT: q_in_shared =
// SMALL-LABEL: func.func @attention
// SMALL-SAME: kind = attention{{[,>]}}
// SM75-LABEL: func.func @attention
// SM75-NOT: kind = attention
func.func @attention(%q: tensor<2x128x64xf16>, %k: tensor<2x192x64xf16>, %v: tensor<2x192x64xf16>) -> (tensor<2x128x64xf16>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e_s = tensor.empty() : tensor<2x128x192xf32>
  %f_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<2x128x192xf32>) -> tensor<2x128x192xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x128x64xf16>, tensor<2x192x64xf16>) outs(%f_s : tensor<2x128x192xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %af = arith.extf %a : f16 to f32
    %bf = arith.extf %b : f16 to f32
    %p = arith.mulf %af, %bf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x128x192xf32>
  %e_m = tensor.empty() : tensor<2x128xf32>
  %f_m = linalg.fill ins(%ninf : f32) outs(%e_m : tensor<2x128xf32>) -> tensor<2x128xf32>
  %mx = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : tensor<2x128x192xf32>) outs(%f_m : tensor<2x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x128xf32>
  %e_p = tensor.empty() : tensor<2x128x192xf32>
  %pr = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mx : tensor<2x128x192xf32>, tensor<2x128xf32>) outs(%e_p : tensor<2x128x192xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %c = arith.subf %a, %m : f32
    %sc = arith.constant 1.250000e-01 : f32
    %z = arith.mulf %c, %sc : f32
    %x = math.exp %z : f32
    linalg.yield %x : f32
  } -> tensor<2x128x192xf32>
  %e_l = tensor.empty() : tensor<2x128xf32>
  %f_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<2x128xf32>) -> tensor<2x128xf32>
  %l = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%pr : tensor<2x128x192xf32>) outs(%f_l : tensor<2x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x128xf32>
  %e_t = tensor.empty() : tensor<2x128x192xf16>
  %pt = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pr : tensor<2x128x192xf32>) outs(%e_t : tensor<2x128x192xf16>) {
  ^bb0(%a: f32, %o: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x128x192xf16>
  %e_o = tensor.empty() : tensor<2x128x64xf32>
  %f_o = linalg.fill ins(%zero : f32) outs(%e_o : tensor<2x128x64xf32>) -> tensor<2x128x64xf32>
  %o = linalg.batch_matmul ins(%pt, %v : tensor<2x128x192xf16>, tensor<2x192x64xf16>) outs(%f_o : tensor<2x128x64xf32>) -> tensor<2x128x64xf32>
  %e_out = tensor.empty() : tensor<2x128x64xf16>
  %out = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o, %l : tensor<2x128x64xf32>, tensor<2x128xf32>) outs(%e_out : tensor<2x128x64xf16>) {
  ^bb0(%a: f32, %ls: f32, %r: f16):
    %n = arith.divf %a, %ls : f32
    %y = arith.truncf %n : f32 to f16
    linalg.yield %y : f16
  } -> tensor<2x128x64xf16>
  return %out : tensor<2x128x64xf16>
}

// -----

#qk_q = affine_map<(b, i, j, l) -> (b, i, l)>
#qk_k = affine_map<(b, i, j, l) -> (b, j, l)>
#qk_s = affine_map<(b, i, j, l) -> (b, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row3 = affine_map<(b, i, j) -> (b, i)>

// Head dim 128 in bf16: 4 x 64 rows of 136 bf16 (69632 bytes) need the
// opt-in beyond 48 KiB; with 48 KiB only, the chain gets no attention kernel.
// CHECK-LABEL: func.func @attention_bf16_d128
// CHECK-SAME: kind = attention{{[,>]}}
// CHECK-SAME: intrinsic = mma_sync_f32_16x8x16_bf16{{[,>]}}
// CHECK-SAME: k_tile = 64{{[,>]}}
// CHECK-SAME: query_rows = 64{{[,>]}}
// CHECK-NOT: workgroup_count =
// CHECK-NOT: q_in_shared =
// SMALL-LABEL: func.func @attention_bf16_d128
// SMALL-NOT: kind = attention
func.func @attention_bf16_d128(%q: tensor<1x64x128xbf16>, %k: tensor<1x128x128xbf16>, %v: tensor<1x128x128xbf16>) -> (tensor<1x64x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e_s = tensor.empty() : tensor<1x64x128xf32>
  %f_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<1x64x128xf32>) -> tensor<1x64x128xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x64x128xbf16>, tensor<1x128x128xbf16>) outs(%f_s : tensor<1x64x128xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x64x128xf32>
  %e_m = tensor.empty() : tensor<1x64xf32>
  %f_m = linalg.fill ins(%ninf : f32) outs(%e_m : tensor<1x64xf32>) -> tensor<1x64xf32>
  %mx = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : tensor<1x64x128xf32>) outs(%f_m : tensor<1x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x64xf32>
  %e_p = tensor.empty() : tensor<1x64x128xf32>
  %pr = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mx : tensor<1x64x128xf32>, tensor<1x64xf32>) outs(%e_p : tensor<1x64x128xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %c = arith.subf %a, %m : f32
    %sc = arith.constant 1.250000e-01 : f32
    %z = arith.mulf %c, %sc : f32
    %x = math.exp %z : f32
    linalg.yield %x : f32
  } -> tensor<1x64x128xf32>
  %e_l = tensor.empty() : tensor<1x64xf32>
  %f_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<1x64xf32>) -> tensor<1x64xf32>
  %l = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%pr : tensor<1x64x128xf32>) outs(%f_l : tensor<1x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x64xf32>
  %e_t = tensor.empty() : tensor<1x64x128xbf16>
  %pt = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pr : tensor<1x64x128xf32>) outs(%e_t : tensor<1x64x128xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %r = arith.truncf %a : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<1x64x128xbf16>
  %e_o = tensor.empty() : tensor<1x64x128xf32>
  %f_o = linalg.fill ins(%zero : f32) outs(%e_o : tensor<1x64x128xf32>) -> tensor<1x64x128xf32>
  %o = linalg.batch_matmul ins(%pt, %v : tensor<1x64x128xbf16>, tensor<1x128x128xbf16>) outs(%f_o : tensor<1x64x128xf32>) -> tensor<1x64x128xf32>
  %e_out = tensor.empty() : tensor<1x64x128xbf16>
  %out = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o, %l : tensor<1x64x128xf32>, tensor<1x64xf32>) outs(%e_out : tensor<1x64x128xbf16>) {
  ^bb0(%a: f32, %ls: f32, %r: bf16):
    %n = arith.divf %a, %ls : f32
    %y = arith.truncf %n : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<1x64x128xbf16>
  return %out : tensor<1x64x128xbf16>
}

// -----

#qk_q = affine_map<(b, i, j, l) -> (b, i, l)>
#qk_k = affine_map<(b, i, j, l) -> (b, j, l)>
#qk_s = affine_map<(b, i, j, l) -> (b, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row3 = affine_map<(b, i, j) -> (b, i)>
// Head dim 128 with 128 query rows: 32 rows per warp, whose 128 accumulators
// per thread leave no registers for Q's fragments, so Q stays in shared
// memory (128 rows of 136) and blocks have 32 keys (k_tile): 128 + 4 x 32
// rows of 136 f16, 69632 bytes.
// CHECK-LABEL: func.func @attention_f16_d128_m128
// CHECK-SAME: kind = attention{{[,>]}}
// CHECK-SAME: k_tile = 32{{[,>]}}
// CHECK-SAME: query_rows = 128{{[,>]}}
// CHECK-SAME: q_in_shared = true{{[,>]}}
// CHECK-NOT: workgroup_count =
// SMALL-LABEL: func.func @attention_f16_d128_m128
// SMALL-NOT: kind = attention
func.func @attention_f16_d128_m128(%q: tensor<1x128x128xf16>, %k: tensor<1x128x128xf16>, %v: tensor<1x128x128xf16>) -> (tensor<1x128x128xf16>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e_s = tensor.empty() : tensor<1x128x128xf32>
  %f_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<1x128x128xf32>) -> tensor<1x128x128xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x128x128xf16>, tensor<1x128x128xf16>) outs(%f_s : tensor<1x128x128xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %af = arith.extf %a : f16 to f32
    %bf = arith.extf %b : f16 to f32
    %p = arith.mulf %af, %bf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x128x128xf32>
  %e_m = tensor.empty() : tensor<1x128xf32>
  %f_m = linalg.fill ins(%ninf : f32) outs(%e_m : tensor<1x128xf32>) -> tensor<1x128xf32>
  %mx = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : tensor<1x128x128xf32>) outs(%f_m : tensor<1x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x128xf32>
  %e_p = tensor.empty() : tensor<1x128x128xf32>
  %pr = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mx : tensor<1x128x128xf32>, tensor<1x128xf32>) outs(%e_p : tensor<1x128x128xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %c = arith.subf %a, %m : f32
    %sc = arith.constant 1.250000e-01 : f32
    %z = arith.mulf %c, %sc : f32
    %x = math.exp %z : f32
    linalg.yield %x : f32
  } -> tensor<1x128x128xf32>
  %e_l = tensor.empty() : tensor<1x128xf32>
  %f_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<1x128xf32>) -> tensor<1x128xf32>
  %l = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%pr : tensor<1x128x128xf32>) outs(%f_l : tensor<1x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x128xf32>
  %e_t = tensor.empty() : tensor<1x128x128xf16>
  %pt = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pr : tensor<1x128x128xf32>) outs(%e_t : tensor<1x128x128xf16>) {
  ^bb0(%a: f32, %o: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  } -> tensor<1x128x128xf16>
  %e_o = tensor.empty() : tensor<1x128x128xf32>
  %f_o = linalg.fill ins(%zero : f32) outs(%e_o : tensor<1x128x128xf32>) -> tensor<1x128x128xf32>
  %o = linalg.batch_matmul ins(%pt, %v : tensor<1x128x128xf16>, tensor<1x128x128xf16>) outs(%f_o : tensor<1x128x128xf32>) -> tensor<1x128x128xf32>
  %e_out = tensor.empty() : tensor<1x128x128xf16>
  %out = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o, %l : tensor<1x128x128xf32>, tensor<1x128xf32>) outs(%e_out : tensor<1x128x128xf16>) {
  ^bb0(%a: f32, %ls: f32, %r: f16):
    %n = arith.divf %a, %ls : f32
    %y = arith.truncf %n : f32 to f16
    linalg.yield %y : f16
  } -> tensor<1x128x128xf16>
  return %out : tensor<1x128x128xf16>
}


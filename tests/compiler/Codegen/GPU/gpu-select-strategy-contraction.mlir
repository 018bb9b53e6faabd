// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_90 max-shared-memory-bytes=232448" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_90 max-shared-memory-bytes=49152" | FileCheck %s --check-prefix=STATIC48
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_75" | FileCheck %s --check-prefix=SM75
// With layout-fragments (kiln-compile --cuda-layout-fragments): the AMD
// forms' data path, one padded stage and no cp.async pipeline depth.
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_90 layout-fragments=true" | FileCheck %s --check-prefix=LAYOUT

// f16 matmul with enough 128x128 tiles to fill the GPU: 4 warps (2x2,
// each 64x64), K slices of 32 in 4 shared stages (64 KiB), mma.sync; 3
// stages where a workgroup gets 48 KiB.
// CHECK-LABEL: func.func @large_f16
// CHECK-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [128, 128, 0], workgroup_count = 256, intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 4>
// LAYOUT-LABEL: func.func @large_f16
// LAYOUT-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [128, 128, 0], workgroup_count = 256, intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, layout_fragments = true>
// STATIC48-LABEL: func.func @large_f16
// STATIC48-SAME: workgroup_tile = [128, 128, 0]
// STATIC48-SAME: pipeline_depth = 3{{[,>]}}
// SM75-LABEL: func.func @large_f16
// SM75-SAME: kind = matmul{{[,>]}}
// SM75-NOT: intrinsic
func.func @large_f16(%a: tensor<2048x256xf16>, %b: tensor<256x2048xf16>) -> tensor<2048x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2048x256xf16>, tensor<256x2048xf16>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %r : tensor<2048x2048xf32>
}

// -----

// Few tiles: 64x64 tiles of 4 warps (2x2). The result is the truncating
// consumer, tiled over its two loops.
// CHECK-LABEL: func.func @small_bf16_truncated
// CHECK-SAME: kind = contraction{{[,>]}}
// CHECK-SAME: workgroup_size = 128{{[,>]}}
// CHECK-SAME: workgroup_tile = [64, 64]
// CHECK-SAME: workgroup_count = 8{{[,>]}}
// CHECK-SAME: intrinsic = mma_sync_f32_16x8x16_bf16{{[,>]}}
// CHECK-SAME: subgroup_grid = [2, 2]
// CHECK-SAME: k_tile = 32{{[,>]}}
// CHECK-SAME: pipeline_depth = 3{{[,>]}}
#id = affine_map<(i, j) -> (i, j)>
func.func @small_bf16_truncated(%a: tensor<256x64xbf16>, %b: tensor<64x128xbf16>) -> tensor<256x128xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x128xf32>) -> tensor<256x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<256x64xbf16>, tensor<64x128xbf16>) outs(%f : tensor<256x128xf32>) -> tensor<256x128xf32>
  %e2 = tensor.empty() : tensor<256x128xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<256x128xf32>) outs(%e2 : tensor<256x128xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %y = arith.truncf %x : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<256x128xbf16>
  return %t : tensor<256x128xbf16>
}

// -----

// M not a multiple of the tile: partial tiles are masked (2 x 2 tiles of
// 64). K or N not a multiple of 8 f16 (rows of partial 16-byte chunks) and
// an f16 accumulator keep the generic matmul strategy; f32 inputs (128x128
// output: 4 tiles of 64) take the SIMT form.
// CHECK-LABEL: func.func @odd_sizes
// CHECK-SAME: kind = contraction{{[,>]}}
// CHECK-SAME: workgroup_size = 128{{[,>]}}
// CHECK-SAME: workgroup_tile = [64, 64, 0]
// CHECK-SAME: workgroup_count = 4{{[,>]}}
// CHECK-LABEL: func.func @odd_k
// CHECK-SAME: kind = matmul{{[,>]}}
// CHECK-LABEL: func.func @odd_n
// CHECK-SAME: kind = matmul{{[,>]}}
// CHECK-LABEL: func.func @f32_inputs
// CHECK-SAME: kind = contraction{{[,>]}}
// CHECK-SAME: workgroup_tile = [64, 64, 0]
// CHECK-SAME: simt_tile = [4, 4]
// CHECK-LABEL: func.func @f16_accumulator
// CHECK-SAME: kind = matmul{{[,>]}}
func.func @odd_sizes(%a: tensor<100x64xf16>, %b: tensor<64x128xf16>) -> tensor<100x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x128xf32>) -> tensor<100x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x64xf16>, tensor<64x128xf16>) outs(%f : tensor<100x128xf32>) -> tensor<100x128xf32>
  return %r : tensor<100x128xf32>
}
func.func @odd_k(%a: tensor<128x60xf16>, %b: tensor<60x128xf16>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x60xf16>, tensor<60x128xf16>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
func.func @odd_n(%a: tensor<128x64xf16>, %b: tensor<64x100xf16>) -> tensor<128x100xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x100xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x100xf32>) -> tensor<128x100xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf16>, tensor<64x100xf16>) outs(%f : tensor<128x100xf32>) -> tensor<128x100xf32>
  return %r : tensor<128x100xf32>
}
func.func @f32_inputs(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
func.func @f16_accumulator(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>) -> tensor<128x128xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<128x128xf16>
  %f = linalg.fill ins(%zero : f16) outs(%e : tensor<128x128xf16>) -> tensor<128x128xf16>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf16>, tensor<64x128xf16>) outs(%f : tensor<128x128xf16>) -> tensor<128x128xf16>
  return %r : tensor<128x128xf16>
}

// -----

// f32 matmuls take the SIMT form of the contraction recipe (any chip).
// CHECK-LABEL: func.func @f32_simt
// CHECK-SAME: kind = contraction{{[,>]}}
// CHECK-SAME: workgroup_size = 256{{[,>]}}
// CHECK-SAME: workgroup_tile = [128, 128, 0]
// CHECK-SAME: workgroup_count = 256{{[,>]}}
// CHECK-SAME: simt_tile = [8, 8]
// CHECK-SAME: k_tile = 16{{[,>]}}
// SM75-LABEL: func.func @f32_simt
// SM75-SAME: kind = contraction{{[,>]}}
// SM75-SAME: simt_tile = [8, 8]
func.func @f32_simt(%a: tensor<2048x64xf32>, %b: tensor<64x2048xf32>) -> tensor<2048x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2048x64xf32>, tensor<64x2048xf32>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %r : tensor<2048x2048xf32>
}

// -----

// batch_matmul: one batch per workgroup (batch tile 1), 128x128 tiles as
// 32 batches of 4 tiles fill the GPU.
// CHECK-LABEL: func.func @batch_f16
// CHECK-SAME: kind = contraction{{[,>]}}
// CHECK-SAME: workgroup_size = 128{{[,>]}}
// CHECK-SAME: workgroup_tile = [1, 128, 128, 0]
// CHECK-SAME: workgroup_count = 128{{[,>]}}
// CHECK-SAME: intrinsic = mma_sync_f32_16x8x16_f16{{[,>]}}
// CHECK-SAME: k_tile = 32{{[,>]}}
// CHECK-SAME: pipeline_depth = 4{{[,>]}}
func.func @batch_f16(%a: tensor<32x256x64xf16>, %b: tensor<32x64x256xf16>) -> tensor<32x256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x256x256xf32>) -> tensor<32x256x256xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<32x256x64xf16>, tensor<32x64x256xf16>) outs(%f : tensor<32x256x256xf32>) -> tensor<32x256x256xf32>
  return %r : tensor<32x256x256xf32>
}

// -----

// A generic contracting the last dim of both operands (B stored N x K) with
// a scaling consumer over batch x M x N: the consumer's loops are tiled.
// f32 with B transposed has no SIMT form: the generic matmul strategy.
// CHECK-LABEL: func.func @transposed_b_f16
// CHECK-SAME: kind = contraction{{[,>]}}
// CHECK-SAME: workgroup_size = 128{{[,>]}}
// CHECK-SAME: workgroup_tile = [1, 64, 64]
// CHECK-SAME: workgroup_count = 16{{[,>]}}
// CHECK-LABEL: func.func @transposed_b_f32
// CHECK-SAME: kind = matmul{{[,>]}}
#qk_a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#qk_b = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#qk_c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @transposed_b_f16(%q: tensor<4x128x64xf16>, %k: tensor<4x128x64xf16>) -> tensor<4x128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %s = linalg.generic {indexing_maps = [#qk_a, #qk_b, #qk_c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<4x128x64xf16>, tensor<4x128x64xf16>) outs(%f : tensor<4x128x128xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<4x128x128xf32>
  %e2 = tensor.empty() : tensor<4x128x128xf32>
  %o = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<4x128x128xf32>) outs(%e2 : tensor<4x128x128xf32>) {
  ^bb0(%x: f32, %y: f32):
    %c = arith.constant 0.125 : f32
    %m = arith.mulf %x, %c : f32
    linalg.yield %m : f32
  } -> tensor<4x128x128xf32>
  return %o : tensor<4x128x128xf32>
}
func.func @transposed_b_f32(%q: tensor<4x128x64xf32>, %k: tensor<4x128x64xf32>) -> tensor<4x128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %s = linalg.generic {indexing_maps = [#qk_a, #qk_b, #qk_c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<4x128x64xf32>, tensor<4x128x64xf32>) outs(%f : tensor<4x128x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<4x128x128xf32>
  return %s : tensor<4x128x128xf32>
}

// -----

// Signed 8-bit integers with an i32 accumulator: mma.sync m16n8k32 .s8
// through the layout-table data path (one padded stage, no pipeline depth),
// K slices of 64. Unsigned operands (extui) keep the generic strategy.
// CHECK-LABEL: func.func @i8_signed
// CHECK-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], workgroup_count = 4, intrinsic = mma_sync_i32_16x8x32_s8, subgroup_grid = [2, 2], k_tile = 64>
// CHECK-LABEL: func.func @i8_unsigned
// CHECK-SAME: kind = matmul{{[,>]}}
// CHECK-NOT: intrinsic
func.func @i8_signed(%a: tensor<128x128xi8>, %b: tensor<128x128xi8>) -> tensor<128x128xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<128x128xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<128x128xi32>) -> tensor<128x128xi32>
  %r = linalg.matmul ins(%a, %b : tensor<128x128xi8>, tensor<128x128xi8>) outs(%f : tensor<128x128xi32>) -> tensor<128x128xi32>
  return %r : tensor<128x128xi32>
}
func.func @i8_unsigned(%a: tensor<128x128xi8>, %b: tensor<128x128xi8>) -> tensor<128x128xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<128x128xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<128x128xi32>) -> tensor<128x128xi32>
  %r = linalg.matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%a, %b : tensor<128x128xi8>, tensor<128x128xi8>) outs(%f : tensor<128x128xi32>) -> tensor<128x128xi32>
  return %r : tensor<128x128xi32>
}

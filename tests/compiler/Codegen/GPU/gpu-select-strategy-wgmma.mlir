// Contractions on sm_90a (the arch-specific form of sm_90) take the
// warpgroup form: wgmma m64nNk16 with A and B read from 128-byte-swizzled
// shared stages, two warpgroups of 64 rows per 128-row tile. sm_90 keeps
// mma.sync; so do 8-bit integers, layout fragments, and a shared-memory limit
// too small for the warpgroup stages.
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_90a max-shared-memory-bytes=232448" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_90 max-shared-memory-bytes=232448" | FileCheck %s --check-prefix=SM90
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_90a max-shared-memory-bytes=49152" | FileCheck %s --check-prefix=STATIC48
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_90a layout-fragments=true" | FileCheck %s --check-prefix=LAYOUT
// Exactly 192 KiB: the 128x256 stages would fit but not the up to 1008
// bytes that realigning the dynamic buffer to 1024 may take.
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy="subgroup-size=32 chip=sm_90a max-shared-memory-bytes=196608" | FileCheck %s --check-prefix=FIT192

// Enough 128x256 tiles to fill the GPU: two warpgroups of 64x256, K slices
// of 64 in 4 stages.
// CHECK-LABEL: func.func @large_f16
// CHECK-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [128, 256, 0], workgroup_count = 512, intrinsic = wgmma_f32_64x256x16_f16, subgroup_grid = [2, 1], k_tile = 64, pipeline_depth = 4>
// SM90-LABEL: func.func @large_f16
// SM90-SAME: intrinsic = mma_sync_f32_16x8x16_f16
// STATIC48-LABEL: func.func @large_f16
// STATIC48-SAME: workgroup_tile = [64, 64, 0]
// STATIC48-SAME: intrinsic = mma_sync_f32_16x8x16_f16
// FIT192-LABEL: func.func @large_f16
// FIT192-SAME: workgroup_tile = [128, 128, 0]
// FIT192-SAME: intrinsic = wgmma_f32_64x128x16_f16
// LAYOUT-LABEL: func.func @large_f16
// LAYOUT-SAME: intrinsic = mma_sync_f32_16x8x16_f16
// LAYOUT-SAME: layout_fragments = true
func.func @large_f16(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x4096xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4096x4096xf16>, tensor<4096x4096xf16>) outs(%f : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
}

// -----

// 128x256 and 128x128 tiles would leave SMs idle: one warpgroup of 64x128
// per workgroup (B transposed: N x K).
// CHECK-LABEL: func.func @medium_bf16_transposed_b
// CHECK-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 128, 0], workgroup_count = 128, intrinsic = wgmma_f32_64x128x16_bf16, subgroup_grid = [1, 1], k_tile = 64, pipeline_depth = 4>
func.func @medium_bf16_transposed_b(%a: tensor<1024x1024xbf16>, %b: tensor<1024x1024xbf16>) -> tensor<1024x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) outs(%f : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

// -----

// Partial tiles (M = 100, K = 40) are masked as in the mma.sync form.
// CHECK-LABEL: func.func @partial_f16
// CHECK-SAME: workgroup_tile = [64, 128, 0]
// CHECK-SAME: workgroup_count = 2{{[,>]}}
// CHECK-SAME: intrinsic = wgmma_f32_64x128x16_f16
func.func @partial_f16(%a: tensor<100x40xf16>, %b: tensor<40x128xf16>) -> tensor<100x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x128xf32>) -> tensor<100x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x40xf16>, tensor<40x128xf16>) outs(%f : tensor<100x128xf32>) -> tensor<100x128xf32>
  return %r : tensor<100x128xf32>
}

// -----

// 8-bit integers keep mma.sync.
// CHECK-LABEL: func.func @large_i8
// CHECK-SAME: intrinsic = mma_sync_i32_16x8x32_s8
func.func @large_i8(%a: tensor<2048x2048xi8>, %b: tensor<2048x2048xi8>) -> tensor<2048x2048xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<2048x2048xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<2048x2048xi32>) -> tensor<2048x2048xi32>
  %r = linalg.matmul ins(%a, %b : tensor<2048x2048xi8>, tensor<2048x2048xi8>) outs(%f : tensor<2048x2048xi32>) -> tensor<2048x2048xi32>
  return %r : tensor<2048x2048xi32>
}

// -----

// N = 64 (a 3x3x64 -> 64 convolution as a matmul, K = 576): 128x256 and
// 128x128 tiles would mask three quarters and half of every instruction;
// 128x64 tiles of two m64n64k16 warpgroups mask none. N = 96: every tiling
// pads N to 128, so the first of them (128x128) stays.
// CHECK-LABEL: func.func @narrow_n_f16
// CHECK-SAME: workgroup_tile = [128, 64, 0], workgroup_count = 784, intrinsic = wgmma_f32_64x64x16_f16, subgroup_grid = [2, 1], k_tile = 64, pipeline_depth = 4>
// CHECK-LABEL: func.func @narrow_n_bf16
// CHECK-SAME: intrinsic = wgmma_f32_64x64x16_bf16
// CHECK-LABEL: func.func @n96_f16
// CHECK-SAME: workgroup_tile = [128, 128, 0]
// CHECK-SAME: intrinsic = wgmma_f32_64x128x16_f16
// SM90-LABEL: func.func @narrow_n_f16
// SM90-SAME: workgroup_tile = [64, 64, 0]
// SM90-SAME: intrinsic = mma_sync_f32_16x8x16_f16
func.func @narrow_n_f16(%a: tensor<100352x576xf16>, %b: tensor<576x64xf16>) -> tensor<100352x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100352x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100352x64xf32>) -> tensor<100352x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100352x576xf16>, tensor<576x64xf16>) outs(%f : tensor<100352x64xf32>) -> tensor<100352x64xf32>
  return %r : tensor<100352x64xf32>
}

// -----

func.func @narrow_n_bf16(%a: tensor<100352x576xbf16>, %b: tensor<576x64xbf16>) -> tensor<100352x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100352x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100352x64xf32>) -> tensor<100352x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100352x576xbf16>, tensor<576x64xbf16>) outs(%f : tensor<100352x64xf32>) -> tensor<100352x64xf32>
  return %r : tensor<100352x64xf32>
}

// -----

func.func @n96_f16(%a: tensor<16384x512xf16>, %b: tensor<512x96xf16>) -> tensor<16384x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16384x96xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16384x96xf32>) -> tensor<16384x96xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16384x512xf16>, tensor<512x96xf16>) outs(%f : tensor<16384x96xf32>) -> tensor<16384x96xf32>
  return %r : tensor<16384x96xf32>
}

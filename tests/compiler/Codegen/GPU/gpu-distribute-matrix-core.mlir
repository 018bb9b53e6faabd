// RUN: kiln-opt %s --split-input-file --kiln-gpu-distribute-to-threads --verify-diagnostics | FileCheck %s

// One wave computes the 16x16 tile: its lanes load their A/B fragments
// (4 f16 each for MFMA) every 16 steps of K and accumulate with
// amdgpu.mfma, starting from C and storing the 4 results back.
// CHECK-LABEL: func.func @mfma
// CHECK: gpu.thread_id x
// CHECK-COUNT-4: memref.load %{{.*}} : memref<16x16xf32
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<4xf32>)
// CHECK-COUNT-8: memref.load
// CHECK: amdgpu.mfma 16x16x16 %{{.*}} * %{{.*}} + %{{.*}} blgp = {{ *}}none : vector<4xf16>, vector<4xf16>, vector<4xf32>
// CHECK-COUNT-4: memref.store %{{.*}} : memref<16x16xf32
func.func @mfma(%a: memref<16x64xf16>, %b: memref<64x16xf16>, %c: memref<16x16xf32>) attributes {kiln.gpu_strategy = {kind = "matmul", intrinsic = "mfma_f32_16x16x16_f16", workgroup_size = array<i64: 64, 1, 1>}} {
  linalg.matmul ins(%a, %b : memref<16x64xf16>, memref<64x16xf16>) outs(%c : memref<16x16xf32>)
  return
}

// -----

// WMMA (gfx11, wave32): 16 f16 of A and B per lane, 8 f32 accumulators.
// CHECK-LABEL: func.func @wmma
// CHECK: scf.for {{.*}} -> (vector<8xf32>)
// CHECK: amdgpu.wmma 16x16x16 %{{.*}} * %{{.*}} + %{{.*}} : vector<16xf16>, vector<16xf16>, vector<8xf32>
// CHECK-COUNT-8: memref.store
func.func @wmma(%a: memref<16x32xf16>, %b: memref<32x16xf16>, %c: memref<16x16xf32>) attributes {kiln.gpu_strategy = {kind = "matmul", intrinsic = "wmma_f32_16x16x16_f16", workgroup_size = array<i64: 32, 1, 1>}} {
  linalg.matmul ins(%a, %b : memref<16x32xf16>, memref<32x16xf16>) outs(%c : memref<16x16xf32>)
  return
}

// -----

func.func @bad_intrinsic(%a: memref<16x64xf16>, %b: memref<64x16xf16>, %c: memref<16x16xf32>) attributes {kiln.gpu_strategy = {kind = "matmul", intrinsic = "mfma_f64_4x4x4_f64", workgroup_size = array<i64: 64, 1, 1>}} {
  // expected-error @+1 {{unknown matrix-core intrinsic 'mfma_f64_4x4x4_f64' (expected mfma_f32_16x16x16_f16 or wmma_f32_16x16x16_f16)}}
  linalg.matmul ins(%a, %b : memref<16x64xf16>, memref<64x16xf16>) outs(%c : memref<16x16xf32>)
  return
}

// -----

func.func @bad_tile(%a: memref<32x64xf16>, %b: memref<64x16xf16>, %c: memref<32x16xf32>) attributes {kiln.gpu_strategy = {kind = "matmul", intrinsic = "mfma_f32_16x16x16_f16", workgroup_size = array<i64: 64, 1, 1>}} {
  // expected-error @+1 {{workgroup tile does not fit mfma_f32_16x16x16_f16: expected 16xK f16 * Kx16 f16 -> 16x16 f32 with K a multiple of 16}}
  linalg.matmul ins(%a, %b : memref<32x64xf16>, memref<64x16xf16>) outs(%c : memref<32x16xf32>)
  return
}

// -----

func.func @bad_workgroup(%a: memref<16x64xf16>, %b: memref<64x16xf16>, %c: memref<16x16xf32>) attributes {kiln.gpu_strategy = {kind = "matmul", intrinsic = "mfma_f32_16x16x16_f16", workgroup_size = array<i64: 256, 1, 1>}} {
  // expected-error @+1 {{mfma_f32_16x16x16_f16 needs a workgroup of 64 threads, got 256}}
  linalg.matmul ins(%a, %b : memref<16x64xf16>, memref<64x16xf16>) outs(%c : memref<16x16xf32>)
  return
}

// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-attention --verify-diagnostics | FileCheck %s

// The fused attention kernel replaces the bufferized chain (2 batches of 128
// query rows, 192 keys, head dim 64, f16) with query_rows = 128: a
// workgroup forall over (batch, 1 block of 128 rows), two shared stages of
// K and V blocks (64 x 72 each); Q's copy, rows 0-63 into K's second stage
// and 64-127 into V's (64 x 64 f16 = 512 chunks of 16 bytes: 4 per thread
// each), and block 0's (8 per thread) are in flight before Q's fragments
// are read (4 ldmatrix.x4 per m-tile for d = 64), then a barrier. The loop
// over the 3 key blocks carries the four rows' (two m-tiles) max and
// partial sums and 2 x 8 O tiles; every
// iteration but the last copies the next block (wait with 1 group pending),
// the last waits for all. Per block: 4 x 4 ldmatrix of K and 16 x 2 mma for
// S = Q K^T, quad max exchanges (xor 1, 2), exp, 4 x 4 ldmatrix.trans of V
// and 32 mma for P V, then a barrier. After the loop, the sums' quad
// exchanges, one reciprocal per row, and 2-element stores of rows g and g + 8. The
// chain, its fills and temporaries are gone.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: linalg.
// CHECK: scf.forall (%[[B:.*]], %[[MB:.*]]) in (2, 1) {
// CHECK: gpu.thread_id x
// CHECK: %[[K:.*]] = memref.alloc() {alignment = 16 : i64} : memref<2x64x72xf16, #gpu.address_space<workgroup>>
// CHECK: %[[V:.*]] = memref.alloc() {alignment = 16 : i64} : memref<2x64x72xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvgpu.device_async_copy %arg0[%[[B]], {{.*}}], %[[K]][%c1{{.*}}, {{.*}}], 8 {bypassL1}
// CHECK-COUNT-4: nvgpu.device_async_copy %arg0[%[[B]], {{.*}}], %[[V]][%c1{{.*}}, {{.*}}], 8 {bypassL1}
// CHECK: %[[FIRST:.*]] = nvgpu.device_async_create_group
// CHECK-COUNT-4: nvgpu.device_async_copy %arg1[%[[B]], {{.*}}], %[[K]][{{.*}}], 8 {bypassL1}
// CHECK-COUNT-4: nvgpu.device_async_copy %arg2[%[[B]], {{.*}}], %[[V]][{{.*}}], 8 {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[FIRST]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: nvgpu.ldmatrix %[[K]][%c1{{.*}}, {{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK-COUNT-4: nvgpu.ldmatrix %[[V]][%c1{{.*}}, {{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c3{{.*}} step %c1{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: scf.if
// CHECK: nvgpu.device_async_wait %[[FIRST]] {numGroups = 0 : i32}
// CHECK: } else {
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[FIRST]] {numGroups = 1 : i32}
// CHECK: nvgpu.ldmatrix %[[K]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// CHECK: nvgpu.ldmatrix %[[V]][{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: arith.divf %cst{{.*}}, %{{.*}} : f32
// CHECK: arith.mulf
// CHECK: vector.store %{{.*}}, %arg3[%[[B]], %{{.*}}, %{{.*}}] : memref<2x128x64xf16>, vector<2xf16>
// CHECK-NOT: linalg.
// CHECK-NOT: memref.alloc() {alignment = 64
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>
  func.func @attention(%arg0: memref<2x128x64xf16>, %arg1: memref<2x192x64xf16>, %arg2: memref<2x192x64xf16>, %arg3: memref<2x128x64xf16>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = attention, workgroup_size = 128, subgroup_size = 32, workgroup_count = 4, intrinsic = mma_sync_f32_16x8x16_f16, k_tile = 64, pipeline_depth = 2, query_rows = 128>} {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant 1.250000e-01 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<2x128x192xf32, #gpu.address_space<workgroup>>
    linalg.fill ins(%cst : f32) outs(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>)
    %alloc_2 = memref.alloc() {alignment = 64 : i64} : memref<2x128xf32, #gpu.address_space<workgroup>>
    %alloc_3 = memref.alloc() {alignment = 64 : i64} : memref<2x128xf32, #gpu.address_space<workgroup>>
    linalg.fill ins(%cst_0 : f32) outs(%alloc_3 : memref<2x128xf32, #gpu.address_space<workgroup>>)
    linalg.fill ins(%cst : f32) outs(%alloc_2 : memref<2x128xf32, #gpu.address_space<workgroup>>)
    %alloc_4 = memref.alloc() {alignment = 64 : i64} : memref<2x128x192xf16, #gpu.address_space<workgroup>>
    %alloc_5 = memref.alloc() {alignment = 64 : i64} : memref<2x128x64xf32, #gpu.address_space<workgroup>>
    linalg.fill ins(%cst : f32) outs(%alloc_5 : memref<2x128x64xf32, #gpu.address_space<workgroup>>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<2x128x64xf16>, memref<2x192x64xf16>) outs(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>) {
    ^bb0(%in: f16, %in_6: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_6 : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>) outs(%alloc_3 : memref<2x128xf32, #gpu.address_space<workgroup>>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %in, %out : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alloc, %alloc_3 : memref<2x128x192xf32, #gpu.address_space<workgroup>>, memref<2x128xf32, #gpu.address_space<workgroup>>) outs(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_6 : f32
      %1 = arith.mulf %0, %cst_1 : f32
      %2 = math.exp %1 : f32
      linalg.yield %2 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>) outs(%alloc_2 : memref<2x128xf32, #gpu.address_space<workgroup>>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.addf %in, %out : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>) outs(%alloc_4 : memref<2x128x192xf16, #gpu.address_space<workgroup>>) {
    ^bb0(%in: f32, %out: f16):
      %0 = arith.truncf %in : f32 to f16
      linalg.yield %0 : f16
    }
    linalg.batch_matmul ins(%alloc_4, %arg2 : memref<2x128x192xf16, #gpu.address_space<workgroup>>, memref<2x192x64xf16>) outs(%alloc_5 : memref<2x128x64xf32, #gpu.address_space<workgroup>>)
    linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alloc_5, %alloc_2 : memref<2x128x64xf32, #gpu.address_space<workgroup>>, memref<2x128xf32, #gpu.address_space<workgroup>>) outs(%arg3 : memref<2x128x64xf16>) {
    ^bb0(%in: f32, %in_6: f32, %out: f16):
      %0 = arith.divf %in, %in_6 : f32
      %1 = arith.truncf %0 : f32 to f16
      linalg.yield %1 : f16
    }
    return
  }

// -----

// A kernel given the attention strategy must hold one whole chain: here the
// row sum multiplies.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>
  // expected-error @+1 {{attention strategy: expected one attention chain in the kernel, found 0}}
  func.func @broken(%arg0: memref<2x128x64xf16>, %arg1: memref<2x192x64xf16>, %arg2: memref<2x192x64xf16>, %arg3: memref<2x128x64xf16>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = attention, workgroup_size = 128, subgroup_size = 32, workgroup_count = 4, intrinsic = mma_sync_f32_16x8x16_f16, k_tile = 64, pipeline_depth = 2, query_rows = 128>} {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant 1.250000e-01 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<2x128x192xf32, #gpu.address_space<workgroup>>
    linalg.fill ins(%cst : f32) outs(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>)
    %alloc_2 = memref.alloc() {alignment = 64 : i64} : memref<2x128xf32, #gpu.address_space<workgroup>>
    %alloc_3 = memref.alloc() {alignment = 64 : i64} : memref<2x128xf32, #gpu.address_space<workgroup>>
    linalg.fill ins(%cst_0 : f32) outs(%alloc_3 : memref<2x128xf32, #gpu.address_space<workgroup>>)
    linalg.fill ins(%cst : f32) outs(%alloc_2 : memref<2x128xf32, #gpu.address_space<workgroup>>)
    %alloc_4 = memref.alloc() {alignment = 64 : i64} : memref<2x128x192xf16, #gpu.address_space<workgroup>>
    %alloc_5 = memref.alloc() {alignment = 64 : i64} : memref<2x128x64xf32, #gpu.address_space<workgroup>>
    linalg.fill ins(%cst : f32) outs(%alloc_5 : memref<2x128x64xf32, #gpu.address_space<workgroup>>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<2x128x64xf16>, memref<2x192x64xf16>) outs(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>) {
    ^bb0(%in: f16, %in_6: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_6 : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>) outs(%alloc_3 : memref<2x128xf32, #gpu.address_space<workgroup>>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %in, %out : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alloc, %alloc_3 : memref<2x128x192xf32, #gpu.address_space<workgroup>>, memref<2x128xf32, #gpu.address_space<workgroup>>) outs(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_6 : f32
      %1 = arith.mulf %0, %cst_1 : f32
      %2 = math.exp %1 : f32
      linalg.yield %2 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>) outs(%alloc_2 : memref<2x128xf32, #gpu.address_space<workgroup>>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.mulf %in, %out : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alloc : memref<2x128x192xf32, #gpu.address_space<workgroup>>) outs(%alloc_4 : memref<2x128x192xf16, #gpu.address_space<workgroup>>) {
    ^bb0(%in: f32, %out: f16):
      %0 = arith.truncf %in : f32 to f16
      linalg.yield %0 : f16
    }
    linalg.batch_matmul ins(%alloc_4, %arg2 : memref<2x128x192xf16, #gpu.address_space<workgroup>>, memref<2x192x64xf16>) outs(%alloc_5 : memref<2x128x64xf32, #gpu.address_space<workgroup>>)
    linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alloc_5, %alloc_2 : memref<2x128x64xf32, #gpu.address_space<workgroup>>, memref<2x128xf32, #gpu.address_space<workgroup>>) outs(%arg3 : memref<2x128x64xf16>) {
    ^bb0(%in: f32, %in_6: f32, %out: f16):
      %0 = arith.divf %in, %in_6 : f32
      %1 = arith.truncf %0 : f32 to f16
      linalg.yield %1 : f16
    }
    return
  }

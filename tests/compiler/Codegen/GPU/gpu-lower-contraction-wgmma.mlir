// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-contraction --verify-diagnostics | FileCheck %s

// The warpgroup form (sm_90a): a 128x128 tile of f16 x f16 -> f32 with its
// truncating consumer, two warpgroups of 64x128 (256 threads), K = 256 in 4
// slices of 64 through 4 cp.async stages. A's stages are 128 rows of 64 f16
// (128 bytes: one swizzle row each); B (K x N) is kept as two column blocks
// of 64 K rows x 64 columns per stage, the N-major layout wgmma reads; both
// are 1024-byte aligned (swizzle atoms). The instructions stay in flight for
// one more slice, so only 2 slices are ahead: 2 are copied before the loop;
// each of its 2 iterations waits for its slice with 1 younger group
// pending, makes the copies visible to the async proxy, passes a barrier,
// refills a stage, then issues 4 wgmma (one per K step of 16) on
// descriptors and waits until only this slice's group is pending. The last
// 2 slices follow the loop; a final wait that the accumulators depend on
// precedes the epilogue.
// CHECK-DAG: #[[A_AT:.*]] = affine_map<(d0, d1, d2) -> (d0 + d1 * 16384 + d2 * 8192)>
// CHECK-DAG: #[[B_AT:.*]] = affine_map<(d0, d1, d2) -> (d0 + d1 * 16384 + d2 * 16384)>
// CHECK-DAG: #[[A_AT3:.*]] = affine_map<(d0, d1, d2) -> (d0 + d1 * 16384 + d2 * 8192 + 96)>
// CHECK-DAG: #[[B_AT3:.*]] = affine_map<(d0, d1, d2) -> (d0 + d1 * 16384 + d2 * 16384 + 6144)>
// CHECK-LABEL: func.func @tile_128x128
// CHECK: %[[A_SMEM:.*]] = memref.alloc() {alignment = 1024 : i64} : memref<4x128x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[B_SMEM:.*]] = memref.alloc() {alignment = 1024 : i64} : memref<4x2x64x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[A_BASE:.*]] = memref.extract_aligned_pointer_as_index %[[A_SMEM]]
// CHECK: %[[B_BASE:.*]] = memref.extract_aligned_pointer_as_index %[[B_SMEM]]
// 128x64 f16 over 256 threads: four 16-byte copies each, of A and of B.
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK: %[[FIRST:.*]] = nvgpu.device_async_create_group
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<64xf32>)
// CHECK-NEXT: nvgpu.device_async_wait %[[FIRST]] {numGroups = 1 : i32}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: nvvm.wgmma.fence.aligned
// Descriptors: start address >> 4, leading byte offset 16 (A) or 8192 (B:
// the next column block), stride 1024 (8 rows of 128 bytes), 128-byte
// swizzle (bit 62); K step 3 is 96 bytes into A's rows and 3 x 16 rows of
// 128 bytes into B's blocks.
// CHECK: %[[A0:.*]] = affine.apply #[[A_AT]](%[[A_BASE]], %{{.*}}, %{{.*}})
// CHECK: %[[B0:.*]] = affine.apply #[[B_AT]](%[[B_BASE]], %{{.*}}, %{{.*}})
// CHECK: arith.index_castui %[[A0]] : index to i64
// CHECK: arith.andi %{{.*}}, %c262143_i64
// CHECK: arith.shrui %{{.*}}, %c4_i64
// CHECK: arith.constant 4611686293305360384 : i64
// CHECK: arith.constant 4611686293338849280 : i64
// CHECK: affine.apply #[[A_AT3]](%[[A_BASE]]
// CHECK: affine.apply #[[B_AT3]](%[[B_BASE]]
// CHECK-COUNT-4: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %[[FIRST]] {numGroups = 1 : i32}
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvgpu.device_async_wait %[[FIRST]] {numGroups = 0 : i32}
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 0;", "=f,=f,
// Epilogue: the accumulators in wgmma's C layout (warp w of a warpgroup
// owns rows 16w .. 16w + 15), adjacent columns stored in pairs.
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: vector.store %{{.*}} {alignment = 4 : i64} : memref<128x128xf16>, vector<2xf16>
// CHECK-NOT: linalg.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @tile_128x128(%arg0: memref<128x256xf16>, %arg1: memref<256x128xf16>, %arg2: memref<128x128xf16>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [128, 128], workgroup_count = 1, intrinsic = wgmma_f32_64x128x16_f16, subgroup_grid = [2, 1], k_tile = 64, pipeline_depth = 4>} {
  %cst = arith.constant 0.000000e+00 : f32
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<128x128xf32, #gpu.address_space<workgroup>>
  linalg.fill ins(%cst : f32) outs(%alloc : memref<128x128xf32, #gpu.address_space<workgroup>>)
  linalg.matmul ins(%arg0, %arg1 : memref<128x256xf16>, memref<256x128xf16>) outs(%alloc : memref<128x128xf32, #gpu.address_space<workgroup>>)
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%alloc : memref<128x128xf32, #gpu.address_space<workgroup>>) outs(%arg2 : memref<128x128xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  return
}

// -----

// B stored N x K (Q K^T) is K-major like A: its stages are 128 rows of 64
// bf16, its descriptors those of A, and the instruction reads it without
// transposing (layout col). One slice of K = 64 is copied before the
// multiply (3 stages: 1 ahead). Without a fill the accumulators start from
// C's contents.
// CHECK-LABEL: func.func @transposed_b
// CHECK: memref.alloc() {alignment = 1024 : i64} : memref<3x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloc() {alignment = 1024 : i64} : memref<3x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-64: memref.load %{{.*}} : memref<64x128xf32, strided<[128, 1]>>
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: 4611686293338849280
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<64x128xf32, strided<[128, 1]>>, vector<2xf32>
func.func @transposed_b(%arg0: memref<100x64xbf16>, %arg1: memref<128x64xbf16>, %arg2: memref<100x128xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 128, 0], intrinsic = wgmma_f32_64x128x16_bf16, subgroup_grid = [1, 1], k_tile = 64, pipeline_depth = 3>} {
  %v = memref.subview %arg0[0, 0] [64, 64] [1, 1] : memref<100x64xbf16> to memref<64x64xbf16, strided<[64, 1]>>
  %c = memref.subview %arg2[0, 0] [64, 128] [1, 1] : memref<100x128xf32> to memref<64x128xf32, strided<[128, 1]>>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%v, %arg1 : memref<64x64xbf16, strided<[64, 1]>>, memref<128x64xbf16>) outs(%c : memref<64x128xf32, strided<[128, 1]>>)
  return
}

// -----

// A warpgroup K slice is one 128-byte swizzle row: 64 f16.
// expected-error @+1 {{contraction strategy: wgmma_f32_64x128x16_f16 needs a k_tile of 64 (one 128-byte swizzle row), N per warpgroup a multiple of 64, and no layout_fragments}}
func.func @wrong_k_tile(%arg0: memref<64x64xf16>, %arg1: memref<64x128xf16>, %arg2: memref<64x128xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 128, 0], intrinsic = wgmma_f32_64x128x16_f16, subgroup_grid = [1, 1], k_tile = 32, pipeline_depth = 3>} {
  linalg.matmul ins(%arg0, %arg1 : memref<64x64xf16>, memref<64x128xf16>) outs(%arg2 : memref<64x128xf32>)
  return
}

// -----

// The instructions in flight hold a stage: at least 3.
// expected-error @+1 {{contraction strategy: pipeline_depth 2 is outside 3..8}}
func.func @two_stages(%arg0: memref<64x64xf16>, %arg1: memref<64x128xf16>, %arg2: memref<64x128xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 128, 0], intrinsic = wgmma_f32_64x128x16_f16, subgroup_grid = [1, 1], k_tile = 64, pipeline_depth = 2>} {
  linalg.matmul ins(%arg0, %arg1 : memref<64x64xf16>, memref<64x128xf16>) outs(%arg2 : memref<64x128xf32>)
  return
}

// -----

// Two warpgroups need 256 threads.
// expected-error @+1 {{contraction strategy: workgroup tile 128x128x64 with subgroup grid 2x1 and 128 threads does not fit wgmma_f32_64x128x16_f16}}
func.func @wrong_threads(%arg0: memref<128x64xf16>, %arg1: memref<64x128xf16>, %arg2: memref<128x128xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [128, 128, 0], intrinsic = wgmma_f32_64x128x16_f16, subgroup_grid = [2, 1], k_tile = 64, pipeline_depth = 3>} {
  linalg.matmul ins(%arg0, %arg1 : memref<128x64xf16>, memref<64x128xf16>) outs(%arg2 : memref<128x128xf32>)
  return
}

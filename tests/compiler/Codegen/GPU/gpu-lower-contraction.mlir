// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-contraction --verify-diagnostics | FileCheck %s

// A 64x64 workgroup tile of f16 x f16 -> f32 with its truncating consumer,
// 4 warps as 2x2 (each 32x32: 2x4 mma.sync tiles of 16x8), K = 128 in 4
// slices of 32: the fill, matmul, consumer and shared temporary are
// replaced. Shared buffers have 3 stages (pipeline_depth), unpadded: the
// 16-byte chunk index is XORed with (row floordiv 2) mod 4 in A's rows of 4
// chunks and with row mod 8 in B's rows of 8 chunks. Slices 0 and 1 are in
// flight before the loop; each of its 2 iterations waits for its slice with
// one younger group pending, passes one barrier, refills the stage read in
// the previous iteration and multiplies (ldmatrix fragments); the last 2
// slices are multiplied after the loop, waiting for 1 then 0 pending groups.
// CHECK-DAG: #[[A_PHASE:.*]] = affine_map<(d0, d1) -> ((d0 floordiv 2) mod 4)>
// CHECK-DAG: #[[B_PHASE:.*]] = affine_map<(d0, d1) -> (d0 mod 8)>
// CHECK-DAG: #[[STAGE:.*]] = affine_map<(d0) -> (d0 mod 3)>
// CHECK-LABEL: func.func @tile_64x64
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[A_SMEM:.*]] = memref.alloc() {alignment = 16 : i64} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
// CHECK: %[[B_SMEM:.*]] = memref.alloc() {alignment = 16 : i64} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
// 64x32 and 32x64 f16 over 128 threads: two 16-byte copies each.
// CHECK: affine.apply #[[A_PHASE]]
// CHECK: arith.xori
// CHECK: nvgpu.device_async_copy {{.*}}, 8 {bypassL1}
// CHECK: affine.apply #[[B_PHASE]]
// CHECK: arith.xori
// CHECK: %[[FIRST:.*]] = nvgpu.device_async_create_group
// CHECK-COUNT-4: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for %[[SLICE:.*]] = %c0{{.*}} to %c2{{.*}} step %c1{{.*}} iter_args(
// CHECK-NEXT: nvgpu.device_async_wait %[[FIRST]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: %[[CUR:.*]] = affine.apply #[[STAGE]](%[[SLICE]])
// CHECK: nvgpu.ldmatrix %[[A_SMEM]][%[[CUR]], {{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %[[B_SMEM]][%[[CUR]], {{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %[[FIRST]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK: nvgpu.device_async_wait %[[FIRST]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-16: nvvm.mma.sync
// Epilogue: the consumer's truncation on each accumulator; a lane's two
// adjacent columns of a row are stored as one vector.
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: vector.store %{{.*}} {alignment = 4 : i64} : memref<64x64xf16, strided<[64, 1], offset: ?>>, vector<2xf16>
// CHECK-NOT: memref.store
// CHECK-NOT: linalg.
// CHECK-NOT: memref<64x64xf32, #gpu.address_space<workgroup>>
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @tile_64x64(%arg0: memref<128x128xf16>, %arg1: memref<128x64xf16>, %arg2: memref<128x64xf16>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64], workgroup_count = 2, intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 3>} {
  %cst = arith.constant 0.000000e+00 : f32
  scf.forall (%arg3, %arg4) = (0, 0) to (128, 64) step (64, 64) {
    %subview = memref.subview %arg0[%arg3, 0] [64, 128] [1, 1] : memref<128x128xf16> to memref<64x128xf16, strided<[128, 1], offset: ?>>
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32, #gpu.address_space<workgroup>>
    linalg.fill ins(%cst : f32) outs(%alloc : memref<64x64xf32, #gpu.address_space<workgroup>>)
    linalg.matmul ins(%subview, %arg1 : memref<64x128xf16, strided<[128, 1], offset: ?>>, memref<128x64xf16>) outs(%alloc : memref<64x64xf32, #gpu.address_space<workgroup>>)
    %subview_0 = memref.subview %arg2[%arg3, 0] [64, 64] [1, 1] : memref<128x64xf16> to memref<64x64xf16, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%alloc : memref<64x64xf32, #gpu.address_space<workgroup>>) outs(%subview_0 : memref<64x64xf16, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f16):
      %0 = arith.truncf %in : f32 to f16
      linalg.yield %0 : f16
    }
  } {mapping = [#gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>]}
  return
}

// -----

// One batch of a generic contracting the last dim of both operands (Q K^T):
// rank-reducing views drop the unit batch dim, B's shared slices are N x K
// (64 x 32, swizzled as A's), and its fragments come from ldmatrix.x4
// without .trans.
// CHECK-LABEL: func.func @batch_transposed_b
// CHECK-DAG: memref.subview %{{.*}}[0, 0, 0] [1, 64, 64] [1, 1, 1] : memref<1x64x64xbf16, strided<[4096, 64, 1], offset: ?>> to memref<64x64xbf16, strided<[64, 1], offset: ?>>
// CHECK-DAG: memref.subview %{{.*}}[0, 0, 0] [1, 64, 64] [1, 1, 1] : memref<1x64x64xf32, strided<[8192, 128, 1], offset: ?>> to memref<64x64xf32, strided<[128, 1], offset: ?>>
// CHECK: %[[A_SMEM:.*]] = memref.alloc() {alignment = 16 : i64} : memref<3x64x32xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[B_SMEM:.*]] = memref.alloc() {alignment = 16 : i64} : memref<3x64x32xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.ldmatrix %[[A_SMEM]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %[[B_SMEM]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK-NOT: transpose = true
// CHECK: nvvm.mma.sync
// CHECK-NOT: linalg.
#qk_a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#qk_b = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#qk_c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @batch_transposed_b(%arg0: memref<2x64x64xbf16>, %arg1: memref<2x128x64xbf16>, %arg2: memref<2x64x128xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [1, 64, 64, 0], intrinsic = mma_sync_f32_16x8x16_bf16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 3>} {
  %cst = arith.constant 0.000000e+00 : f32
  scf.forall (%arg3, %arg4, %arg5) = (0, 0, 0) to (2, 64, 128) step (1, 64, 64) {
    %subview = memref.subview %arg0[%arg3, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xbf16> to memref<1x64x64xbf16, strided<[4096, 64, 1], offset: ?>>
    %subview_0 = memref.subview %arg1[%arg3, %arg5, 0] [1, 64, 64] [1, 1, 1] : memref<2x128x64xbf16> to memref<1x64x64xbf16, strided<[8192, 64, 1], offset: ?>>
    %subview_1 = memref.subview %arg2[%arg3, 0, %arg5] [1, 64, 64] [1, 1, 1] : memref<2x64x128xf32> to memref<1x64x64xf32, strided<[8192, 128, 1], offset: ?>>
    linalg.fill ins(%cst : f32) outs(%subview_1 : memref<1x64x64xf32, strided<[8192, 128, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#qk_a, #qk_b, #qk_c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%subview, %subview_0 : memref<1x64x64xbf16, strided<[4096, 64, 1], offset: ?>>, memref<1x64x64xbf16, strided<[8192, 64, 1], offset: ?>>) outs(%subview_1 : memref<1x64x64xf32, strided<[8192, 128, 1], offset: ?>>) {
    ^bb0(%in: bf16, %in_2: bf16, %out: f32):
      %0 = arith.extf %in : bf16 to f32
      %1 = arith.extf %in_2 : bf16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  } {mapping = [#gpu.block<linear_dim_2>, #gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>]}
  return
}

// -----

// Partial tiles (100x40 * 40x72 in 64x64 tiles): the extents of M and N
// come from the operands' dynamic sizes and K = 40 ends inside its second
// slice. Each 16-byte copy checks its source row and column against them;
// outside, it reads no bytes (zero fill) from a clamped address. Results
// are stored only inside M x N.
// CHECK-LABEL: func.func @partial_tiles
// CHECK: %[[M:.*]] = memref.dim %{{.*}}, %c0{{.*}} : memref<?x40xf16
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %c1{{.*}} : memref<40x?xf16
// CHECK: %[[C40:.*]] = arith.constant 40 : index
// CHECK: %[[ROW_OK:.*]] = arith.cmpi ult, %{{.*}}, %[[M]] : index
// CHECK: %[[COL_OK:.*]] = arith.cmpi ult, %{{.*}}, %[[C40]] : index
// CHECK: %[[OK:.*]] = arith.andi %[[ROW_OK]], %[[COL_OK]] : i1
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[COUNT:.*]] = arith.select %[[OK]], %[[C8]], %c0{{.*}} : index
// CHECK: nvgpu.device_async_copy %{{.*}}, 8, %[[COUNT]] {bypassL1}
// CHECK: arith.cmpi ult, %{{.*}}, %[[N]] : index
// CHECK: scf.if
// CHECK: vector.store {{.*}} : memref<?x?xf32, strided<[72, 1], offset: ?>>, vector<2xf32>
#partial_m = affine_map<(d0) -> (-d0 + 100, 64)>
#partial_n = affine_map<(d0) -> (-d0 + 72, 64)>
func.func @partial_tiles(%arg0: memref<100x40xf16>, %arg1: memref<40x72xf16>, %arg2: memref<100x72xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 3>} {
  %cst = arith.constant 0.000000e+00 : f32
  scf.forall (%arg3, %arg4) = (0, 0) to (100, 72) step (64, 64) {
    %0 = affine.min #partial_m(%arg3)
    %1 = affine.min #partial_n(%arg4)
    %subview = memref.subview %arg0[%arg3, 0] [%0, 40] [1, 1] : memref<100x40xf16> to memref<?x40xf16, strided<[40, 1], offset: ?>>
    %subview_0 = memref.subview %arg1[0, %arg4] [40, %1] [1, 1] : memref<40x72xf16> to memref<40x?xf16, strided<[72, 1], offset: ?>>
    %subview_1 = memref.subview %arg2[%arg3, %arg4] [%0, %1] [1, 1] : memref<100x72xf32> to memref<?x?xf32, strided<[72, 1], offset: ?>>
    linalg.fill ins(%cst : f32) outs(%subview_1 : memref<?x?xf32, strided<[72, 1], offset: ?>>)
    linalg.matmul ins(%subview, %subview_0 : memref<?x40xf16, strided<[40, 1], offset: ?>>, memref<40x?xf16, strided<[72, 1], offset: ?>>) outs(%subview_1 : memref<?x?xf32, strided<[72, 1], offset: ?>>)
  } {mapping = [#gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>]}
  return
}

// -----

// No fill and no consumer: the accumulators start from C and go back to it.
// One K slice: no loop.
// CHECK-LABEL: func.func @accumulate_in_place
// CHECK-COUNT-32: memref.load %arg2
// CHECK-NOT: scf.for
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK-COUNT-16: vector.store {{.*}}, %arg2{{.*}} {alignment = 8 : i64} : memref<64x64xf32>, vector<2xf32>
func.func @accumulate_in_place(%arg0: memref<64x32xbf16>, %arg1: memref<32x64xbf16>, %arg2: memref<64x64xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = mma_sync_f32_16x8x16_bf16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 2>} {
  linalg.matmul ins(%arg0, %arg1 : memref<64x32xbf16>, memref<32x64xbf16>) outs(%arg2 : memref<64x64xf32>)
  return
}

// -----

// AMD forms: one LDS stage with rows padded by 8 elements, A fragments read
// from LDS in runs of at most 16 bytes. RDNA 3 WMMA: each lane holds a
// whole 16-element row of A (two 8-element loads) and 8 accumulators.
// CHECK-LABEL: func.func @wmma_gfx11
// CHECK: memref.alloc() {alignment = 16 : i64} : memref<32x40xf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloc() {alignment = 16 : i64} : memref<32x40xf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: vector.load %{{.*}} : memref<32x40xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: vector.load %{{.*}} : memref<32x40xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK-COUNT-4: amdgpu.wmma 16x16x16 %{{.*}} * %{{.*}} + %{{.*}} : vector<16xf16>, vector<16xf16>, vector<8xf32>
// CHECK-NOT: nvgpu
func.func @wmma_gfx11(%arg0: memref<32x32xf16>, %arg1: memref<32x32xf16>, %arg2: memref<32x32xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 32, subgroup_size = 32, workgroup_tile = [32, 32, 0], intrinsic = wmma_gfx11_f32_16x16x16_f16, subgroup_grid = [1, 1], k_tile = 32>} {
  linalg.matmul ins(%arg0, %arg1 : memref<32x32xf16>, memref<32x32xf16>) outs(%arg2 : memref<32x32xf32>)
  return
}

// -----

// RDNA 4 WMMA (bf16): 8 elements of A and B per lane, 8 accumulators.
// CHECK-LABEL: func.func @wmma_gfx12_bf16
// CHECK-COUNT-4: amdgpu.wmma 16x16x16 %{{.*}} * %{{.*}} + %{{.*}} : vector<8xbf16>, vector<8xbf16>, vector<8xf32>
func.func @wmma_gfx12_bf16(%arg0: memref<32x32xbf16>, %arg1: memref<32x32xbf16>, %arg2: memref<32x32xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 32, subgroup_size = 32, workgroup_tile = [32, 32, 0], intrinsic = wmma_gfx12_f32_16x16x16_bf16, subgroup_grid = [1, 1], k_tile = 32>} {
  linalg.matmul ins(%arg0, %arg1 : memref<32x32xbf16>, memref<32x32xbf16>) outs(%arg2 : memref<32x32xf32>)
  return
}

// -----

// CDNA 4 MFMA with K = 32 (gfx950): 8 elements per lane, one 16-byte load.
// CHECK-LABEL: func.func @mfma_16x16x32
// CHECK: vector.load %{{.*}} : memref<32x40xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK-COUNT-4: amdgpu.mfma 16x16x32 %{{.*}} * %{{.*}} + %{{.*}} blgp = {{ *}}none : vector<8xf16>, vector<8xf16>, vector<4xf32>
func.func @mfma_16x16x32(%arg0: memref<32x32xf16>, %arg1: memref<32x32xf16>, %arg2: memref<32x32xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 64, subgroup_size = 32, workgroup_tile = [32, 32, 0], intrinsic = mfma_f32_16x16x32_f16, subgroup_grid = [1, 1], k_tile = 32>} {
  linalg.matmul ins(%arg0, %arg1 : memref<32x32xf16>, memref<32x32xf16>) outs(%arg2 : memref<32x32xf32>)
  return
}

// -----

// A wave64 instruction with a workgroup of 32 threads per subgroup.
// expected-error @+1 {{contraction strategy: workgroup tile 32x32x32 with subgroup grid 1x1 and 32 threads does not fit mfma_f32_16x16x16_f16}}
func.func @mfma_wrong_wave(%arg0: memref<32x32xf16>, %arg1: memref<32x32xf16>, %arg2: memref<32x32xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 32, subgroup_size = 32, workgroup_tile = [32, 32, 0], intrinsic = mfma_f32_16x16x16_f16, subgroup_grid = [1, 1], k_tile = 32>} {
  linalg.matmul ins(%arg0, %arg1 : memref<32x32xf16>, memref<32x32xf16>) outs(%arg2 : memref<32x32xf32>)
  return
}

// -----

// A tile larger than the strategy describes (partial tiles are smaller).
func.func @wrong_tile(%arg0: memref<128x32xf16>, %arg1: memref<32x64xf16>, %arg2: memref<128x64xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 2>} {
  // expected-error @+1 {{contraction strategy: the workgroup's matmul does not fit mma_sync_f32_16x8x16_f16 tiles of 64x64x32: expected up to 64xK 'f16' * Kx64 'f16' (or B as 64xK) -> 'f32' with K a multiple of 8 and rows of whole 16-byte chunks}}
  linalg.matmul ins(%arg0, %arg1 : memref<128x32xf16>, memref<32x64xf16>) outs(%arg2 : memref<128x64xf32>)
  return
}

// -----

// A subgroup grid that does not match the threads.
// expected-error @+1 {{contraction strategy: workgroup tile 64x64x32 with subgroup grid 2x2 and 256 threads does not fit mma_sync_f32_16x8x16_f16}}
func.func @wrong_grid(%arg0: memref<64x32xf16>, %arg1: memref<32x64xf16>, %arg2: memref<64x64xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 2>} {
  linalg.matmul ins(%arg0, %arg1 : memref<64x32xf16>, memref<32x64xf16>) outs(%arg2 : memref<64x64xf32>)
  return
}

// -----

// cp.async forms multi-buffer 2 to 8 stages.
// expected-error @+1 {{contraction strategy: pipeline_depth 1 is outside 2..8}}
func.func @one_stage(%arg0: memref<64x32xf16>, %arg1: memref<32x64xf16>, %arg2: memref<64x64xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 1>} {
  linalg.matmul ins(%arg0, %arg1 : memref<64x32xf16>, memref<32x64xf16>) outs(%arg2 : memref<64x64xf32>)
  return
}

// -----

// Swizzled rows hold a power of two of 16-byte chunks: 96 f16 are 12.
// expected-error @+1 {{contraction strategy: workgroup tile 64x96x32 with subgroup grid 2x2 and 128 threads does not fit mma_sync_f32_16x8x16_f16}}
func.func @swizzle_needs_power_of_two(%arg0: memref<64x32xf16>, %arg1: memref<32x96xf16>, %arg2: memref<64x96xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 96, 0], intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 2>} {
  linalg.matmul ins(%arg0, %arg1 : memref<64x32xf16>, memref<32x96xf16>) outs(%arg2 : memref<64x96xf32>)
  return
}

// -----

// The SIMT form (f32): 16x16 threads, each a 4x4 block of a 64x64 tile; A
// is staged K-major (scattered from 4-float chunks), B as it is; one K
// slice of 16: 16 steps of 4 row FMAs on vector<4xf32>.
// CHECK-LABEL: func.func @simt_f32
// CHECK: %[[AT:.*]] = memref.alloc() {alignment = 16 : i64} : memref<16x68xf32, #gpu.address_space<workgroup>>
// CHECK: %[[BS:.*]] = memref.alloc() {alignment = 16 : i64} : memref<16x68xf32, #gpu.address_space<workgroup>>
// CHECK: vector.load %arg0{{.*}} : memref<64x16xf32>, vector<4xf32>
// CHECK: memref.store {{.*}}, %[[AT]]
// CHECK: vector.store {{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK-NOT: scf.for
// CHECK-COUNT-64: vector.fma {{.*}} : vector<4xf32>
// Each thread's rows of 4 columns are stored as vectors.
// CHECK-COUNT-4: vector.store {{.*}}, %arg2{{.*}} {alignment = 16 : i64} : memref<64x64xf32>, vector<4xf32>
func.func @simt_f32(%arg0: memref<64x16xf32>, %arg1: memref<16x64xf32>, %arg2: memref<64x64xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [64, 64, 0], simt_tile = [4, 4], k_tile = 16>} {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<64x64xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<64x16xf32>, memref<16x64xf32>) outs(%arg2 : memref<64x64xf32>)
  return
}

// -----

// Outputs per thread that do not cover the tile with the threads.
// expected-error @+1 {{contraction strategy: workgroup tile 64x64x16 with 8x8 outputs per thread does not fit 256 threads}}
func.func @simt_wrong_threads(%arg0: memref<64x16xf32>, %arg1: memref<16x64xf32>, %arg2: memref<64x64xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [64, 64, 0], simt_tile = [8, 8], k_tile = 16>} {
  linalg.matmul ins(%arg0, %arg1 : memref<64x16xf32>, memref<16x64xf32>) outs(%arg2 : memref<64x64xf32>)
  return
}

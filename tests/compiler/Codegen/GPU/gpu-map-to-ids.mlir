// RUN: kiln-opt %s --split-input-file --kiln-gpu-map-to-ids --verify-diagnostics | FileCheck %s

// The workgroup forall runs once per workgroup: its indices are delinearized
// from the block id (grid 16 x 32 tiles = 512 workgroups along x). A thread
// forall with more iterations than threads (16 x 16 = 256 > 128) becomes a
// loop striding over the workgroup; one with fewer (100) a guarded body.
// CHECK-LABEL: func.func @map
// CHECK-SAME: kiln.workgroup_count = array<i64: 512, 1, 1>, kiln.workgroup_size = array<i64: 128, 1, 1>
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[WG:.*]]:2 = affine.delinearize_index %[[BID]] into (16, 32)
// CHECK: %[[TID:.*]] = gpu.thread_id x
// Two rounds per thread: one step runs both (iterations lin and lin + 128).
// CHECK: scf.for %[[LIN:.*]] = %[[TID]] to %c256 step %{{.*}} {
// CHECK:   %[[T:.*]]:2 = affine.delinearize_index %[[LIN]] into (16, 16)
// CHECK:   %[[LIN1:.*]] = arith.addi %[[LIN]], %c128
// CHECK:   %[[T1:.*]]:2 = affine.delinearize_index %[[LIN1]] into (16, 16)
// CHECK:   memref.store %{{.*}}, %{{.*}}[%[[T]]#0, %[[T]]#1]
// CHECK:   memref.store %{{.*}}, %{{.*}}[%[[T1]]#0, %[[T1]]#1]
// CHECK: %[[TID2:.*]] = gpu.thread_id x
// CHECK: %[[ACTIVE:.*]] = arith.cmpi ult, %[[TID2]], %c100
// CHECK: scf.if %[[ACTIVE]] {
// CHECK:   memref.store %{{.*}}, %{{.*}}[%[[TID2]]]
func.func @map(%out: memref<256x512xf32>, %small: memref<100xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32>} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (256, 512) step (16, 16) {
    %tile = memref.subview %out[%i, %j] [16, 16] [1, 1] : memref<256x512xf32> to memref<16x16xf32, strided<[512, 1], offset: ?>>
    scf.forall (%ti, %tj) in (16, 16) {
      memref.store %zero, %tile[%ti, %tj] : memref<16x16xf32, strided<[512, 1], offset: ?>>
    } {mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>]}
    scf.forall (%k) in (100) {
      memref.store %zero, %small[%k] : memref<100xf32>
    } {mapping = [#gpu.thread<linear_dim_0>]}
  } {mapping = [#gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>]}
  return
}

// -----

func.func @unmapped(%out: memref<4xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 64, subgroup_size = 32>} {
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{unmapped scf.forall in a GPU kernel}}
  scf.forall (%i) in (4) {
    memref.store %zero, %out[%i] : memref<4xf32>
  }
  return
}

// -----

// Four rounds per thread (512 iterations over 128 threads) run in one step,
// and the rounds' loads (with their index arithmetic) move ahead of the
// first store and of any use of a loaded value, so that all four are in
// flight together (the forall's iterations are independent).
// CHECK-LABEL: func.func @loads_first
// CHECK: scf.for %[[LIN:.*]] = %{{.*}} to %c512 step %{{.*}} {
// CHECK-COUNT-4: memref.load %arg0
// CHECK-NOT: memref.load
// CHECK-COUNT-4: memref.store
// CHECK-NOT: memref.load
// CHECK: }
func.func @loads_first(%in: memref<512xf32>, %out: memref<512xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32>} {
  scf.forall (%k) in (512) {
    %x = memref.load %in[%k] : memref<512xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %out[%k] : memref<512xf32>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  return
}

// -----

// Contraction tiles go in groups of 8 tile rows (L2 reuse): workgroup w of
// a 2 x 25 x 16 grid (batch, M tiles, N tiles) computes batch w / 400 and,
// within it, tile i = w % 128 of group g = (w % 400) / 128: row 8 g + i % 8,
// column i / 8 in the 3 full groups; in the last one (one row) row 24,
// column i. That tile's row-major index is delinearized as before.
// CHECK-DAG: #[[BATCH:.*]] = affine_map<(d0) -> (d0 floordiv 400)>
// CHECK-DAG: #[[IN_BATCH:.*]] = affine_map<(d0) -> (d0 mod 400)>
// CHECK-DAG: #[[GROUP:.*]] = affine_map<(d0) -> (d0 floordiv 128)>
// CHECK-DAG: #[[IN_GROUP:.*]] = affine_map<(d0) -> (d0 mod 128)>
// CHECK-DAG: #[[FULL:.*]] = affine_map<(d0, d1) -> (d0 * 128 + (d1 mod 8) * 16 + d1 floordiv 8)>
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1) -> (d0 * 128 + d1)>
// CHECK-DAG: #[[TILE_AT:.*]] = affine_map<(d0, d1) -> (d0 * 400 + d1)>
// CHECK-LABEL: func.func @grouped_contraction_tiles
// CHECK-SAME: kiln.workgroup_count = array<i64: 800, 1, 1>
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[B:.*]] = affine.apply #[[BATCH]](%[[BID]])
// CHECK: %[[W:.*]] = affine.apply #[[IN_BATCH]](%[[BID]])
// CHECK: %[[G:.*]] = affine.apply #[[GROUP]](%[[W]])
// CHECK: %[[I:.*]] = affine.apply #[[IN_GROUP]](%[[W]])
// CHECK: %[[T_FULL:.*]] = affine.apply #[[FULL]](%[[G]], %[[I]])
// CHECK: %[[IS_LAST:.*]] = arith.cmpi uge, %[[G]], %c3
// CHECK: %[[T_LAST:.*]] = affine.apply #[[LAST]](%[[G]], %[[I]])
// CHECK: %[[T:.*]] = arith.select %[[IS_LAST]], %[[T_LAST]], %[[T_FULL]]
// CHECK: %[[TILE:.*]] = affine.apply #[[TILE_AT]](%[[B]], %[[T]])
// CHECK: affine.delinearize_index %[[TILE]] into (2, 25, 16)
func.func @grouped_contraction_tiles(%out: memref<2x3200x2048xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [1, 128, 128, 0], workgroup_count = 800, intrinsic = wgmma_f32_64x128x16_f16, subgroup_grid = [2, 1], k_tile = 64, pipeline_depth = 4>} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%b, %i, %j) = (0, 0, 0) to (2, 3200, 2048) step (1, 128, 128) {
    memref.store %zero, %out[%b, %i, %j] : memref<2x3200x2048xf32>
  } {mapping = [#gpu.block<linear_dim_2>, #gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>]}
  return
}

// -----

// Fewer than two groups of rows (8 x 8 tiles): row-major order.
// CHECK-LABEL: func.func @few_contraction_tiles
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK-NEXT: affine.delinearize_index %[[BID]] into (8, 8)
func.func @few_contraction_tiles(%out: memref<1024x1024xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [128, 128, 0], workgroup_count = 64, intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 4>} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (1024, 1024) step (128, 128) {
    memref.store %zero, %out[%i, %j] : memref<1024x1024xf32>
  } {mapping = [#gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>]}
  return
}

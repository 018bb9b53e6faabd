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

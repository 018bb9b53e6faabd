// RUN: kiln-opt %s --split-input-file --kiln-host-lower-window-collectives --canonicalize --cse | FileCheck %s

// The protocol over parts (reduce_scatter, two-shot all_reduce); the wait
// itself is host-lower-window-collectives.mlir's.

// reduce_scatter over 2 ranks of 2 parts of 4: the workgroup copies its
// chunk of both parts into half e % 2 and reduces only the chunk of its own
// part (at rank * 4 of the half) into recv.
// CHECK-LABEL: func.func @scatter_max_i16(
// CHECK-SAME:    %[[SEND:[^:]*]]: memref<8xi16>, %[[RECV:[^:]*]]: memref<4xi16>, %[[DATA:[^:]*]]: memref<16xi16>
// CHECK:         %[[RANK:.*]] = scf.for
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           memref.load %[[SEND]][%[[I]]]
// CHECK:           memref.store %{{.*}}, %[[DATA]]
// CHECK:           %[[SECOND:.*]] = arith.addi %[[I]], %c4
// CHECK:           memref.load %[[SEND]][%[[SECOND]]]
// CHECK:           memref.store %{{.*}}, %[[DATA]]
// CHECK:         %[[OWN:.*]] = arith.muli %[[RANK]], %c4
// CHECK:         scf.if
// CHECK:           %[[SOURCE:.*]] = arith.addi %{{.*}}, %[[OWN]]
// CHECK:           scf.for
// CHECK:             arith.addi %[[SOURCE]]
// CHECK:             llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK:             llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK-NEXT:        arith.maxsi
// CHECK:             memref.store %{{.*}}, %[[RECV]]
func.func @scatter_max_i16(%send: memref<8xi16>, %recv: memref<4xi16>, %data: memref<16xi16>, %signals: memref<3xi64>, %peers: memref<5xi64>) {
  kiln.window_collective reduce_scatter reduction = max ranks(2) workgroups(1) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<8xi16>, memref<4xi16>, memref<16xi16>, memref<3xi64>, memref<5xi64>
  return
}

// -----

// Two-shot over 3 ranks of 7 f32: parts of 4 (rounded up to 16 bytes), the
// last two shorter (3) and empty; guards keep the copy and the gather inside
// the 7 elements. Phase 1 signals flag slot x * 3 + rank and reduces the own
// part into the second half (7 + rank * 4); phase 2 signals slot
// 3 + x * 3 + rank and gathers part r from rank r's second half. The epoch
// counter is slot 2 x 3 + x.
// CHECK-LABEL: func.func @two_shot_sum_f32(
// CHECK-SAME:    %[[SEND:[^:]*]]: memref<7xf32>, %[[RECV:[^:]*]]: memref<7xf32>, %[[DATA:[^:]*]]: memref<14xf32>, %[[SIG:[^:]*]]: memref<7xi64>, %[[PEERS:[^:]*]]: memref<7xi64>, %[[WG:[^:]*]]: index
// CHECK:         %[[RANK:.*]] = scf.for
// CHECK:         scf.if %{{.*}} -> (i32) {
// CHECK:           %[[COUNTER:.*]] = arith.addi %[[WG]], %c6
// CHECK:           memref.load %[[SIG]][%[[COUNTER]]]
// CHECK:           scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             memref.store %{{.*}}, %[[DATA]][%[[I]]]
// CHECK:             %[[P1:.*]] = arith.addi %[[I]], %c4
// CHECK:             arith.cmpi slt, %[[P1]], %c7
// CHECK:             scf.if
// CHECK:             %[[P2:.*]] = arith.addi %[[I]], %c8
// CHECK:             arith.cmpi slt, %[[P2]], %c7
// CHECK:             scf.if
// CHECK:           %[[OWN:.*]] = arith.muli %[[RANK]], %c4
// CHECK:           llvm.store %{{.*}} atomic release
// CHECK:           scf.if %{{.*}} -> (i32) {
// CHECK:             %[[REST:.*]] = arith.subi %c7, %[[OWN]]
// CHECK:             %[[END:.*]] = arith.minsi %{{.*}}, %[[REST]]
// CHECK:             %[[TARGET:.*]] = arith.addi %[[OWN]], %c7
// CHECK:             scf.for %[[J:.*]] = %{{.*}} to %[[END]]
// CHECK:               arith.addf
// CHECK:               arith.addf
// CHECK:               %[[AT:.*]] = arith.addi %[[TARGET]], %[[J]]
// CHECK:               memref.store %{{.*}}, %[[DATA]][%[[AT]]]
// CHECK:             llvm.store %{{.*}} atomic release
// CHECK:             scf.while
// CHECK:               llvm.load %{{.*}} atomic acquire
// CHECK:             scf.if
// CHECK:               scf.for %[[K:.*]] =
// CHECK:                 arith.addi %[[K]], %c7
// CHECK:                 memref.store %{{.*}}, %[[RECV]][%[[K]]]
// CHECK:                 arith.addi %[[K]], %c11
// CHECK:                 memref.store %{{.*}}, %[[RECV]]
// CHECK:                 arith.addi %[[K]], %c15
// CHECK:                 memref.store %{{.*}}, %[[RECV]]
func.func @two_shot_sum_f32(%send: memref<7xf32>, %recv: memref<7xf32>, %data: memref<14xf32>, %signals: memref<7xi64>, %peers: memref<7xi64>) {
  kiln.window_collective all_reduce reduction = sum two_shot ranks(3) workgroups(1) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<7xf32>, memref<7xf32>, memref<14xf32>, memref<7xi64>, memref<7xi64>
  return
}

// RUN: kiln-opt %s --split-input-file --kiln-host-lower-window-collectives | FileCheck %s

// The protocol for workgroup x (the first of the three workgroup ids
// appended after the bindings): the rank is the peer-table entry that holds
// the own signals' address; the epoch is the workgroup's counter (slot
// workgroups * ranks + x) plus one; the chunk goes to half e % 2 of the own
// data; e is release-stored into slot x * ranks + rank of every rank's
// signals, and each own slot x * ranks + p is acquire-loaded until it
// reaches e, yielding every 64 polls and reading the clock and the group's
// abort word every 4096 (status 3 after 120 s, 4 once a rank released its
// window); then every rank's data is read in rank order.
// The libc functions the wait calls are declared once per module.
// CHECK:       func.func private @sched_yield() -> i32
// CHECK:       func.func private @time(!llvm.ptr) -> i64
// CHECK-LABEL: func.func @sum_f16(
// CHECK-SAME:    %[[SEND:[^:]*]]: memref<40xf16>, %[[RECV:[^:]*]]: memref<40xf16>, %[[DATA:[^:]*]]: memref<80xf16>, %[[SIG:[^:]*]]: memref<12xi64>, %[[PEERS:[^:]*]]: memref<7xi64>, %[[WG:[^:]*]]: index, %{{.*}}: index, %{{.*}}: index) -> i32
// CHECK-SAME:    kiln.workgroup_count = array<i64: 3, 1, 1>
// CHECK:         %[[OWN:.*]] = memref.extract_aligned_pointer_as_index %[[SIG]]
// CHECK:         scf.for
// CHECK:           memref.load %[[PEERS]]
// CHECK:           arith.cmpi eq
// CHECK:         scf.if %{{.*}} -> (i32) {
// CHECK:           memref.load %[[SIG]]
// CHECK:           memref.store %{{.*}}, %[[SIG]]
// CHECK:           scf.for
// CHECK:             memref.load %[[SEND]]
// CHECK:             memref.store %{{.*}}, %[[DATA]]
// CHECK:           scf.for
// CHECK:             llvm.inttoptr
// CHECK:             llvm.store %{{.*}}, %{{.*}} atomic release {alignment = 8 : i64} : i64, !llvm.ptr
// CHECK:           call @time(
// The abort word is the peer table's last entry (2 x 3).
// CHECK:           %[[ABORT:.*]] = memref.load %[[PEERS]][%c6{{.*}}] {alignment = 8 : i64} : memref<7xi64>
// CHECK:           %[[ABORTPTR:.*]] = llvm.inttoptr %[[ABORT]]
// CHECK:           scf.for {{.*}} -> (i64) {
// CHECK:             scf.while
// CHECK:               llvm.load %{{.*}} atomic acquire {alignment = 8 : i64} : !llvm.ptr -> i64
// CHECK:               scf.condition
// CHECK:               call @sched_yield()
// CHECK:               call @time(
// CHECK:               arith.cmpi sgt, %{{.*}}, %c120_i64
// CHECK:               llvm.load %[[ABORTPTR]] atomic acquire
// Status 4 when the group was aborted, 3 when the wait timed out.
// CHECK:           arith.select %{{.*}}, %c4_i32, %c3_i32
// CHECK:           scf.if
// CHECK:             scf.for
// CHECK:               llvm.load %{{.*}} : !llvm.ptr -> f16
// CHECK-NEXT:          arith.extf %{{.*}} : f16 to f32
// CHECK:               llvm.load %{{.*}} : !llvm.ptr -> f16
// CHECK-NEXT:          arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:          arith.addf
// CHECK:               llvm.load %{{.*}} : !llvm.ptr -> f16
// CHECK-NEXT:          arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:          arith.addf
// CHECK-NEXT:          arith.truncf %{{.*}} : f32 to f16
// CHECK:               memref.store %{{.*}}, %[[RECV]]
// CHECK:         } else {
// CHECK:           scf.yield %c2_i32
// CHECK:         return %{{.*}} : i32
func.func @sum_f16(%send: memref<40xf16>, %recv: memref<40xf16>, %data: memref<80xf16>, %signals: memref<12xi64>, %peers: memref<7xi64>) {
  kiln.window_collective all_reduce reduction = sum ranks(3) workgroups(3) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<40xf16>, memref<40xf16>, memref<80xf16>, memref<12xi64>, memref<7xi64>
  return
}

// -----

// A gather stores rank r's chunk at r * count; i32 min/max are signed.
// CHECK-LABEL: func.func @gather_i32(
// CHECK-SAME:    kiln.workgroup_count = array<i64: 1, 1, 1>
// CHECK:         scf.for
// CHECK:           llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK:           memref.store
// CHECK:           arith.addi %{{.*}}, %c5
// CHECK:           memref.store
// CHECK-LABEL: func.func @min_i32(
// CHECK:           llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK:           llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK-NEXT:      arith.minsi
// CHECK-LABEL: func.func @avg_f64(
// CHECK:           arith.addf
// CHECK:           arith.divf %{{.*}}, %cst
// CHECK-SAME:        f64
func.func @gather_i32(%send: memref<5xi32>, %recv: memref<10xi32>, %data: memref<10xi32>, %signals: memref<3xi64>, %peers: memref<5xi64>) {
  kiln.window_collective all_gather ranks(2) workgroups(1) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<5xi32>, memref<10xi32>, memref<10xi32>, memref<3xi64>, memref<5xi64>
  return
}
func.func @min_i32(%send: memref<5xi32>, %recv: memref<5xi32>, %data: memref<10xi32>, %signals: memref<3xi64>, %peers: memref<5xi64>) {
  kiln.window_collective all_reduce reduction = min ranks(2) workgroups(1) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<5xi32>, memref<5xi32>, memref<10xi32>, memref<3xi64>, memref<5xi64>
  return
}
func.func @avg_f64(%send: memref<5xf64>, %recv: memref<5xf64>, %data: memref<10xf64>, %signals: memref<3xi64>, %peers: memref<5xi64>) {
  kiln.window_collective all_reduce reduction = avg ranks(2) workgroups(1) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<5xf64>, memref<5xf64>, memref<10xf64>, memref<3xi64>, memref<5xi64>
  return
}


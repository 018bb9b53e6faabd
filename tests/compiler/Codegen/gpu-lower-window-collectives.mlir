// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-window-collectives=backend=nvvm | FileCheck %s --implicit-check-not=llvm.fence
// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-window-collectives=backend=rocdl | FileCheck %s --check-prefix=ROCDL
// RUN: not kiln-opt %s --split-input-file --kiln-gpu-lower-window-collectives=backend=spirv 2>&1 | FileCheck %s --check-prefix=BAD

// The GPU form: 256 threads per workgroup (gpu.block_id x owns the chunk)
// share each phase, with barriers between: the epoch counter is read by
// every thread before thread 0 writes it back; the copy, the signals (thread
// p signals rank p) and the polls (thread p waits for rank p) are loops
// strided by 256; a barrier before the signals (release stores) and one
// after the wait (acquire loads), no fences on NVIDIA (on AMD every thread
// fences at system scope around them); the clock is llvm.readsteadycounter
// (nanoseconds on NVIDIA: 120 s = 1.2e11), read with the group's abort word
// (the peer table's last entry); a timeout or an abort traps. 40 f32 in two
// chunks of 20 split into 16-byte vectors: threads copy and reduce 4
// elements per access (steps of 4 x 256).
// CHECK-LABEL: func.func @sum_f32(
// CHECK-SAME:    kiln.workgroup_count = array<i64: 2, 1, 1>, kiln.workgroup_size = array<i64: 256, 1, 1>
// CHECK:         %[[WG:.*]] = gpu.block_id x
// CHECK:         %[[TID:.*]] = gpu.thread_id x
// CHECK:         scf.if
// CHECK:           memref.load %{{.*}}[%{{.*}}] {alignment = 8 : i64} : memref<6xi64>
// CHECK:           gpu.barrier
// CHECK:           arith.cmpi eq, %[[TID]], %c0{{.*}}
// CHECK:           memref.store %{{.*}} {alignment = 8 : i64} : memref<6xi64>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1024{{.*}} {
// CHECK:             %[[CHUNK:.*]] = vector.load %{{.*}} {alignment = 16 : i64} : memref<40xf32>, vector<4xf32>
// CHECK:             vector.store %[[CHUNK]], %{{.*}} {alignment = 16 : i64} : memref<80xf32>, vector<4xf32>
// CHECK:           gpu.barrier
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step %c256{{.*}} {
// CHECK:             llvm.store %{{.*}} atomic release
// CHECK:           llvm.call_intrinsic "llvm.readsteadycounter"
// CHECK:           %[[ABORT:.*]] = memref.load %{{.*}}[%c4{{.*}}] {alignment = 8 : i64} : memref<5xi64>
// CHECK:           %[[ABORTPTR:.*]] = llvm.inttoptr %[[ABORT]]
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step %c256{{.*}} iter_args(%{{.*}} = %c0_i64) -> (i64)
// CHECK:             llvm.load %{{.*}} atomic acquire
// CHECK:             %c120000000000_i64
// CHECK:             llvm.load %[[ABORTPTR]] atomic acquire
// CHECK:           scf.if
// CHECK-NEXT:        llvm.intr.trap
// CHECK:           gpu.barrier
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1024{{.*}} {
// CHECK:             %[[A:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:             %[[B:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:             %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : vector<4xf32>
// CHECK:             vector.store %[[SUM]], %{{.*}} {alignment = 16 : i64} : memref<40xf32>, vector<4xf32>
// CHECK:         } else {
// CHECK-NEXT:      llvm.intr.trap
// CHECK-NOT:     func.func private @time
// The AMD realtime counter runs at 100 MHz: 120 s = 1.2e10 ticks. Every
// thread fences at system scope before the barrier that precedes the
// signals and after the one that follows the wait.
// ROCDL:         llvm.fence release
// ROCDL-NEXT:    gpu.barrier
// ROCDL:         %c12000000000_i64
// ROCDL:         gpu.barrier
// ROCDL-NEXT:    llvm.fence acquire
// BAD: unknown GPU backend 'spirv' (rocdl or nvvm)
func.func @sum_f32(%send: memref<40xf32>, %recv: memref<40xf32>, %data: memref<80xf32>, %signals: memref<6xi64>, %peers: memref<5xi64>) {
  kiln.window_collective all_reduce reduction = sum ranks(2) workgroups(2) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<40xf32>, memref<40xf32>, memref<80xf32>, memref<6xi64>, memref<5xi64>
  return
}

// -----

// Chunks of 15 f32 do not split into 16-byte vectors: one element per
// access, steps of 256.
// CHECK-LABEL: func.func @sum_f32_scalar(
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c256{{.*}} {
// CHECK:             memref.load %{{.*}} : memref<30xf32>
// CHECK-NOT:       vector.load
// CHECK:           llvm.store %{{.*}} atomic release
// CHECK:           llvm.load %{{.*}} atomic acquire
// CHECK:           gpu.barrier
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c256{{.*}} {
// CHECK:             llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:             arith.addf %{{.*}}, %{{.*}} : f32
func.func @sum_f32_scalar(%send: memref<30xf32>, %recv: memref<30xf32>, %data: memref<60xf32>, %signals: memref<6xi64>, %peers: memref<5xi64>) {
  kiln.window_collective all_reduce reduction = sum ranks(2) workgroups(2) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<30xf32>, memref<30xf32>, memref<60xf32>, memref<6xi64>, memref<5xi64>
  return
}

// -----

// f16 averages: 8 halves per access, widened to f32, summed in rank order,
// divided by the rank count (a splat) and rounded once.
// CHECK-LABEL: func.func @avg_f16(
// CHECK:           gpu.barrier
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2048{{.*}} {
// CHECK:             %[[R0:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xf16>
// CHECK:             arith.extf %[[R0]] : vector<8xf16> to vector<8xf32>
// CHECK-COUNT-2:     arith.addf %{{.*}} : vector<8xf32>
// CHECK:             %[[N:.*]] = arith.constant dense<3.000000e+00> : vector<8xf32>
// CHECK:             %[[AVG:.*]] = arith.divf %{{.*}}, %[[N]] : vector<8xf32>
// CHECK:             %[[OUT:.*]] = arith.truncf %[[AVG]] : vector<8xf32> to vector<8xf16>
// CHECK:             vector.store %[[OUT]], %{{.*}} {alignment = 16 : i64} : memref<64xf16>, vector<8xf16>
func.func @avg_f16(%send: memref<64xf16>, %recv: memref<64xf16>, %data: memref<128xf16>, %signals: memref<4xi64>, %peers: memref<7xi64>) {
  kiln.window_collective all_reduce reduction = avg ranks(3) workgroups(1) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<64xf16>, memref<64xf16>, memref<128xf16>, memref<4xi64>, memref<7xi64>
  return
}

// -----

// all_gather of i64: 2 elements per access, each rank's into its slice of
// recv (offset r x count).
// CHECK-LABEL: func.func @gather_i64(
// CHECK:           gpu.barrier
// CHECK:           scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c512{{.*}} {
// CHECK:             %[[G0:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<2xi64>
// CHECK:             vector.store %[[G0]], %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<20xi64>, vector<2xi64>
// CHECK:             %[[AT:.*]] = arith.addi %[[I]], %c10{{.*}} : index
// CHECK:             %[[G1:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<2xi64>
// CHECK:             vector.store %[[G1]], %{{.*}}[%[[AT]]] {alignment = 16 : i64} : memref<20xi64>, vector<2xi64>
func.func @gather_i64(%send: memref<10xi64>, %recv: memref<20xi64>, %data: memref<20xi64>, %signals: memref<3xi64>, %peers: memref<5xi64>) {
  kiln.window_collective all_gather ranks(2) workgroups(1) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<10xi64>, memref<20xi64>, memref<20xi64>, memref<3xi64>, memref<5xi64>
  return
}

// -----

// i1 is not whole bytes: one element per access.
// CHECK-LABEL: func.func @or_i1(
// CHECK-NOT:     vector.
// CHECK:         arith.ori %{{.*}}, %{{.*}} : i1
func.func @or_i1(%send: memref<32xi1>, %recv: memref<32xi1>, %data: memref<64xi1>, %signals: memref<3xi64>, %peers: memref<5xi64>) {
  kiln.window_collective all_reduce reduction = or ranks(2) workgroups(1) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<32xi1>, memref<32xi1>, memref<64xi1>, memref<3xi64>, memref<5xi64>
  return
}

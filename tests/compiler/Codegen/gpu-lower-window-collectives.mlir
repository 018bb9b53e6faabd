// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-window-collectives=backend=nvvm | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-window-collectives=backend=rocdl | FileCheck %s --check-prefix=ROCDL
// RUN: not kiln-opt %s --split-input-file --kiln-gpu-lower-window-collectives=backend=spirv 2>&1 | FileCheck %s --check-prefix=BAD

// The GPU form: 256 threads per workgroup (gpu.block_id x owns the chunk)
// share each phase, with barriers between: the epoch counter is read by
// every thread before thread 0 writes it back; the copy, the signals (thread
// p signals rank p) and the polls (thread p waits for rank p) are loops
// strided by 256; release fence + barrier before the signals, barrier +
// acquire fence after the wait; the clock is llvm.readsteadycounter
// (nanoseconds on NVIDIA: 120 s = 1.2e11), read with the group's abort word
// (the peer table's last entry); a timeout or an abort traps.
// CHECK-LABEL: func.func @sum_f32(
// CHECK-SAME:    kiln.workgroup_count = array<i64: 2, 1, 1>, kiln.workgroup_size = array<i64: 256, 1, 1>
// CHECK:         %[[WG:.*]] = gpu.block_id x
// CHECK:         %[[TID:.*]] = gpu.thread_id x
// CHECK:         scf.if
// CHECK:           memref.load %{{.*}}[%{{.*}}] {alignment = 8 : i64} : memref<6xi64>
// CHECK:           gpu.barrier
// CHECK:           arith.cmpi eq, %[[TID]], %c0{{.*}}
// CHECK:           memref.store %{{.*}} {alignment = 8 : i64} : memref<6xi64>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c256{{.*}} {
// CHECK:           llvm.fence release
// CHECK-NEXT:      gpu.barrier
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
// CHECK-NEXT:      llvm.fence acquire
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c256{{.*}} {
// CHECK:             arith.addf
// CHECK:         } else {
// CHECK-NEXT:      llvm.intr.trap
// CHECK-NOT:     func.func private @time
// The AMD realtime counter runs at 100 MHz: 120 s = 1.2e10 ticks.
// ROCDL:         %c12000000000_i64
// BAD: unknown GPU backend 'spirv' (rocdl or nvvm)
func.func @sum_f32(%send: memref<40xf32>, %recv: memref<40xf32>, %data: memref<80xf32>, %signals: memref<6xi64>, %peers: memref<5xi64>) {
  kiln.window_collective all_reduce reduction = sum ranks(2) workgroups(2) send(%send) recv(%recv) window(%data, %signals, %peers) : memref<40xf32>, memref<40xf32>, memref<80xf32>, memref<6xi64>, memref<5xi64>
  return
}

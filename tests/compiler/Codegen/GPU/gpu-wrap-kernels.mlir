// RUN: kiln-opt %s --split-input-file --kiln-gpu-wrap-kernels --verify-diagnostics | FileCheck %s

// Kernels move into one gpu.module as gpu.func kernels; shared-memory
// buffers become workgroup attributions, counted in
// kiln.shared_memory_bytes; the constants they read move along.
// CHECK: gpu.module @kiln_kernels {
// CHECK:   memref.global "private" constant @table
// CHECK:   gpu.func @reduce(%[[IN:.*]]: memref<256xf32>, %[[OUT:.*]]: memref<f32>)
// CHECK-SAME: workgroup(%[[SHARED:.*]] : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-SAME: kernel
// CHECK-SAME: kiln.shared_memory_bytes = 256 : i64
// CHECK-SAME: kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 64, 1, 1>
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK:     %[[TID:.*]] = gpu.thread_id x
// CHECK:     memref.store %{{.*}}, %[[SHARED]][%[[TID]]]
// CHECK:     gpu.return
// CHECK-NOT: func.func
memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
func.func @reduce(%in: memref<256xf32>, %out: memref<f32>)
    attributes {kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 64, 1, 1>} {
  %shared = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
  %tid = gpu.thread_id x
  %t = memref.get_global @table : memref<2xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %t[%c0] : memref<2xf32>
  memref.store %v, %shared[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
  return
}

// -----

// expected-error @below {{GPU kernel 'too_much_shared' needs 262144 bytes of shared memory for its temporaries, more than the 65536 available to a workgroup}}
func.func @too_much_shared(%out: memref<f32>)
    attributes {kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 64, 1, 1>} {
  %shared = memref.alloc() : memref<65536xf32, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @global_alloc(%out: memref<f32>)
    attributes {kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 64, 1, 1>} {
  // expected-error @below {{GPU kernels cannot allocate 'memref<16xf32>' at run time; only statically shaped workgroup-memory temporaries are supported}}
  %buffer = memref.alloc() : memref<16xf32>
  return
}


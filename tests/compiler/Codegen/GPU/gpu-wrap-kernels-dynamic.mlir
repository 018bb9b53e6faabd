// RUN: kiln-opt %s --kiln-gpu-wrap-kernels="max-shared-memory-bytes=262144 max-static-shared-memory-bytes=16384" | FileCheck %s --check-prefix=DYNAMIC
// RUN: kiln-opt %s --kiln-gpu-wrap-kernels | FileCheck %s

// Over the static limit (16 KiB here), every shared buffer is a view at a
// 16-byte aligned offset of one dynamic shared-memory buffer; the total
// stays in kiln.shared_memory_bytes (the driver passes what the binary
// does not declare as dynamic shared memory at launch). Below the limit
// (default options) the same kernel keeps workgroup attributions.
// DYNAMIC-LABEL: gpu.func @two_stages
// DYNAMIC-NOT: workgroup(
// DYNAMIC-SAME: kiln.shared_memory_bytes = 32784 : i64
// DYNAMIC: %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// DYNAMIC-DAG: %[[C0:.*]] = arith.constant 0 : index
// DYNAMIC-DAG: %[[C16K:.*]] = arith.constant 16384 : index
// DYNAMIC-DAG: %[[C32K:.*]] = arith.constant 32768 : index
// DYNAMIC-DAG: %[[A:.*]] = memref.view %[[DYN]][%[[C0]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x64xf16, #gpu.address_space<workgroup>>
// DYNAMIC-DAG: %[[B:.*]] = memref.view %[[DYN]][%[[C16K]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x64xf16, #gpu.address_space<workgroup>>
// DYNAMIC-DAG: %[[S:.*]] = memref.view %[[DYN]][%[[C32K]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3xf32, #gpu.address_space<workgroup>>
// DYNAMIC: memref.store %{{.*}}, %[[S]]
// CHECK-LABEL: gpu.func @two_stages
// CHECK-SAME: workgroup(
// CHECK-NOT: gpu.dynamic_shared_memory
func.func @two_stages(%out: memref<f32>)
    attributes {kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 64, 1, 1>} {
  %a = memref.alloc() : memref<2x64x64xf16, #gpu.address_space<workgroup>>
  %b = memref.alloc() : memref<2x64x64xf16, #gpu.address_space<workgroup>>
  %s = memref.alloc() : memref<3xf32, #gpu.address_space<workgroup>>
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  memref.store %v, %s[%c0] : memref<3xf32, #gpu.address_space<workgroup>>
  return
}

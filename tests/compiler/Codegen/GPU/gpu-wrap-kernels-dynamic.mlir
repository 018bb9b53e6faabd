// RUN: kiln-opt %s --split-input-file --kiln-gpu-wrap-kernels="max-shared-memory-bytes=262144 max-static-shared-memory-bytes=16384" | FileCheck %s --check-prefix=DYNAMIC
// RUN: kiln-opt %s --split-input-file --kiln-gpu-wrap-kernels | FileCheck %s

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

// -----

// Buffers that ask for more than 16 bytes of alignment (wgmma's swizzled
// stages: 1024) are placed at it: in the dynamic buffer, after the 16-byte
// scalar buffer at offset 0, the first aligned one starts at 1024, past a
// run-time shift that brings the dynamic buffer's address to a multiple of 1024,
// and the total reserves the 1008 bytes the shift may skip; as
// attributions, they carry the alignment.
// DYNAMIC-LABEL: gpu.func @aligned_stages
// DYNAMIC-SAME: kiln.shared_memory_bytes = 34800 : i64
// DYNAMIC: %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// DYNAMIC: %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[DYN]]
// DYNAMIC-DAG: %[[MASK:.*]] = arith.constant 1023 : index
// DYNAMIC-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// DYNAMIC: %[[NEG:.*]] = arith.subi %[[ZERO]], %[[ADDRESS]] : index
// DYNAMIC: %[[SHIFT:.*]] = arith.andi %[[NEG]], %[[MASK]] : index
// DYNAMIC: %[[AT_S:.*]] = arith.addi %[[SHIFT]], %{{.*}} : index
// DYNAMIC: memref.view %[[DYN]][%[[AT_S]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3xf32, #gpu.address_space<workgroup>>
// DYNAMIC: %[[C1K:.*]] = arith.constant 1024 : index
// DYNAMIC: %[[AT_A:.*]] = arith.addi %[[SHIFT]], %[[C1K]] : index
// DYNAMIC: memref.view %[[DYN]][%[[AT_A]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x64xf16, #gpu.address_space<workgroup>>
// DYNAMIC: %[[C17K:.*]] = arith.constant 17408 : index
// DYNAMIC: %[[AT_B:.*]] = arith.addi %[[SHIFT]], %[[C17K]] : index
// DYNAMIC: memref.view %[[DYN]][%[[AT_B]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x64xf16, #gpu.address_space<workgroup>>
// CHECK-LABEL: gpu.func @aligned_stages
// CHECK-SAME: workgroup(%{{.*}} : memref<3xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x64x64xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<2x64x64xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64})
func.func @aligned_stages(%out: memref<f32>)
    attributes {kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 64, 1, 1>} {
  %s = memref.alloc() : memref<3xf32, #gpu.address_space<workgroup>>
  %a = memref.alloc() {alignment = 1024 : i64} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
  %b = memref.alloc() {alignment = 1024 : i64} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  memref.store %v, %s[%c0] : memref<3xf32, #gpu.address_space<workgroup>>
  return
}

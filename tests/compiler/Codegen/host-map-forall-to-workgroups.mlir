// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-host-map-forall-to-workgroups | FileCheck %s

// The forall body runs once per workgroup: x walks the innermost tiled
// loop, y the next one. The grid is recorded on the kernel.
// CHECK-LABEL: func.func @tiles(
// CHECK-SAME: %[[IN:.+]]: memref<64x48xf32>, %[[OUT:.+]]: memref<64x48xf32>, %[[X:.+]]: index, %[[Y:.+]]: index, %[[Z:.+]]: index)
// CHECK-SAME: kiln.workgroup_count = array<i64: 4, 8, 1>
// CHECK-NOT: scf.forall
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C12:.+]] = arith.constant 12 : index
// CHECK-DAG: %[[I:.+]] = arith.muli %[[Y]], %[[C8]] : index
// CHECK-DAG: %[[J:.+]] = arith.muli %[[X]], %[[C12]] : index
// CHECK: memref.subview %[[IN]][%[[I]], %[[J]]] [8, 12] [1, 1]
// CHECK: memref.subview %[[OUT]][%[[I]], %[[J]]] [8, 12] [1, 1]
// CHECK: linalg.copy
// CHECK-NEXT: return
func.func @tiles(%in: memref<64x48xf32>, %out: memref<64x48xf32>) {
  scf.forall (%i, %j) = (0, 0) to (64, 48) step (8, 12) {
    %a = memref.subview %in[%i, %j] [8, 12] [1, 1] : memref<64x48xf32> to memref<8x12xf32, strided<[48, 1], offset: ?>>
    %b = memref.subview %out[%i, %j] [8, 12] [1, 1] : memref<64x48xf32> to memref<8x12xf32, strided<[48, 1], offset: ?>>
    linalg.copy ins(%a : memref<8x12xf32, strided<[48, 1], offset: ?>>) outs(%b : memref<8x12xf32, strided<[48, 1], offset: ?>>)
  } {mapping = [#gpu.block<y>, #gpu.block<x>]}
  return
}

// -----

// Without a workgroup forall the kernel is one workgroup.
// CHECK-LABEL: func.func @single(
// CHECK-SAME: %{{.+}}: memref<4xf32>, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index)
// CHECK-SAME: kiln.workgroup_count = array<i64: 1, 1, 1>
func.func @single(%a: memref<4xf32>) {
  return
}

// -----

func.func @tensor_results(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @-1 {{expects a bufferized kernel, found tensor arguments}}
  return %a : tensor<4xf32>
}

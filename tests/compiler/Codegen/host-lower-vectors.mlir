// RUN: kiln-opt %s --split-input-file --kiln-host-lower-vectors --canonicalize --cse | FileCheck %s

// A 2x8 register tile of a matmul K loop: the contraction becomes one FMA
// per row (A element broadcast times a row of B), and each accumulator row
// is a vector<8xf32> carried by the K loop, loaded before and stored after.
// CHECK-LABEL: func.func @contract
// CHECK-SAME: (%[[A:.+]]: memref<16x64xf32>, %[[B:.+]]: memref<64x16xf32>, %[[C:.+]]: memref<16x16xf32>, %[[I:.+]]: index, %[[J:.+]]: index)
// CHECK: %[[I1:.+]] = affine.apply {{.+}}()[%[[I]]]
// CHECK-DAG: %[[C0:.+]] = vector.load %[[C]][%[[I]], %[[J]]] : memref<16x16xf32>, vector<8xf32>
// CHECK-DAG: %[[C1:.+]] = vector.load %[[C]][%[[I1]], %[[J]]] : memref<16x16xf32>, vector<8xf32>
// CHECK: %[[R:.+]]:2 = scf.for %[[K:.+]] = {{.+}} iter_args(%[[ACC0:.+]] = %[[C0]], %[[ACC1:.+]] = %[[C1]]) -> (vector<8xf32>, vector<8xf32>)
// CHECK-DAG: %[[A0:.+]] = vector.load %[[A]][%[[I]], %[[K]]] : memref<16x64xf32>, vector<1xf32>
// CHECK-DAG: %[[A1:.+]] = vector.load %[[A]][%[[I1]], %[[K]]] : memref<16x64xf32>, vector<1xf32>
// CHECK-DAG: %[[ROW:.+]] = vector.load %[[B]][%[[K]], %[[J]]] : memref<64x16xf32>, vector<8xf32>
// CHECK: %[[E0:.+]] = vector.extract %[[A0]][0]
// CHECK: %[[S0:.+]] = vector.broadcast %[[E0]] : f32 to vector<8xf32>
// CHECK: %[[F0:.+]] = vector.fma %[[S0]], %[[ROW]], %[[ACC0]] : vector<8xf32>
// CHECK: %[[E1:.+]] = vector.extract %[[A1]][0]
// CHECK: %[[S1:.+]] = vector.broadcast %[[E1]] : f32 to vector<8xf32>
// CHECK: %[[F1:.+]] = vector.fma %[[S1]], %[[ROW]], %[[ACC1]] : vector<8xf32>
// CHECK: scf.yield %[[F0]], %[[F1]]
// CHECK-DAG: vector.store %[[R]]#0, %[[C]][%[[I]], %[[J]]]
// CHECK-DAG: vector.store %[[R]]#1, %[[C]][%[[I1]], %[[J]]]
// CHECK-NOT: vector.transfer
// CHECK-NOT: vector.contract
#ma = affine_map<(d0, d1, d2) -> (d0, d2)>
#mb = affine_map<(d0, d1, d2) -> (d2, d1)>
#mc = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @contract(%a: memref<16x64xf32>, %b: memref<64x16xf32>, %c: memref<16x16xf32>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c64 step %c1 {
    %sa = memref.subview %a[%i, %k] [2, 1] [1, 1] : memref<16x64xf32> to memref<2x1xf32, strided<[64, 1], offset: ?>>
    %sb = memref.subview %b[%k, %j] [1, 8] [1, 1] : memref<64x16xf32> to memref<1x8xf32, strided<[16, 1], offset: ?>>
    %sc = memref.subview %c[%i, %j] [2, 8] [1, 1] : memref<16x16xf32> to memref<2x8xf32, strided<[16, 1], offset: ?>>
    %lhs = vector.transfer_read %sa[%c0, %c0], %pad {in_bounds = [true, true]} : memref<2x1xf32, strided<[64, 1], offset: ?>>, vector<2x1xf32>
    %rhs = vector.transfer_read %sb[%c0, %c0], %pad {in_bounds = [true, true]} : memref<1x8xf32, strided<[16, 1], offset: ?>>, vector<1x8xf32>
    %acc = vector.transfer_read %sc[%c0, %c0], %pad {in_bounds = [true, true]} : memref<2x8xf32, strided<[16, 1], offset: ?>>, vector<2x8xf32>
    %r = vector.contract {indexing_maps = [#ma, #mb, #mc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %lhs, %rhs, %acc : vector<2x1xf32>, vector<1x8xf32> into vector<2x8xf32>
    vector.transfer_write %r, %sc[%c0, %c0] {in_bounds = [true, true]} : vector<2x8xf32>, memref<2x8xf32, strided<[16, 1], offset: ?>>
  }
  return
}

// -----

// Elementwise tiles drop their unit dims: plain 1-D loads, ops and stores.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[V:.+]] = vector.load {{.+}} : memref<3x37xf32>, vector<4xf32>
// CHECK: %[[M:.+]] = arith.mulf %[[V]], %[[V]] : vector<4xf32>
// CHECK: vector.store %[[M]], {{.+}} : memref<3x37xf32>, vector<4xf32>
func.func @elementwise(%a: memref<3x37xf32>, %b: memref<3x37xf32>, %i: index, %j: index) {
  %pad = ub.poison : f32
  %v = vector.transfer_read %a[%i, %j], %pad {in_bounds = [true, true]} : memref<3x37xf32>, vector<1x4xf32>
  %m = arith.mulf %v, %v : vector<1x4xf32>
  vector.transfer_write %m, %b[%i, %j] {in_bounds = [true, true]} : vector<1x4xf32>, memref<3x37xf32>
  return
}

// -----

// An innermost reduction becomes a horizontal vector.reduction of one
// register into the scalar accumulator.
// CHECK-LABEL: func.func @reduction
// CHECK-SAME: %[[ACC:[a-z0-9]+]]: vector<1xf32>)
// CHECK: %[[V:.+]] = vector.load {{.+}} : memref<4x100xf32>, vector<4xf32>
// CHECK: %[[A:.+]] = vector.extract %[[ACC]][0]
// CHECK: vector.reduction <add>, %[[V]], %[[A]] : vector<4xf32> into f32
// CHECK-NOT: vector.multi_reduction
func.func @reduction(%a: memref<4x100xf32>, %i: index, %j: index, %acc: vector<1xf32>) -> vector<1xf32> {
  %pad = ub.poison : f32
  %v = vector.transfer_read %a[%i, %j], %pad {in_bounds = [true, true]} : memref<4x100xf32>, vector<1x4xf32>
  %s = vector.multi_reduction <add>, %v, %acc [1] : vector<1x4xf32> to vector<1xf32>
  return %s : vector<1xf32>
}

// -----

// A reduction over an outer dim (column sums) is elementwise across lanes.
// CHECK-LABEL: func.func @outer_reduction
// CHECK: %[[R0:.+]] = vector.extract %{{.+}}[0] : vector<8xf32> from vector<2x8xf32>
// CHECK: %[[S0:.+]] = arith.addf %[[R0]], %{{.+}} : vector<8xf32>
// CHECK: %[[R1:.+]] = vector.extract %{{.+}}[1] : vector<8xf32> from vector<2x8xf32>
// CHECK: arith.addf %[[R1]], %[[S0]] : vector<8xf32>
// CHECK-NOT: vector.multi_reduction
func.func @outer_reduction(%v: vector<2x8xf32>, %acc: vector<8xf32>) -> vector<8xf32> {
  %s = vector.multi_reduction <add>, %v, %acc [0] : vector<2x8xf32> to vector<8xf32>
  return %s : vector<8xf32>
}

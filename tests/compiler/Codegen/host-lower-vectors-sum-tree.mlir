// RUN: kiln-opt %s --split-input-file --kiln-host-lower-vectors --canonicalize --cse | FileCheck %s

// A row sum whose loop folds each step's vector into one scalar in order
// (2048 steps of 4 f32) becomes a tree of loops over the same steps: levels
// of at most 8 children (steps 4, 32, 256 and 2048 elements; the innermost
// adds the loaded vectors), one vector accumulator each, the top sum's lanes
// reduced onto the initial value at the end.
// CHECK-LABEL: func.func @row_sum
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK-DAG:     %[[INIT:.*]] = vector.load %{{.*}} : memref<16xf32>, vector<1xf32>
// CHECK:         %[[TOP:.*]] = scf.for %[[I3:.*]] = %c0 to %c8192 step %c2048 iter_args(%[[A3:.*]] = %[[ZERO]]) -> (vector<4xf32>)
// CHECK:           %[[E2:.*]] = arith.minsi %{{.*}}, %c8192
// CHECK:           scf.for %{{.*}} = %[[I3]] to %[[E2]] step %c256 iter_args(%{{.*}} = %[[ZERO]])
// CHECK:             scf.for %{{.*}} step %c32 iter_args(%{{.*}} = %[[ZERO]])
// CHECK:               scf.for %[[I0:.*]] = %{{.*}} step %c4 iter_args(%[[A0:.*]] = %[[ZERO]])
// CHECK:                 %[[V:.*]] = vector.load %{{.*}}[%{{.*}}, %[[I0]]] : memref<16x8192xf32>, vector<4xf32>
// CHECK:                 %[[S0:.*]] = arith.addf %[[V]], %[[A0]] : vector<4xf32>
// CHECK:                 scf.yield %[[S0]]
// CHECK:           arith.addf %{{.*}}, %[[A3]] : vector<4xf32>
// CHECK:         %[[I:.*]] = vector.extract %[[INIT]][0] : f32 from vector<1xf32>
// CHECK:         %[[T:.*]] = vector.reduction <add>, %[[TOP]], %[[I]] fastmath<reassoc> : vector<4xf32> into f32
// CHECK:         vector.broadcast %[[T]] : f32 to vector<1xf32>
// CHECK-NOT:     vector.reduction <add>
func.func @row_sum(%x: memref<16x8192xf32>, %out: memref<16xf32>, %row: index) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8192 = arith.constant 8192 : index
  %zero = arith.constant dense<0.0> : vector<1xf32>
  %init = vector.load %out[%row] : memref<16xf32>, vector<1xf32>
  %sum = scf.for %i = %c0 to %c8192 step %c4 iter_args(%acc = %init) -> (vector<1xf32>) {
    %v = vector.load %x[%row, %i] : memref<16x8192xf32>, vector<4xf32>
    %a = vector.extract %acc[0] : f32 from vector<1xf32>
    %s = vector.reduction <add>, %v, %a : vector<4xf32> into f32
    %r = vector.insert %s, %zero [0] : f32 into vector<1xf32>
    scf.yield %r : vector<1xf32>
  }
  vector.store %sum, %out[%row] : memref<16xf32>, vector<1xf32>
  return
}

// -----

// Short sums (at most 8 steps) get one level. Maxima and integer sums,
// exact in any order, get the same tree for its independent chains, from
// their identities: NaN for maxnumf (an all-NaN row stays NaN), 0 for
// integer sums (no reassoc flag on the last reduction).
// CHECK-LABEL: func.func @short_sum
// CHECK:         scf.for %{{.*}} = %c0 to %c24 step %c4 iter_args(%{{.*}} = %{{.*}}) -> (vector<4xf32>)
// CHECK-NOT:     scf.for
// CHECK:         vector.reduction <add>, %{{.*}}, %{{.*}} fastmath<reassoc>
// CHECK-LABEL: func.func @row_max
// CHECK-DAG:     %[[NAN:.*]] = arith.constant dense<0x7FC00000> : vector<4xf32>
// CHECK:         scf.for {{.*}} step %c32 iter_args(%{{.*}} = %[[NAN]]) -> (vector<4xf32>)
// CHECK:           scf.for {{.*}} step %c4 iter_args(%[[M:.*]] = %[[NAN]]) -> (vector<4xf32>)
// CHECK:             arith.maxnumf %{{.*}}, %[[M]] : vector<4xf32>
// CHECK:         vector.reduction <maxnumf>, %{{.*}}, %{{.*}} fastmath<reassoc> : vector<4xf32> into f32
// CHECK-LABEL: func.func @int_sum
// CHECK-DAG:     %[[IZERO:.*]] = arith.constant dense<0> : vector<4xi32>
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[IZERO]]) -> (vector<4xi32>)
// CHECK:           arith.addi
// CHECK:         vector.reduction <add>, %{{.*}}, %{{.*}} : vector<4xi32> into i32
func.func @short_sum(%x: memref<24xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c24 = arith.constant 24 : index
  %init = vector.load %out[%c0] : memref<1xf32>, vector<1xf32>
  %sum = scf.for %i = %c0 to %c24 step %c4 iter_args(%acc = %init) -> (vector<1xf32>) {
    %v = vector.load %x[%i] : memref<24xf32>, vector<4xf32>
    %a = vector.extract %acc[0] : f32 from vector<1xf32>
    %s = vector.reduction <add>, %v, %a : vector<4xf32> into f32
    %r = vector.broadcast %s : f32 to vector<1xf32>
    scf.yield %r : vector<1xf32>
  }
  vector.store %sum, %out[%c0] : memref<1xf32>, vector<1xf32>
  return
}
func.func @row_max(%x: memref<64xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %init = vector.load %out[%c0] : memref<1xf32>, vector<1xf32>
  %m = scf.for %i = %c0 to %c64 step %c4 iter_args(%acc = %init) -> (vector<1xf32>) {
    %v = vector.load %x[%i] : memref<64xf32>, vector<4xf32>
    %a = vector.extract %acc[0] : f32 from vector<1xf32>
    %s = vector.reduction <maxnumf>, %v, %a : vector<4xf32> into f32
    %r = vector.broadcast %s : f32 to vector<1xf32>
    scf.yield %r : vector<1xf32>
  }
  vector.store %m, %out[%c0] : memref<1xf32>, vector<1xf32>
  return
}
func.func @int_sum(%x: memref<64xi32>, %out: memref<1xi32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %init = vector.load %out[%c0] : memref<1xi32>, vector<1xi32>
  %m = scf.for %i = %c0 to %c64 step %c4 iter_args(%acc = %init) -> (vector<1xi32>) {
    %v = vector.load %x[%i] : memref<64xi32>, vector<4xi32>
    %a = vector.extract %acc[0] : i32 from vector<1xi32>
    %s = vector.reduction <add>, %v, %a : vector<4xi32> into i32
    %r = vector.broadcast %s : i32 to vector<1xi32>
    scf.yield %r : vector<1xi32>
  }
  vector.store %m, %out[%c0] : memref<1xi32>, vector<1xi32>
  return
}

// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-math=backend=nvvm | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-math=backend=rocdl | FileCheck %s --check-prefix=ROCDL

// f32 divisions of a block by one divisor (a softmax's row sum) become
// multiplications by its reciprocal, computed once with a power-of-two scale
// k (2^64 below 2^-100, 2^-64 above 2^100) that keeps it normal:
// x / s = (x * (1 / (s * k))) * k. Vector divisions by a broadcast of the
// same scalar share it too.
// CHECK-LABEL: func.func @shared_divisor
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[V:.*]]: vector<4xf32>, %[[S:.*]]: f32)
// CHECK: %[[ABS:.*]] = math.absf %[[S]] : f32
// CHECK: %[[LOW:.*]] = arith.constant 7.88860905E-31 : f32
// CHECK: %[[TINY:.*]] = arith.cmpf olt, %[[ABS]], %[[LOW]]
// CHECK: %[[HIGH:.*]] = arith.constant 1.2676506E+30 : f32
// CHECK: %[[HUGE:.*]] = arith.cmpf ogt, %[[ABS]], %[[HIGH]]
// CHECK: %[[UNIT:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[DOWN:.*]] = arith.constant 5.42101086E-20 : f32
// CHECK: %[[K0:.*]] = arith.select %[[HUGE]], %[[DOWN]], %[[UNIT]] : f32
// CHECK: %[[UP:.*]] = arith.constant 1.84467441E+19 : f32
// CHECK: %[[K:.*]] = arith.select %[[TINY]], %[[UP]], %[[K0]] : f32
// CHECK: %[[SK:.*]] = arith.mulf %[[S]], %[[K]] : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[R:.*]] = arith.divf %[[ONE]], %[[SK]] : f32
// CHECK: %[[P0:.*]] = arith.mulf %[[X]], %[[R]] : f32
// CHECK: %[[Q0:.*]] = arith.mulf %[[P0]], %[[K]] : f32
// CHECK: %[[P1:.*]] = arith.mulf %[[Y]], %[[R]] : f32
// CHECK: %[[Q1:.*]] = arith.mulf %[[P1]], %[[K]] : f32
// CHECK: %[[RV:.*]] = vector.broadcast %[[R]] : f32 to vector<4xf32>
// CHECK: %[[KV:.*]] = vector.broadcast %[[K]] : f32 to vector<4xf32>
// CHECK: %[[PV:.*]] = arith.mulf %[[V]], %[[RV]] : vector<4xf32>
// CHECK: %[[QV:.*]] = arith.mulf %[[PV]], %[[KV]] : vector<4xf32>
// CHECK: return %[[Q0]], %[[Q1]], %[[QV]]
// ROCDL-LABEL: func.func @shared_divisor
// ROCDL-COUNT-1: arith.divf
// ROCDL-NOT: arith.divf
func.func @shared_divisor(%x: f32, %y: f32, %v: vector<4xf32>, %s: f32) -> (f32, f32, vector<4xf32>) {
  %a = arith.divf %x, %s : f32
  %b = arith.divf %y, %s : f32
  %sv = vector.broadcast %s : f32 to vector<4xf32>
  %c = arith.divf %v, %sv : vector<4xf32>
  return %a, %b, %c : f32, f32, vector<4xf32>
}

// -----

// A lone division, and f64 and f16 divisions, stay divisions.
// CHECK-LABEL: func.func @kept
// ROCDL-LABEL: func.func @kept
// CHECK-COUNT-3: arith.divf
// CHECK-NOT: arith.mulf
func.func @kept(%x: f32, %s: f32, %d: f64, %e: f64, %h: f16, %g: f16) -> (f32, f64, f64, f16, f16) {
  %a = arith.divf %x, %s : f32
  %b = arith.divf %d, %e : f64
  %c = arith.divf %e, %e : f64
  %f = arith.divf %h, %g : f16
  %i = arith.divf %g, %g : f16
  return %a, %b, %c, %f, %i : f32, f64, f64, f16, f16
}

// -----

// On NVVM, f32 maxima and minima become LLVM's intrinsics with the same
// semantics (max.NaN.f32 / max.f32 and their minima on sm_80 and later).
// CHECK-LABEL: func.func @extrema
// CHECK: llvm.intr.maximum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.intr.minimum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.intr.maxnum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.intr.minnum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// ROCDL-LABEL: func.func @extrema
// ROCDL: arith.maximumf
// ROCDL: arith.minimumf
// ROCDL: arith.maxnumf
// ROCDL: arith.minnumf
func.func @extrema(%x: f32, %y: f32) -> (f32, f32, f32, f32) {
  %a = arith.maximumf %x, %y : f32
  %b = arith.minimumf %x, %y : f32
  %c = arith.maxnumf %x, %y : f32
  %d = arith.minnumf %x, %y : f32
  return %a, %b, %c, %d : f32, f32, f32, f32
}

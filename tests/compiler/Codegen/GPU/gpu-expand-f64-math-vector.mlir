// RUN: kiln-opt %s --kiln-gpu-expand-f64-math | FileCheck %s

// Vectors of f64 are expanded elementwise with splat constants; f32 is left
// to kiln-gpu-lower-math.
// CHECK-LABEL: func.func @vector_and_f32
// CHECK-NOT: math.exp %{{.*}} : vector<4xf64>
// CHECK-DAG: arith.constant dense<7.100000e+02> : vector<4xf64>
// CHECK-DAG: arith.bitcast %{{.*}} : vector<4xi64> to vector<4xf64>
// CHECK: math.exp %{{.*}} : f32
func.func @vector_and_f32(%v: vector<4xf64>, %x: f32) -> (vector<4xf64>, f32) {
  %0 = math.exp %v : vector<4xf64>
  %1 = math.exp %x : f32
  return %0, %1 : vector<4xf64>, f32
}

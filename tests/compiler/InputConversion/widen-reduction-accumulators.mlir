// RUN: kiln-opt %s --split-input-file --kiln-widen-reduction-accumulators --canonicalize | FileCheck %s

// An f16 sum (linalg.reduce) accumulates in f32 from the widened initial
// value and is rounded to f16 once.
// CHECK-LABEL: func.func @sum_f16
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<f32>)
// CHECK:   arith.extf %{{.*}} : f16 to f32
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<4096xf16>) outs(%[[INIT]] : tensor<f32>)
// CHECK:   %[[X:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:   %[[S:.*]] = arith.addf %[[X]], %{{.*}} : f32
// CHECK:   linalg.yield %[[S]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<f32>) outs(%{{.*}} : tensor<f16>)
// CHECK:   arith.truncf %{{.*}} : f32 to f16
func.func @sum_f16(%x: tensor<4096xf16>) -> tensor<f16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<f16>
  %f = linalg.fill ins(%zero : f16) outs(%e : tensor<f16>) -> tensor<f16>
  %r = linalg.reduce ins(%x : tensor<4096xf16>) outs(%f : tensor<f16>) dimensions = [0]
    (%a: f16, %acc: f16) {
      %s = arith.addf %a, %acc : f16
      linalg.yield %s : f16
    }
  return %r : tensor<f16>
}

// -----

// A bf16 dot product: the products are formed in f32 too.
// CHECK-LABEL: func.func @dot_bf16
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1024xbf16>, tensor<1024xbf16>) outs(%{{.*}} : tensor<f32>)
// CHECK-DAG: %[[A:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK-DAG: %[[B:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: arith.addf %[[P]], %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @dot_bf16(%a: tensor<1024xbf16>, %b: tensor<1024xbf16>, %init: tensor<bf16>) -> tensor<bf16> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%a, %b : tensor<1024xbf16>, tensor<1024xbf16>) outs(%init : tensor<bf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %p, %acc : bf16
    linalg.yield %s : bf16
  } -> tensor<bf16>
  return %r : tensor<bf16>
}

// -----

// Max is exact in any precision, and f32 sums are already f32: untouched
// (still named).
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: arith.extf
// CHECK: linalg.reduce
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f16
// CHECK: linalg.reduce
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: arith.truncf
func.func @untouched(%x: tensor<64xf16>, %m: tensor<f16>, %y: tensor<64xf32>, %s: tensor<f32>) -> (tensor<f16>, tensor<f32>) {
  %r = linalg.reduce ins(%x : tensor<64xf16>) outs(%m : tensor<f16>) dimensions = [0]
    (%a: f16, %acc: f16) {
      %v = arith.maximumf %a, %acc : f16
      linalg.yield %v : f16
    }
  %t = linalg.reduce ins(%y : tensor<64xf32>) outs(%s : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %v = arith.addf %a, %acc : f32
      linalg.yield %v : f32
    }
  return %r, %t : tensor<f16>, tensor<f32>
}

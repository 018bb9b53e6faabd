// RUN: kiln-opt %s --split-input-file --kiln-outline-dispatch-regions | FileCheck %s

// Captured tensors become kernel arguments in order of first use; the fill
// of an empty tensor and the splat constant are rebuilt inside the kernel
// (the splat as a fill), the scalar constant is cloned. Executables are
// named after the function and numbered in order.
// CHECK-LABEL: kiln.executable @main_dispatch_0 {
// CHECK-NEXT:    func.func @main_dispatch_0(%[[X:[a-z0-9_]+]]: tensor<4x8xf32>, %[[W:[a-z0-9_]+]]: tensor<8x16xf32>) -> tensor<4x16xf32> {
// CHECK-DAG:       %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:       %[[E:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-DAG:       %[[F:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4x16xf32>)
// CHECK-DAG:       %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG:       %[[SE:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-DAG:       %[[SPLAT:.+]] = linalg.fill ins(%[[TWO]] : f32) outs(%[[SE]] : tensor<4x16xf32>)
// CHECK:           %[[MM:.+]] = linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[F]] :
// CHECK:           %[[ADD:.+]] = linalg.add ins(%[[MM]], %[[SPLAT]] : {{.*}}) outs(%[[E]] :
// CHECK:           return %[[ADD]] : tensor<4x16xf32>
// CHECK:       kiln.executable @main_dispatch_1 {
// CHECK-NEXT:    func.func @main_dispatch_1(%{{.+}}: tensor<4x16xf32>) -> tensor<64xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[ARG0:[a-z0-9_]+]]: tensor<4x8xf32>
// CHECK:         %[[W2:.+]] = arith.constant dense<{{.*}}> : tensor<8x16xf32>
// CHECK:         %[[D0:.+]] = kiln.dispatch @main_dispatch_0::@main_dispatch_0(%[[ARG0]], %[[W2]]) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK:         %[[D1:.+]] = kiln.dispatch @main_dispatch_1::@main_dispatch_1(%[[D0]]) : (tensor<4x16xf32>) -> tensor<64xf32>
// CHECK:         return %[[D1]]
func.func @main(%x: tensor<4x8xf32>) -> tensor<64xf32> {
  %cst = arith.constant 0.0 : f32
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                              [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                              [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                              [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                              [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                              [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                              [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                              [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]]> : tensor<8x16xf32>
  %two = arith.constant dense<2.0> : tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = kiln.dispatch_region -> (tensor<4x16xf32>) {
    %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
    %add = linalg.add ins(%mm, %two : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
    kiln.yield %add : tensor<4x16xf32>
  }
  %r2 = kiln.dispatch_region -> (tensor<64xf32>) {
    %flat = tensor.collapse_shape %r [[0, 1]] : tensor<4x16xf32> into tensor<64xf32>
    %e2 = tensor.empty() : tensor<64xf32>
    %n = linalg.negf ins(%flat : tensor<64xf32>) outs(%e2 : tensor<64xf32>) -> tensor<64xf32>
    kiln.yield %n : tensor<64xf32>
  }
  return %r2 : tensor<64xf32>
}

// -----

// A scalar read from a tensor on the host (tensor.extract) is recomputed in
// the kernel, which takes the tensor instead.
// CHECK-LABEL: kiln.executable @scale_dispatch_0
// CHECK:         func.func @scale_dispatch_0(%[[S:[a-z0-9_]+]]: tensor<f32>, %[[X:[a-z0-9_]+]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:           %[[V:.+]] = tensor.extract %[[S]][] : tensor<f32>
// CHECK:           linalg.generic
// CHECK:             arith.mulf %{{.+}}, %[[V]] : f32
// CHECK-LABEL: func.func @scale(
// CHECK:         kiln.dispatch @scale_dispatch_0::@scale_dispatch_0(%arg1, %arg0)
func.func @scale(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  %v = tensor.extract %s[] : tensor<f32>
  %e = tensor.empty() : tensor<4xf32>
  %r = kiln.dispatch_region -> (tensor<4xf32>) {
    %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %v : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    kiln.yield %g : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

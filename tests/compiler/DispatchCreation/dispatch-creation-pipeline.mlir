// RUN: kiln-opt %s --kiln-input-pipeline --kiln-dispatch-creation-pipeline | FileCheck %s

// A two-layer MLP: each layer's matmul, bias broadcast + add and relu run as
// one kernel; the weights (dense constants) stay on the host as operands,
// the zero fills are rebuilt inside the kernels, and the reshape between the
// layers is a host alias.
// CHECK-LABEL: kiln.executable @mlp_dispatch_0 {
// CHECK:         func.func @mlp_dispatch_0(%{{.+}}: tensor<4x8xf32>, %{{.+}}: tensor<8x16xf32>, %{{.+}}: tensor<16xf32>) -> tensor<4x16xf32>
// CHECK:           linalg.fill
// CHECK:           linalg.matmul
// CHECK:           linalg.generic
// CHECK:             arith.addf
// CHECK:             arith.maximumf
// CHECK:           return
// CHECK:       kiln.executable @mlp_dispatch_1 {
// CHECK:         func.func @mlp_dispatch_1(%{{.+}}: tensor<8x8xf32>, %{{.+}}: tensor<8x2xf32>) -> tensor<8x2xf32>
// CHECK:           linalg.matmul
// CHECK-LABEL: func.func @mlp(
// CHECK-DAG:     %[[W1:.+]] = arith.constant dense<{{.+}}> : tensor<8x16xf32>
// CHECK-DAG:     %[[W2:.+]] = arith.constant dense<{{.+}}> : tensor<8x2xf32>
// CHECK:         %[[H:.+]] = kiln.dispatch @mlp_dispatch_0::@mlp_dispatch_0(%arg0, %[[W1]], %arg1)
// CHECK:         %[[X:.+]] = tensor.expand_shape %[[H]]
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[X]]
// CHECK:         %[[O:.+]] = kiln.dispatch @mlp_dispatch_1::@mlp_dispatch_1(%[[R]], %[[W2]])
// CHECK:         return %[[O]]
func.func @mlp(%x: tensor<4x8xf32>, %b: tensor<16xf32>) -> tensor<8x2xf32> {
  %w1 = arith.constant dense<[[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6],
                               [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6],
                               [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6],
                               [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6],
                               [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6],
                               [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6],
                               [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6],
                               [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6]]> : tensor<8x16xf32>
  %w2 = arith.constant dense<[[1.0, -1.0], [2.0, -2.0], [3.0, -3.0], [4.0, -4.0],
                               [5.0, -5.0], [6.0, -6.0], [7.0, -7.0], [8.0, -8.0]]> : tensor<8x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %w1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %bb = linalg.broadcast ins(%b : tensor<16xf32>) outs(%e : tensor<4x16xf32>) dimensions = [0]
  %add = linalg.add ins(%mm, %bb : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %relu = linalg.max ins(%add, %f : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = tensor.expand_shape %relu [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %r = tensor.collapse_shape %h [[0, 1], [2]] : tensor<4x2x8xf32> into tensor<8x8xf32>
  %e2 = tensor.empty() : tensor<8x2xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %o = linalg.matmul ins(%r, %w2 : tensor<8x8xf32>, tensor<8x2xf32>) outs(%f2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  return %o : tensor<8x2xf32>
}

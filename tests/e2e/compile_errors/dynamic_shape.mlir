// A dynamic shape in a public function's signature is rejected with a
// diagnostic at the source location and a non-zero exit, never a crash.
// RUN: not kiln-compile %s --target=host -o %t.vmfb 2>&1 | FileCheck %s

// CHECK: dynamic_shape.mlir:[[@LINE+1]]:{{[0-9]+}}: error:
func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %a, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%d) : tensor<?x4xf32>
  %r = linalg.add ins(%a, %b : tensor<?x4xf32>, tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// An op Kiln does not know is a diagnostic at its location, not a crash.
// RUN: not kiln-compile %s --target=host -o %t.vmfb 2>&1 | FileCheck %s

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: unknown_op.mlir:[[@LINE+1]]:{{[0-9]+}}: error:
  %r = "kiln_test.no_such_op"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

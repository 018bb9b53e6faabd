// A parse error is reported with file:line:col and a non-zero exit.
// RUN: not kiln-compile %s --target=host -o %t.vmfb 2>&1 | FileCheck %s

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: syntax_error.mlir:[[@LINE+1]]:{{[0-9]+}}: error:
  %r = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%a : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

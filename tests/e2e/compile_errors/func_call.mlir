// func.call is not accepted: a diagnostic at the call's location.
// RUN: not kiln-compile %s --target=host -o %t.vmfb 2>&1 | FileCheck %s

func.func @double(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: func_call.mlir:[[@LINE+1]]:{{[0-9]+}}: error:
  %r = func.call @double(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Control flow (scf.if) is not accepted: a diagnostic at the op's location.
// RUN: not kiln-compile %s --target=host -o %t.vmfb 2>&1 | FileCheck %s

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  %p = tensor.extract %c[] : tensor<i1>
  // CHECK: control_flow.mlir:[[@LINE+1]]:{{[0-9]+}}: error:
  %r = scf.if %p -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// A registered MLIR op outside the accepted input (here a memref op on a
// function working on tensors) is a diagnostic at its location, not a crash.
// RUN: not kiln-compile %s --target=host -o %t.vmfb 2>&1 | FileCheck %s

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: unsupported_op.mlir:[[@LINE+1]]:{{[0-9]+}}: error:
  %m = bufferization.to_buffer %a : tensor<4xf32> to memref<4xf32>
  %r = bufferization.to_tensor %m restrict : memref<4xf32> to tensor<4xf32>
  return %r : tensor<4xf32>
}

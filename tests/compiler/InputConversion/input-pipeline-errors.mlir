// RUN: kiln-opt %s --split-input-file --kiln-input-pipeline --verify-diagnostics

// Legality runs first: the error is the user's op, not a later lowering.
func.func @dynamic(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{result #0 of 'tensor.empty' has type 'tensor<?xf32>': dynamic shapes are not supported}}
  %e = tensor.empty(%c0) : tensor<?xf32>
  return %a : tensor<4xf32>
}

// -----

// Unranked intermediates are rejected too, not only at the boundary.
func.func @unknown(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result #0 of 'tensor.cast' has type 'tensor<*xf32>': unranked tensors are not supported}}
  %c = tensor.cast %a : tensor<4xf32> to tensor<*xf32>
  %d = tensor.cast %c : tensor<*xf32> to tensor<4xf32>
  return %d : tensor<4xf32>
}

// Element types outside i1/i8/i16/i32/i64/f16/bf16/f32/f64 are rejected with
// a diagnostic at the function.
// RUN: not kiln-compile %s --target=host -o %t.vmfb 2>&1 | FileCheck %s

// CHECK: unsupported_element_type.mlir:[[@LINE+1]]:{{[0-9]+}}: error:
func.func @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  return %a : tensor<4xcomplex<f32>>
}

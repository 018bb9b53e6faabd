// kiln-move-constants-to-rodata on load-time parameters: arguments still
// marked kiln.parameter leave the signature and become rodata segments that
// name the parameter and hold no bytes; functions naming the same parameter
// share its segment. Every problem is an error located at the argument.
// RUN: split-file %s %t
// RUN: kiln-opt %t/ok.mlir --kiln-move-constants-to-rodata | FileCheck %s
// RUN: kiln-opt %t/bad.mlir --kiln-move-constants-to-rodata -verify-diagnostics -split-input-file

//--- ok.mlir
// CHECK:       kiln.rodata @f_parameter_0 parameter "w" : tensor<2x3xf32> {alignment = 64 : i64}
// CHECK-NEXT:  kiln.rodata @f_parameter_1 parameter "mask" : tensor<4xi1> {alignment = 64 : i64}
// CHECK-NEXT:  kiln.rodata @f_rodata_0 {alignment = 64 : i64} dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-LABEL: func.func @f(%{{.+}}: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4xi1>, tensor<2xf32>)
// CHECK-DAG:     %[[W:.+]] = kiln.rodata_ref @f_parameter_0 : tensor<2x3xf32>
// CHECK-DAG:     %[[M:.+]] = kiln.rodata_ref @f_parameter_1 : tensor<4xi1>
// CHECK-DAG:     %[[C:.+]] = kiln.rodata_ref @f_rodata_0 : tensor<2xf32>
// CHECK:         return %[[W]], %[[M]], %[[C]]
// CHECK-LABEL: func.func @g()
// CHECK-NEXT:    kiln.rodata_ref @f_parameter_0 : tensor<2x3xf32>
func.func @f(%x: tensor<2x3xf32>, %w: tensor<2x3xf32> {kiln.parameter = "w"},
             %m: tensor<4xi1> {kiln.parameter = "mask"})
    -> (tensor<2x3xf32>, tensor<4xi1>, tensor<2xf32>) {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %w, %m, %c : tensor<2x3xf32>, tensor<4xi1>, tensor<2xf32>
}
func.func @g(%w: tensor<2x3xf32> {kiln.parameter = "w"}) -> tensor<2x3xf32> {
  return %w : tensor<2x3xf32>
}

//--- bad.mlir
// expected-error @+1 {{argument 0 of @f (load-time parameter 'w'): a parameter must be a static-shape tensor of i1..i64 or f16/bf16/f32/f64, not 'tensor<?xf32>'}}
func.func @f(%w: tensor<?xf32> {kiln.parameter = "w"}) -> tensor<?xf32> {
  return %w : tensor<?xf32>
}

// -----
// expected-error @+1 {{argument 0 of @f (load-time parameter 'c'): a parameter must be a static-shape tensor of i1..i64 or f16/bf16/f32/f64, not 'tensor<2xcomplex<f32>>'}}
func.func @f(%c: tensor<2xcomplex<f32>> {kiln.parameter = "c"}) -> tensor<2xcomplex<f32>> {
  return %c : tensor<2xcomplex<f32>>
}

// -----
// expected-error @+1 {{argument 0 of @f (load-time parameter ''): the parameter name is empty}}
func.func @f(%w: tensor<2xf32> {kiln.parameter = ""}) -> tensor<2xf32> {
  return %w : tensor<2xf32>
}

// -----
func.func @f(%w: tensor<2xf32> {kiln.parameter = "w"}) -> tensor<2xf32> {
  return %w : tensor<2xf32>
}
// expected-error @+1 {{argument 0 of @g (load-time parameter 'w'): its type 'tensor<3xf32>' differs from 'tensor<2xf32>' of argument 0 of @f}}
func.func @g(%w: tensor<3xf32> {kiln.parameter = "w"}) -> tensor<3xf32> {
  return %w : tensor<3xf32>
}

// RUN: kiln-opt %s --kiln-move-constants-to-rodata | FileCheck %s
// RUN: kiln-opt %s --kiln-move-constants-to-rodata=alignment=128 | FileCheck %s --check-prefix=ALIGN

// Dense constants of host functions become rodata segments named after the
// first function using them; equal constants share one segment; splats stay
// (they become fills). Kernels inside executables are not touched.
// CHECK:       kiln.executable @k
// CHECK:         arith.constant dense<[5, 6]> : tensor<2xi32>
// CHECK:       kiln.rodata @f_rodata_0 {alignment = 64 : i64} dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:  kiln.rodata @f_rodata_1 {alignment = 64 : i64} dense<[1, 2, 3]> : tensor<3xi8>
// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %[[A:.+]] = kiln.rodata_ref @f_rodata_0 : tensor<2xf32>
// CHECK-NEXT:    %[[B:.+]] = kiln.rodata_ref @f_rodata_1 : tensor<3xi8>
// CHECK-NEXT:    %[[S:.+]] = arith.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    return %[[A]], %[[B]], %[[S]]
// CHECK-LABEL: func.func @g
// CHECK-NEXT:    kiln.rodata_ref @f_rodata_0 : tensor<2xf32>
// ALIGN: kiln.rodata @f_rodata_0 {alignment = 128 : i64}
kiln.executable @k {
  func.func @k() -> tensor<2xi32> {
    %c = arith.constant dense<[5, 6]> : tensor<2xi32>
    return %c : tensor<2xi32>
  }
}
func.func @f() -> (tensor<2xf32>, tensor<3xi8>, tensor<2xf32>) {
  %a = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = arith.constant dense<[1, 2, 3]> : tensor<3xi8>
  %s = arith.constant dense<1.0> : tensor<2xf32>
  return %a, %b, %s : tensor<2xf32>, tensor<3xi8>, tensor<2xf32>
}
func.func @g() -> tensor<2xf32> {
  %a = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %a : tensor<2xf32>
}

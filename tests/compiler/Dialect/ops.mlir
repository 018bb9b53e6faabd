// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// Every Kiln op and #kiln.buffer round-trip through the printer and parser.
// CHECK-LABEL: kiln.executable @k {
// CHECK:       kiln.rodata @w {alignment = 64 : i64} dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-LABEL: kiln.program @p : (tensor<2xf32>) -> tensor<2xf32> transient_size(64) {
// CHECK-NEXT:    kiln.cmd.fill <transient[0], offset = 0, length = 8> pattern(0 : i32)
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<input[0], offset = 0, length = 8>, #kiln.buffer<output[0], offset = 0, length = 8>]
// CHECK-NEXT:    kiln.cmd.copy <rodata[0], offset = 0, length = 8> to <transient[0], offset = 0, length = 8>
// CHECK-LABEL: func.func @f
// CHECK:         %[[R:.+]] = kiln.dispatch_region -> (tensor<2xf32>) {
// CHECK:           kiln.yield %{{.+}} : tensor<2xf32>
// CHECK:         kiln.rodata_ref @w : tensor<2xf32>
// CHECK:         kiln.dispatch @k::@k(%[[R]]) : (tensor<2xf32>) -> tensor<2xf32>
kiln.executable @k {
  func.func @k(%a: tensor<2xf32>) -> tensor<2xf32> {
    return %a : tensor<2xf32>
  }
}
kiln.rodata @w {alignment = 64 : i64} dense<[1.0, 2.0]> : tensor<2xf32>
kiln.program @p : (tensor<2xf32>) -> tensor<2xf32> transient_size(64) {
  kiln.cmd.fill <transient[0], offset = 0, length = 8> pattern(0 : i32)
  kiln.cmd.barrier
  kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<input[0], offset = 0, length = 8>, #kiln.buffer<output[0], offset = 0, length = 8>]
  kiln.cmd.copy <rodata[0], offset = 0, length = 8> to <transient[0], offset = 0, length = 8>
}
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = kiln.dispatch_region -> (tensor<2xf32>) {
    %n = arith.negf %x : tensor<2xf32>
    kiln.yield %n : tensor<2xf32>
  }
  %w = kiln.rodata_ref @w : tensor<2xf32>
  %d = kiln.dispatch @k::@k(%r) : (tensor<2xf32>) -> tensor<2xf32>
  return %d : tensor<2xf32>
}

// RUN: kiln-opt %s --kiln-input-pipeline --kiln-dispatch-creation-pipeline --kiln-host-lowering-pipeline | FileCheck %s

// The whole host side of a two-layer program: the weight becomes rodata[0],
// both layers are dispatches, the hidden value lives in the arena and the
// reshape between the layers aliases it (same range).
// CHECK:       kiln.executable @main_dispatch_0
// CHECK:       kiln.executable @main_dispatch_1
// CHECK:       kiln.rodata @main_rodata_0 {alignment = 64 : i64}
// CHECK-LABEL: kiln.program @main : (tensor<2x4xf32>) -> tensor<4x2xf32> transient_size(64) {
// CHECK-NEXT:    kiln.cmd.dispatch @main_dispatch_0::@main_dispatch_0 bindings [#kiln.buffer<input[0], offset = 0, length = 32>, #kiln.buffer<rodata[0], offset = 0, length = 64>, #kiln.buffer<transient[0], offset = 0, length = 32>]
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.dispatch @main_dispatch_1::@main_dispatch_1 bindings [#kiln.buffer<transient[0], offset = 0, length = 32>, #kiln.buffer<output[0], offset = 0, length = 32>]
// CHECK-NEXT:  }
func.func @main(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 4.0]]> : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  %shape = arith.constant dense<[4, 2]> : tensor<2xi64>
  %r = tensor.reshape %h(%shape) : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  %e2 = tensor.empty() : tensor<4x2xf32>
  %o = linalg.exp ins(%r : tensor<4x2xf32>) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

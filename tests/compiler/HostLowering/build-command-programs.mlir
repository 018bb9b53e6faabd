// RUN: kiln-opt %s --split-input-file --kiln-build-command-programs --verify-diagnostics | FileCheck %s

// A chain of four dispatches over 128-byte tensors: transients live from
// their dispatch to their last reader, so the third result reuses the
// first's range (offset 0) and the arena holds only two ranges. The last
// result is computed in place in output[0]. Each dispatch reads what the
// previous one wrote, so a barrier separates them.
// CHECK-LABEL: kiln.program @chain : (tensor<32xf32>) -> tensor<32xf32> transient_size(256) {
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<input[0], offset = 0, length = 128>, #kiln.buffer<transient[0], offset = 0, length = 128>]
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<transient[0], offset = 0, length = 128>, #kiln.buffer<transient[0], offset = 128, length = 128>]
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<transient[0], offset = 128, length = 128>, #kiln.buffer<transient[0], offset = 0, length = 128>]
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<transient[0], offset = 0, length = 128>, #kiln.buffer<output[0], offset = 0, length = 128>]
// CHECK-NEXT:  }
kiln.executable @k {
  func.func @k(%a: tensor<32xf32>) -> tensor<32xf32> {
    return %a : tensor<32xf32>
  }
}
func.func @chain(%x: tensor<32xf32>) -> tensor<32xf32> {
  %a = kiln.dispatch @k::@k(%x) : (tensor<32xf32>) -> tensor<32xf32>
  %b = kiln.dispatch @k::@k(%a) : (tensor<32xf32>) -> tensor<32xf32>
  %c = kiln.dispatch @k::@k(%b) : (tensor<32xf32>) -> tensor<32xf32>
  %d = kiln.dispatch @k::@k(%c) : (tensor<32xf32>) -> tensor<32xf32>
  return %d : tensor<32xf32>
}

// -----

// Independent dispatches need no barrier between them; sizes are rounded up
// to 64 bytes in the arena (a 12-byte value takes 64) and the second value,
// live at the same time as the first, goes after it. The join reads both, so
// it waits for them.
// CHECK-LABEL: kiln.program @fan_in : (tensor<3xf32>) -> tensor<3xf32> transient_size(128) {
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<input[0], offset = 0, length = 12>, #kiln.buffer<transient[0], offset = 0, length = 12>]
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<input[0], offset = 0, length = 12>, #kiln.buffer<transient[0], offset = 64, length = 12>]
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.dispatch @j::@j bindings [#kiln.buffer<transient[0], offset = 0, length = 12>, #kiln.buffer<transient[0], offset = 64, length = 12>, #kiln.buffer<output[0], offset = 0, length = 12>]
// CHECK-NEXT:  }
kiln.executable @k {
  func.func @k(%a: tensor<3xf32>) -> tensor<3xf32> {
    return %a : tensor<3xf32>
  }
}
kiln.executable @j {
  func.func @j(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
    return %a : tensor<3xf32>
  }
}
func.func @fan_in(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = kiln.dispatch @k::@k(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %b = kiln.dispatch @k::@k(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %c = kiln.dispatch @j::@j(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %c : tensor<3xf32>
}

// -----

// Results that cannot be computed in place are copied at the end: an input,
// rodata, and a value already returned in another position. An alias of a
// dispatch result shares its range, so the dispatch writes output[1]
// directly; a splat result is a fill of its output (2.0f = 0x40000000, i1
// true widened to a byte). No transient memory is needed.
// CHECK-LABEL: kiln.program @results : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<3xf32>, tensor<8xi1>) transient_size(0) {
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<input[0], offset = 0, length = 16>, #kiln.buffer<output[1], offset = 0, length = 16>]
// CHECK-NEXT:    kiln.cmd.fill <output[4], offset = 0, length = 12> pattern(1073741824 : i32)
// CHECK-NEXT:    kiln.cmd.fill <output[5], offset = 0, length = 8> pattern(1 : i8)
// CHECK-NEXT:    kiln.cmd.copy <input[0], offset = 0, length = 16> to <output[0], offset = 0, length = 16>
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.copy <output[1], offset = 0, length = 16> to <output[2], offset = 0, length = 16>
// CHECK-NEXT:    kiln.cmd.copy <rodata[0], offset = 0, length = 16> to <output[3], offset = 0, length = 16>
// CHECK-NEXT:  }
kiln.executable @k {
  func.func @k(%a: tensor<2x2xf32>) -> tensor<4xf32> {
    %c = tensor.collapse_shape %a [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
    return %c : tensor<4xf32>
  }
}
kiln.rodata @weights {alignment = 64 : i64} dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
func.func @results(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<3xf32>, tensor<8xi1>) {
  %d = kiln.dispatch @k::@k(%x) : (tensor<2x2xf32>) -> tensor<4xf32>
  %v = tensor.expand_shape %d [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %w = kiln.rodata_ref @weights : tensor<4xf32>
  %s = arith.constant dense<2.0> : tensor<3xf32>
  %t = arith.constant dense<true> : tensor<8xi1>
  return %x, %d, %v, %w, %s, %t : tensor<2x2xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<3xf32>, tensor<8xi1>
}

// -----

// A splat constant read by a dispatch is filled into the arena first; the
// dispatch waits for the fill (read after write).
// CHECK-LABEL: kiln.program @splat_operand : (tensor<4xi32>) -> tensor<4xi32> transient_size(64) {
// CHECK-NEXT:    kiln.cmd.fill <transient[0], offset = 0, length = 16> pattern(7 : i32)
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.dispatch @add::@add bindings [#kiln.buffer<input[0], offset = 0, length = 16>, #kiln.buffer<transient[0], offset = 0, length = 16>, #kiln.buffer<output[0], offset = 0, length = 16>]
kiln.executable @add {
  func.func @add(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
    return %a : tensor<4xi32>
  }
}
func.func @splat_operand(%x: tensor<4xi32>) -> tensor<4xi32> {
  %s = arith.constant dense<7> : tensor<4xi32>
  %r = kiln.dispatch @add::@add(%x, %s) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// Compute left on the host is an error that names the op.
func.func @not_dispatched(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{host lowering: 'linalg.negf' cannot run on the host; it must be inside a dispatch (run dispatch creation first)}}
  %n = linalg.negf ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

func.func @dense_constant() -> tensor<2xf32> {
  // expected-error @+1 {{host lowering: dense constant must be moved to rodata first (kiln-move-constants-to-rodata)}}
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}

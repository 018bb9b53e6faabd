// RUN: kiln-opt %s --split-input-file --kiln-build-command-programs --verify-diagnostics | FileCheck %s

// Collectives become commands in stream order with the dispatches. A
// collective reads its send buffer and writes its recv buffer, so a barrier
// separates it from the dispatch that produced its input and from the one
// that reads its result, and none is needed between two collectives that
// touch disjoint ranges. The two all_reduces over the same (grid, axes) share
// channel 0; the all_gather gets channel 1. The all_gather's recv is the
// function's output (through a host alias); the rodata weight is sent as is.
// CHECK-LABEL: kiln.program @step : (tensor<4xf32>) -> (tensor<4xf32>, tensor<8xf32>) transient_size(128)
// CHECK-SAME:    channels [#kiln.channel<@grid, axes = [0], shape = [2]>, #kiln.channel<@grid, axes = [1], shape = [2, 2]>]
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<input[0], offset = 0, length = 16>, #kiln.buffer<transient[0], offset = 0, length = 16>]
// CHECK-NEXT:    kiln.cmd.collective all_reduce(sum) 4 x f32 channel(0) root(0) send <rodata[0], offset = 0, length = 16> recv <transient[0], offset = 64, length = 16>
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.collective all_reduce(avg) 4 x f32 channel(0) root(0) send <transient[0], offset = 0, length = 16> recv <output[0], offset = 0, length = 16>
// CHECK-NEXT:    kiln.cmd.collective all_gather(none) 4 x f32 channel(1) root(0) send <transient[0], offset = 64, length = 16> recv <output[1], offset = 0, length = 32>
// CHECK-NEXT:  }
kiln.rodata @w {alignment = 64 : i64} dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
kiln.executable @k {
  func.func @k(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}
func.func @step(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %d = kiln.dispatch @k::@k(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %w = kiln.rodata_ref @w : tensor<4xf32>
  %ws = kiln.collective all_reduce reduction = sum %w over <@grid, axes = [0], shape = [2]> : tensor<4xf32> -> tensor<4xf32>
  %avg = kiln.collective all_reduce reduction = avg %d over <@grid, axes = [0], shape = [2]> : tensor<4xf32> -> tensor<4xf32>
  %g = kiln.collective all_gather %ws over <@grid, axes = [1], shape = [2, 2]> : tensor<4xf32> -> tensor<2x4xf32>
  %c = tensor.collapse_shape %g [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  return %avg, %c : tensor<4xf32>, tensor<8xf32>
}

// -----

// A collective whose result a dispatch reads: barrier between them (the
// dispatch reads recv). The input is sent straight from input[0].
// CHECK-LABEL: kiln.program @reduce_then_compute
// CHECK-NEXT:    kiln.cmd.collective reduce_scatter(max) 8 x i32 channel(0) root(0) send <input[0], offset = 0, length = 32> recv <transient[0], offset = 0, length = 8>
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<transient[0], offset = 0, length = 8>, #kiln.buffer<output[0], offset = 0, length = 8>]
kiln.executable @k {
  func.func @k(%a: tensor<2xi32>) -> tensor<2xi32> {
    return %a : tensor<2xi32>
  }
}
func.func @reduce_then_compute(%x: tensor<4x2xi32>) -> tensor<2xi32> {
  %r = kiln.collective reduce_scatter reduction = max %x over <@grid, axes = [0], shape = [4]> : tensor<4x2xi32> -> tensor<2xi32>
  %d = kiln.dispatch @k::@k(%r) : (tensor<2xi32>) -> tensor<2xi32>
  return %d : tensor<2xi32>
}

// -----

// Returning the input of a broadcast as well as its result: the input is
// copied to output[1] after the collective read it (no conflict, both read).
// CHECK-LABEL: kiln.program @broadcast
// CHECK-NEXT:    kiln.cmd.collective broadcast(none) 3 x i1 channel(0) root(1) send <input[0], offset = 0, length = 3> recv <output[0], offset = 0, length = 3>
// CHECK-NEXT:    kiln.cmd.copy <input[0], offset = 0, length = 3> to <output[1], offset = 0, length = 3>
func.func @broadcast(%x: tensor<3xi1>) -> (tensor<3xi1>, tensor<3xi1>) {
  %b = kiln.collective broadcast root = 1 %x over <@grid, axes = [0], shape = [2]> : tensor<3xi1> -> tensor<3xi1>
  return %b, %x : tensor<3xi1>, tensor<3xi1>
}

// -----

// A compiled collective (kiln-compile-collectives named its kernel) is a
// dispatch of that kernel over a window of its own: the data and signal
// sizes come from the kernel's window bindings, the peer table holds 2 x 2
// addresses and the abort word's. Its send and recv take part in the barrier analysis as for any
// dispatch.
// CHECK-LABEL: kiln.program @compiled : (tensor<4xf32>) -> tensor<4xf32> transient_size(64)
// CHECK-SAME:    channels [#kiln.channel<@grid, axes = [0], shape = [2]>]
// CHECK-SAME:    windows [#kiln.window<channel = 0, size = 32, signals = 3>]
// CHECK-NEXT:    kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<input[0], offset = 0, length = 16>, #kiln.buffer<transient[0], offset = 0, length = 16>]
// CHECK-NEXT:    kiln.cmd.barrier
// CHECK-NEXT:    kiln.cmd.dispatch @compiled_all_reduce_0::@compiled_all_reduce_0 bindings [#kiln.buffer<transient[0], offset = 0, length = 16>, #kiln.buffer<output[0], offset = 0, length = 16>, #kiln.buffer<window_data[0], offset = 0, length = 32>, #kiln.buffer<window_signals[0], offset = 0, length = 24>, #kiln.buffer<window_peers[0], offset = 0, length = 40>]
// CHECK-NEXT:  }
kiln.executable @k {
  func.func @k(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}
kiln.executable @compiled_all_reduce_0 {
  func.func @compiled_all_reduce_0(%s: memref<4xf32>, %r: memref<4xf32>, %d: memref<8xf32>, %f: memref<3xi64>, %p: memref<5xi64>) {
    kiln.window_collective all_reduce reduction = sum ranks(2) workgroups(1) send(%s) recv(%r) window(%d, %f, %p) : memref<4xf32>, memref<4xf32>, memref<8xf32>, memref<3xi64>, memref<5xi64>
    return
  }
}
func.func @compiled(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.dispatch @k::@k(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.collective all_reduce reduction = sum %0 over <@grid, axes = [0], shape = [2]> kernel @compiled_all_reduce_0::@compiled_all_reduce_0 : tensor<4xf32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

kiln.executable @not_a_collective {
  func.func @not_a_collective(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}
func.func @bad_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{host lowering: compiled collective kernel @not_a_collective::@not_a_collective is missing or does not take send, recv and the window's three buffers}}
  %1 = kiln.collective all_reduce reduction = sum %x over <@grid, axes = [0], shape = [2]> kernel @not_a_collective::@not_a_collective : tensor<4xf32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

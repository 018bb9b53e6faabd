// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// Every Kiln op and #kiln.buffer round-trip through the printer and parser.
// CHECK-LABEL: kiln.executable @k {
// CHECK:       kiln.rodata @w {alignment = 64 : i64} dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:  kiln.rodata @param parameter "w" : tensor<2x3xf32> {alignment = 64 : i64}
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
kiln.rodata @param parameter "w" : tensor<2x3xf32> {alignment = 64 : i64}
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

// Collectives on rank-major layouts and their commands.
// CHECK-LABEL: func.func @collectives
// CHECK: kiln.collective all_reduce reduction = sum %{{.*}} over <@grid, axes = [0, 1], shape = [2, 2]> : tensor<4xf32> -> tensor<4xf32>
// CHECK: kiln.collective all_gather %{{.*}} over <@grid, axes = [1], shape = [2, 2]> : tensor<4xf32> -> tensor<2x4xf32>
// CHECK: kiln.collective reduce_scatter reduction = avg %{{.*}} over <@grid, axes = [1], shape = [2, 2]> : tensor<2x4xf32> -> tensor<4xf32>
// CHECK: kiln.collective all_to_all %{{.*}} : tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK: kiln.collective broadcast root = 1 %{{.*}} : tensor<4xi1> -> tensor<4xi1>
func.func @collectives(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<2x4xf32>, tensor<4xi1>) {
  %0 = kiln.collective all_reduce reduction = sum %x over <@grid, axes = [0, 1], shape = [2, 2]> : tensor<4xf32> -> tensor<4xf32>
  %1 = kiln.collective all_gather %0 over <@grid, axes = [1], shape = [2, 2]> : tensor<4xf32> -> tensor<2x4xf32>
  %2 = kiln.collective reduce_scatter reduction = avg %1 over <@grid, axes = [1], shape = [2, 2]> : tensor<2x4xf32> -> tensor<4xf32>
  %3 = kiln.collective all_to_all %1 over <@grid, axes = [0], shape = [2, 2]> : tensor<2x4xf32> -> tensor<2x4xf32>
  %4 = kiln.collective broadcast root = 1 %b over <@grid, axes = [0], shape = [2, 2]> : tensor<4xi1> -> tensor<4xi1>
  return %2, %3, %4 : tensor<4xf32>, tensor<2x4xf32>, tensor<4xi1>
}

// CHECK-LABEL: kiln.program @collective_commands
// CHECK-SAME: channels [#kiln.channel<@grid, axes = [1, 0], shape = [2, 3]>]
// CHECK: kiln.cmd.collective all_gather(none) 4 x f32 channel(0) root(0) send <input[0], offset = 0, length = 16> recv <output[0], offset = 0, length = 96>
kiln.program @collective_commands : (tensor<4xf32>) -> tensor<6x4xf32> transient_size(0) channels [#kiln.channel<@grid, axes = [1, 0], shape = [2, 3]>] {
  kiln.cmd.collective all_gather(none) 4 x f32 channel(0) root(0) send <input[0], offset = 0, length = 16> recv <output[0], offset = 0, length = 96>
}

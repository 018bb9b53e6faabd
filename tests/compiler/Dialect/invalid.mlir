// RUN: kiln-opt %s --split-input-file --verify-diagnostics

kiln.program @p : () -> () transient_size(0) {
  // expected-error @+1 {{attribute 'pattern' failed to satisfy constraint: 8-bit integer attribute or 16-bit integer attribute or 32-bit integer attribute or 64-bit integer attribute}}
  kiln.cmd.fill <transient[0], offset = 0, length = 8> pattern(1 : i1)
}

// -----

kiln.program @p : () -> () transient_size(64) {
  // expected-error @+1 {{target length 6 is not a multiple of the 4-byte pattern}}
  kiln.cmd.fill <transient[0], offset = 0, length = 6> pattern(0 : i32)
}

// -----

kiln.program @p : () -> () transient_size(64) {
  // expected-error @+1 {{source and target lengths differ: 8 vs 4}}
  kiln.cmd.copy <transient[0], offset = 0, length = 8> to <transient[0], offset = 32, length = 4>
}

// -----

kiln.program @p : () -> () transient_size(64) {
  // expected-error @+1 {{source and target overlap}}
  kiln.cmd.copy <transient[0], offset = 0, length = 8> to <transient[0], offset = 4, length = 8>
}

// -----

kiln.executable @k {
  func.func @k(%a: tensor<2xf32>) -> tensor<2xf32> {
    return %a : tensor<2xf32>
  }
}
kiln.program @p : () -> () transient_size(64) {
  // expected-error @+1 {{kernel @k::@k takes 2 bindings, got 1}}
  kiln.cmd.dispatch @k::@k bindings [#kiln.buffer<input[0], offset = 0, length = 8>]
}

// -----

func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{no kiln.rodata named @missing}}
  %w = kiln.rodata_ref @missing : tensor<2xf32>
  return %w : tensor<2xf32>
}

// -----

kiln.rodata @w {alignment = 64 : i64} dense<[1.0, 2.0]> : tensor<2xf32>
func.func @f() -> tensor<3xf32> {
  // expected-error @+1 {{type 'tensor<3xf32>' differs from the rodata's type 'tensor<2xf32>'}}
  %w = kiln.rodata_ref @w : tensor<3xf32>
  return %w : tensor<3xf32>
}

// -----

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{values whose types differ from the region's result types}}
  %r = kiln.dispatch_region -> (tensor<2xf32>) {
    %c = arith.constant dense<1.0> : tensor<3xf32>
    kiln.yield %c : tensor<3xf32>
  }
  return %r : tensor<2xf32>
}

// -----

func.func @f() {
  // expected-error @+1 {{'kiln.cmd.barrier' op expects parent op 'kiln.program'}}
  kiln.cmd.barrier
  return
}

// -----

func.func @gather_shape(%x: tensor<4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{result type must be 'tensor<2x4xf32>' for 'all_gather' over 2 ranks, got 'tensor<4x4xf32>'}}
  %0 = kiln.collective all_gather %x over <@grid, axes = [0], shape = [2]> : tensor<4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @scatter_shape(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{input must be the 2 rank-major slices of the result, expected 'tensor<2x2xf32>', got 'tensor<4xf32>'}}
  %0 = kiln.collective reduce_scatter reduction = sum %x over <@grid, axes = [0], shape = [2]> : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @missing_reduction(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'all_reduce' needs a reduction}}
  %0 = kiln.collective all_reduce %x over <@grid, axes = [0], shape = [2]> : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @extra_reduction(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'broadcast' takes no reduction, got sum}}
  %0 = kiln.collective broadcast reduction = sum %x over <@grid, axes = [0], shape = [2]> : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_root(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{root 2 is not a rank of the group (size 2)}}
  %0 = kiln.collective broadcast root = 2 %x over <@grid, axes = [0], shape = [2]> : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_channel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{channel axes must be distinct grid axes in [0, 1), got axis 1}}
  %0 = kiln.collective all_reduce reduction = sum %x over <@grid, axes = [1], shape = [2]> : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

kiln.program @p : (tensor<4xf32>) -> tensor<4xf32> transient_size(0) {
  // expected-error @+1 {{channel 0 is not a channel of program @p}}
  kiln.cmd.collective all_reduce(sum) 4 x f32 channel(0) root(0) send <input[0], offset = 0, length = 16> recv <output[0], offset = 0, length = 16>
}

// -----

kiln.program @p : (tensor<4xf32>) -> tensor<4xf32> transient_size(0) channels [#kiln.channel<@g, axes = [0], shape = [4]>] {
  // expected-error @+1 {{recv length 16 differs from 1 x 'f32'}}
  kiln.cmd.collective reduce_scatter(sum) 4 x f32 channel(0) root(0) send <input[0], offset = 0, length = 16> recv <output[0], offset = 0, length = 16>
}

// -----

kiln.program @p : (tensor<6xf32>) -> tensor<6xf32> transient_size(0) channels [#kiln.channel<@g, axes = [0], shape = [4]>] {
  // expected-error @+1 {{count 6 is not divisible by the group size 4}}
  kiln.cmd.collective all_to_all(none) 6 x f32 channel(0) root(0) send <input[0], offset = 0, length = 24> recv <output[0], offset = 0, length = 24>
}

// -----

// kiln.window_collective: what the kernel's protocol needs.
func.func @window_broadcast(%s: memref<4xf32>, %d: memref<8xf32>, %f: memref<3xi64>, %p: memref<5xi64>) {
  // expected-error @+1 {{compiles all_reduce, all_gather and reduce_scatter, not broadcast}}
  kiln.window_collective broadcast ranks(2) workgroups(1) send(%s) recv(%s) window(%d, %f, %p) : memref<4xf32>, memref<4xf32>, memref<8xf32>, memref<3xi64>, memref<5xi64>
  return
}

// -----

func.func @window_no_reduction(%s: memref<4xf32>, %d: memref<8xf32>, %f: memref<3xi64>, %p: memref<5xi64>) {
  // expected-error @+1 {{'all_reduce' needs a reduction}}
  kiln.window_collective all_reduce ranks(2) workgroups(1) send(%s) recv(%s) window(%d, %f, %p) : memref<4xf32>, memref<4xf32>, memref<8xf32>, memref<3xi64>, memref<5xi64>
  return
}

// -----

func.func @window_data_size(%s: memref<4xf32>, %d: memref<4xf32>, %f: memref<3xi64>, %p: memref<5xi64>) {
  // expected-error @+1 {{window data must be 'memref<8xf32>', got 'memref<4xf32>'}}
  kiln.window_collective all_reduce reduction = sum ranks(2) workgroups(1) send(%s) recv(%s) window(%d, %f, %p) : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<3xi64>, memref<5xi64>
  return
}

// -----

func.func @window_signals(%s: memref<4xf32>, %d: memref<8xf32>, %f: memref<3xi64>, %p: memref<5xi64>) {
  // expected-error @+1 {{window signals must be 'memref<6xi64>', got 'memref<3xi64>'}}
  kiln.window_collective all_reduce reduction = sum ranks(2) workgroups(2) send(%s) recv(%s) window(%d, %f, %p) : memref<4xf32>, memref<4xf32>, memref<8xf32>, memref<3xi64>, memref<5xi64>
  return
}

// -----

func.func @window_gather_recv(%s: memref<4xf32>, %d: memref<8xf32>, %f: memref<4xi64>, %p: memref<7xi64>) {
  // expected-error @+1 {{recv must be 'memref<12xf32>', got 'memref<4xf32>'}}
  kiln.window_collective all_gather ranks(3) workgroups(1) send(%s) recv(%s) window(%d, %f, %p) : memref<4xf32>, memref<4xf32>, memref<8xf32>, memref<4xi64>, memref<7xi64>
  return
}

// -----

func.func @window_avg_int(%s: memref<4xi32>, %d: memref<8xi32>, %f: memref<3xi64>, %p: memref<5xi64>) {
  // expected-error @+1 {{averages floats only, got 'i32'}}
  kiln.window_collective all_reduce reduction = avg ranks(2) workgroups(1) send(%s) recv(%s) window(%d, %f, %p) : memref<4xi32>, memref<4xi32>, memref<8xi32>, memref<3xi64>, memref<5xi64>
  return
}

// -----

func.func @window_workgroups(%s: memref<4xf32>, %d: memref<8xf32>, %f: memref<15xi64>, %p: memref<5xi64>) {
  // expected-error @+1 {{runs 5 workgroups over parts of only 4 elements}}
  kiln.window_collective all_reduce reduction = sum ranks(2) workgroups(5) send(%s) recv(%s) window(%d, %f, %p) : memref<4xf32>, memref<4xf32>, memref<8xf32>, memref<15xi64>, memref<5xi64>
  return
}

// -----

func.func @window_two_shot_gather(%s: memref<4xf32>, %r: memref<8xf32>, %d: memref<8xf32>, %f: memref<5xi64>, %p: memref<5xi64>) {
  // expected-error @+1 {{two_shot is an all_reduce algorithm, not all_gather's}}
  kiln.window_collective all_gather two_shot ranks(2) workgroups(1) send(%s) recv(%r) window(%d, %f, %p) : memref<4xf32>, memref<8xf32>, memref<8xf32>, memref<5xi64>, memref<5xi64>
  return
}

// -----

func.func @window_scatter_parts(%s: memref<5xf32>, %r: memref<2xf32>, %d: memref<10xf32>, %f: memref<3xi64>, %p: memref<5xi64>) {
  // expected-error @+1 {{reduce_scatter needs a send of 2 equal parts, got 5 elements}}
  kiln.window_collective reduce_scatter reduction = sum ranks(2) workgroups(1) send(%s) recv(%r) window(%d, %f, %p) : memref<5xf32>, memref<2xf32>, memref<10xf32>, memref<3xi64>, memref<5xi64>
  return
}

// -----

func.func @window_scatter_recv(%s: memref<6xf32>, %d: memref<12xf32>, %f: memref<4xi64>, %p: memref<7xi64>) {
  // expected-error @+1 {{recv must be 'memref<2xf32>', got 'memref<6xf32>'}}
  kiln.window_collective reduce_scatter reduction = max ranks(3) workgroups(1) send(%s) recv(%s) window(%d, %f, %p) : memref<6xf32>, memref<6xf32>, memref<12xf32>, memref<4xi64>, memref<7xi64>
  return
}

// -----

func.func @window_scatter_workgroups(%s: memref<6xf32>, %r: memref<2xf32>, %d: memref<12xf32>, %f: memref<12xi64>, %p: memref<7xi64>) {
  // expected-error @+1 {{runs 3 workgroups over parts of only 2 elements}}
  kiln.window_collective reduce_scatter reduction = sum ranks(3) workgroups(3) send(%s) recv(%r) window(%d, %f, %p) : memref<6xf32>, memref<2xf32>, memref<12xf32>, memref<12xi64>, memref<7xi64>
  return
}

// -----

func.func @window_two_shot_signals(%s: memref<12xf32>, %d: memref<24xf32>, %f: memref<4xi64>, %p: memref<7xi64>) {
  // expected-error @+1 {{window signals must be 'memref<7xi64>', got 'memref<4xi64>'}}
  kiln.window_collective all_reduce reduction = sum two_shot ranks(3) workgroups(1) send(%s) recv(%s) window(%d, %f, %p) : memref<12xf32>, memref<12xf32>, memref<24xf32>, memref<4xi64>, memref<7xi64>
  return
}

// -----

// expected-error @+1 {{'kiln.rodata' op holds either a value or a load-time parameter}}
kiln.rodata @both parameter "w" : tensor<2xf32> {alignment = 64 : i64} dense<[1.0, 2.0]> : tensor<2xf32>

// -----

// expected-error @+1 {{'kiln.rodata' op holds either a value or a load-time parameter}}
kiln.rodata @neither {alignment = 64 : i64}

// -----

// expected-error @+1 {{'kiln.rodata' op parameter name is empty}}
kiln.rodata @empty parameter "" : tensor<2xf32> {alignment = 64 : i64}

// -----

kiln.rodata @p parameter "w" : tensor<2xf32> {alignment = 64 : i64}
func.func @wrong_parameter_type() -> tensor<3xf32> {
  // expected-error @+1 {{type 'tensor<3xf32>' differs from the rodata's type 'tensor<2xf32>'}}
  %w = kiln.rodata_ref @p : tensor<3xf32>
  return %w : tensor<3xf32>
}

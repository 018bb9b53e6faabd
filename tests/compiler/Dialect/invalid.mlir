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

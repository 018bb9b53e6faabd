// RUN: kiln-opt %s --split-input-file --kiln-host-codegen | FileCheck %s

// The whole host recipe keeps f32 exp vectorized: after the pipeline there
// is no exp intrinsic (which LLVM would scalarize into one libm expf call per
// lane) and no libm declaration; the approximation's multiply-adds work on
// 128-bit vectors (the recipe's default width) and may be contracted.
// CHECK-NOT: llvm.func @expf
// CHECK-LABEL: llvm.func internal @exp_shifted.impl(
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: llvm.call
// CHECK: llvm.fmul %{{.+}}, %{{.+}} {fastmathFlags = #llvm.fastmath<contract>} : vector<4xf32>
// CHECK: llvm.fadd %{{.+}}, %{{.+}} {fastmathFlags = #llvm.fastmath<contract>} : vector<4xf32>
// CHECK: llvm.fptosi %{{.+}} : vector<4xf32> to vector<4xi32>
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: llvm.call
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @exp_shifted(
func.func @exp_shifted(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 2.5 : f32
    %s = arith.subf %x, %c : f32
    %ex = math.exp %s : f32
    linalg.yield %ex : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// f64 exp stays an intrinsic, which LLVM turns into libm exp calls.
// CHECK-LABEL: llvm.func internal @exp_f64.impl(
// CHECK: llvm.intr.exp(%{{.+}}) : (vector<2xf64>) -> vector<2xf64>
func.func @exp_f64(%a: tensor<64x64xf64>) -> tensor<64x64xf64> {
  %e = tensor.empty() : tensor<64x64xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x64xf64>) outs(%e : tensor<64x64xf64>) {
  ^bb0(%x: f64, %o: f64):
    %ex = math.exp %x : f64
    linalg.yield %ex : f64
  } -> tensor<64x64xf64>
  return %r : tensor<64x64xf64>
}

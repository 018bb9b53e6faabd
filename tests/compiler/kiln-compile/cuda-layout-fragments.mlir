// kiln-compile --cuda-layout-fragments runs NVIDIA contractions through the
// AMD matrix-core forms' data path: one padded shared stage filled through
// registers with 128-bit stores, fragments read by the layout table
// (MatrixIntrinsics.h) instead of ldmatrix, no cp.async; only the
// instruction (mma.sync) is NVIDIA's. The e2e matmul tests run this way on
// the H100 (docs/testing.md), which checks the recipe's AMD half on real
// hardware as far as this workplace allows.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=cuda --cuda-layout-fragments -o %t/m.vmfb --dump-intermediates=%t/d
// RUN: FileCheck %s < %t/d/mm_dispatch_0/mm_dispatch_0.sm_90.ptx
// RUN: FileCheck %s --check-prefix=STRATEGY < %t/d/mm_dispatch_0/mm_dispatch_0.sm_90.01-tile.mlir
// Without the flag: cp.async and ldmatrix.
// RUN: kiln-compile %s --target=cuda -o %t/n.vmfb --dump-intermediates=%t/n
// RUN: FileCheck %s --check-prefix=DEFAULT < %t/n/mm_dispatch_0/mm_dispatch_0.sm_90.ptx

// STRATEGY: layout_fragments = true
// CHECK-LABEL: .entry mm_dispatch_0(
// CHECK-NOT: cp.async
// CHECK-NOT: ldmatrix
// CHECK: st.shared.v4.b32
// CHECK: bar.sync
// CHECK: ld.shared
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NOT: ldmatrix
// CHECK-NOT: .local
// DEFAULT: cp.async
// DEFAULT: ldmatrix
// DEFAULT: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @mm(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf16>, tensor<64x128xf16>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// N = 64 on sm_90a (a 3x3x64 -> 64 convolution as a matmul): 128x64 tiles
// of two warpgroups, each m64n64k16 (32 f32 accumulators a thread), four
// instructions per K slice of 64; 12300 rows leave a last tile of 12 rows
// whose copies are masked. Wider tiles would mask most of each instruction.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=cuda --cuda-chip=sm_90a -o %t/m.vmfb --dump-intermediates=%t/d
// RUN: FileCheck %s < %t/d/mm_dispatch_0/mm_dispatch_0.sm_90a.ptx
// RUN: FileCheck %s --check-prefix=STRATEGY < %t/d/mm_dispatch_0/mm_dispatch_0.sm_90a.01-tile.mlir

// STRATEGY: workgroup_tile = [128, 64, 0], workgroup_count = 97, intrinsic = wgmma_f32_64x64x16_f16, subgroup_grid = [2, 1], k_tile = 64, pipeline_depth = 4
// CHECK-LABEL: .entry mm_dispatch_0(
// CHECK: .reqntid 256, 1, 1
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  1;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK-NOT: .local
// CHECK-NOT: m64n128k16
// CHECK-NOT: m64n256k16
func.func @mm(%a: tensor<12300x576xf16>, %b: tensor<576x64xf16>) -> tensor<12300x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12300x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<12300x64xf32>) -> tensor<12300x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<12300x576xf16>, tensor<576x64xf16>) outs(%f : tensor<12300x64xf32>) -> tensor<12300x64xf32>
  return %r : tensor<12300x64xf32>
}

// --cuda-chip=sm_90a (the arch-specific form of sm_90, for H100/H200 only)
// gives f16/bf16 contractions the warpgroup form: cp.async stages made
// visible to the async proxy, wgmma.mma_async on 128-byte-swizzled shared
// memory descriptors, one group left in flight per K slice, a final wait
// before the epilogue, and no local-memory spills of the 128 accumulators
// per thread. The dynamic shared buffer is realigned to 1024 bytes at run
// time. sm_90 keeps mma.sync.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=cuda --cuda-chip=sm_90a -o %t/m.vmfb --dump-intermediates=%t/d
// RUN: FileCheck %s < %t/d/mm_dispatch_0/mm_dispatch_0.sm_90a.ptx
// RUN: FileCheck %s --check-prefix=STRATEGY < %t/d/mm_dispatch_0/mm_dispatch_0.sm_90a.01-tile.mlir
// RUN: kiln-compile %s --target=cuda --cuda-chip=sm_90 -o %t/n.vmfb --dump-intermediates=%t/n
// RUN: FileCheck %s --check-prefix=SM90 < %t/n/mm_dispatch_0/mm_dispatch_0.sm_90.ptx

// STRATEGY: workgroup_tile = [128, 256], workgroup_count = 192, intrinsic = wgmma_f32_64x256x16_f16, subgroup_grid = [2, 1], k_tile = 64, pipeline_depth = 4
// CHECK: .target sm_90a
// CHECK-LABEL: .entry mm_dispatch_0(
// CHECK: .reqntid 256, 1, 1
// CHECK: mov.b64 %[[BASE:rd[0-9]+]], __dynamic_shmem__0;
// CHECK: and.b64 %{{rd[0-9]+}}, %{{rd[0-9]+}}, 1008;
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 0;
// CHECK: wgmma.fence.sync.aligned;
// A's descriptor fields (16-byte leading, 1024-byte stride, 128-byte
// swizzle) and B's (the next 64-column block 8 KiB on).
// CHECK-DAG: or.b64 %{{rd[0-9]+}}, %{{rd[0-9]+}}, 4611686293305360384;
// CHECK-DAG: or.b64 %{{rd[0-9]+}}, %{{rd[0-9]+}}, 4611686293338849280;
// B is stored K x N: the instruction transposes it (last operand 1).
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  1;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 1;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: cvt.rn.f16x2.f32
// CHECK-NOT: .local
// SM90-NOT: wgmma
// SM90: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
#id = affine_map<(i, j) -> (i, j)>
func.func @mm(%a: tensor<2048x256xf16>, %b: tensor<256x3072xf16>) -> tensor<2048x3072xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x3072xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x3072xf32>) -> tensor<2048x3072xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2048x256xf16>, tensor<256x3072xf16>) outs(%f : tensor<2048x3072xf32>) -> tensor<2048x3072xf32>
  %e2 = tensor.empty() : tensor<2048x3072xf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<2048x3072xf32>) outs(%e2 : tensor<2048x3072xf16>) {
  ^bb0(%x: f32, %o: f16):
    %y = arith.truncf %x : f32 to f16
    linalg.yield %y : f16
  } -> tensor<2048x3072xf16>
  return %t : tensor<2048x3072xf16>
}

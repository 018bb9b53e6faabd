// REQUIRES: kiln-dump
// Softmax over 1024 rows of 32768 f16 on an H100/H200 (sm_90a), 256 threads
// a row: the row is staged in 64 KiB of dynamic shared memory (stored once
// by the max, read back by the sum and the output), ptxas is told to fit
// three workgroups per SM, and exp is one ex2.approx.ftz of x log2(e) (f16
// buffers only).
// --gpu-stage-rows=never keeps the row in registers (no shared row, no
// budget); gfx942 (64 KiB of LDS) keeps it there too.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=cuda --cuda-chip=sm_90a -o %t/m.vmfb --dump-intermediates=%t/auto
// RUN: FileCheck %s --check-prefix=AUTO < %t/auto/main_dispatch_0/main_dispatch_0.sm_90a.ptx
// RUN: kiln-dump %t/m.vmfb --resources | FileCheck %s --check-prefix=RESOURCES
// RUN: kiln-compile %s --target=cuda --cuda-chip=sm_90a --gpu-stage-rows=never -o %t/n.vmfb --dump-intermediates=%t/never
// RUN: FileCheck %s --check-prefix=NEVER < %t/never/main_dispatch_0/main_dispatch_0.sm_90a.ptx
// RUN: kiln-compile %s --target=rocm --rocm-chip=gfx942 -o %t/r.vmfb --dump-intermediates=%t/rocm
// RUN: FileCheck %s --check-prefix=CDNA < %t/rocm/main_dispatch_0/main_dispatch_0.gfx942.03-distribute.mlir
// RUN: not kiln-compile %s --target=cuda --gpu-stage-rows=sometimes -o %t/x.vmfb 2>&1 | FileCheck %s --check-prefix=BAD

// AUTO:     .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// AUTO:     .reqntid 256, 1, 1
// AUTO-NEXT: .minnctapersm 3
// AUTO-COUNT-16: st.shared.v4.b32
// AUTO-NOT: st.shared.v4.b32
// (after each reduction's barrier: 2 loads of its 8 slots, 16 of the row)
// AUTO:     bar.sync
// AUTO-COUNT-18: ld.shared.v4.b32
// AUTO-COUNT-128: ex2.approx.ftz.f32
// AUTO:     bar.sync
// AUTO-COUNT-18: ld.shared.v4.b32
// AUTO-COUNT-128: ex2.approx.ftz.f32
// AUTO-COUNT-16: st.global.v4.b32
// AUTO-NOT: ld.global

// RESOURCES: main_dispatch_0 {{.*}} 256x1x1 {{.*}} 65600 

// NEVER:     .reqntid 256, 1, 1
// NEVER-NOT: .minnctapersm
// NEVER-NOT: st.shared.v4
// NEVER-NOT: dynamic_shmem
// NEVER-COUNT-16: ld.global.v4.b32
// NEVER-NOT: ld.global

// CDNA-NOT: min_workgroups_per_processor
// CDNA-NOT: memref<32768xf16

// BAD: --gpu-stage-rows must be auto, always or never, not 'sometimes'
func.func @main(%x: tensor<1024x32768xf16>) -> tensor<1024x32768xf16> {
  %ew = tensor.empty() : tensor<1024x32768xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1024x32768xf16>) outs(%ew : tensor<1024x32768xf32>) {
  ^bb0(%a: f16, %o: f32):
    %v = arith.extf %a : f16 to f32
    linalg.yield %v : f32
  } -> tensor<1024x32768xf32>
  %es = tensor.empty() : tensor<1024x32768xf32>
  %s = linalg.softmax dimension(1) ins(%w : tensor<1024x32768xf32>) outs(%es : tensor<1024x32768xf32>) -> tensor<1024x32768xf32>
  %er = tensor.empty() : tensor<1024x32768xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<1024x32768xf32>) outs(%er : tensor<1024x32768xf16>) {
  ^bb0(%a: f32, %o: f16):
    %v = arith.truncf %a : f32 to f16
    linalg.yield %v : f16
  } -> tensor<1024x32768xf16>
  return %r : tensor<1024x32768xf16>
}

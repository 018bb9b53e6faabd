// Through kiln-compile's real targets (in-process O3, HSACO link, PTX):
// an elementwise kernel uses 128-bit global accesses on AMD and NVIDIA, and
// an f16 matmul runs on the matrix cores of every AMD chip that has them
// (the default): MFMA on gfx942 and gfx950 (its K = 32 form), WMMA on
// gfx1100 and gfx1201. The matrix-core kernels are verified at the ISA
// level only (no AMD GPU here): the instruction, and the code object's
// notes against the plan (the 32x32 tile's LDS of 2 x 32x40 f16 = 5120
// bytes, as the module's export records it; no scratch, no spills).
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=rocm,cuda --rocm-chip=gfx942,gfx950,gfx1100,gfx1201 --cuda-chip=sm_90 -o %t/m.vmfb --dump-intermediates=%t/d
// RUN: llvm-objdump -d --mcpu=gfx942 %t/d/scale_dispatch_0/scale_dispatch_0.gfx942.hsaco | FileCheck %s --check-prefix=EW942
// RUN: FileCheck %s --check-prefix=EWPTX < %t/d/scale_dispatch_0/scale_dispatch_0.sm_90.ptx
// RUN: llvm-objdump -d --mcpu=gfx942 %t/d/mm_dispatch_0/mm_dispatch_0.gfx942.hsaco | FileCheck %s --check-prefix=MFMA
// RUN: llvm-objdump -d --mcpu=gfx950 %t/d/mm_dispatch_0/mm_dispatch_0.gfx950.hsaco | FileCheck %s --check-prefix=MFMA950
// RUN: llvm-objdump -d --mcpu=gfx1100 %t/d/mm_dispatch_0/mm_dispatch_0.gfx1100.hsaco | FileCheck %s --check-prefix=WMMA
// RUN: llvm-objdump -d --mcpu=gfx1201 %t/d/mm_dispatch_0/mm_dispatch_0.gfx1201.hsaco | FileCheck %s --check-prefix=WMMA
// RUN: FileCheck %s --check-prefix=STRATEGY < %t/d/mm_dispatch_0/mm_dispatch_0.gfx942.01-tile.mlir
// RUN: llvm-readobj --notes %t/d/mm_dispatch_0/mm_dispatch_0.gfx942.hsaco | FileCheck %s --check-prefix=NOTES
// RUN: llvm-readobj --notes %t/d/mm_dispatch_0/mm_dispatch_0.gfx950.hsaco | FileCheck %s --check-prefix=NOTES
// RUN: llvm-readobj --notes %t/d/mm_dispatch_0/mm_dispatch_0.gfx1100.hsaco | FileCheck %s --check-prefix=NOTES
// RUN: llvm-readobj --notes %t/d/mm_dispatch_0/mm_dispatch_0.gfx1201.hsaco | FileCheck %s --check-prefix=NOTES
// RUN: kiln-dump %t/m.vmfb | FileCheck %s --check-prefix=DUMP

// EW942-LABEL: <scale_dispatch_0>:
// EW942: global_load_dwordx4
// EW942: global_store_dwordx4
// EWPTX-LABEL: .entry scale_dispatch_0(
// EWPTX: ld.global.v4.{{f32|b32}}
// EWPTX: st.global.v4.{{f32|b32}}
func.func @scale(%a: tensor<128x256xf32>) -> tensor<128x256xf32> {
  %c = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<128x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<128x256xf32>) outs(%e : tensor<128x256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<128x256xf32>
  return %r : tensor<128x256xf32>
}

// MFMA-LABEL: <mm_dispatch_0>:
// MFMA: v_mfma_f32_16x16x16_f16
// MFMA950-LABEL: <mm_dispatch_0>:
// MFMA950: v_mfma_f32_16x16x32_f16
// WMMA-LABEL: <mm_dispatch_0>:
// WMMA: v_wmma_f32_16x16x16_f16
// STRATEGY: #kiln.gpu_strategy<kind = contraction, workgroup_size = 64, subgroup_size = 64, workgroup_tile = [32, 32, 0], intrinsic = mfma_f32_16x16x16_f16, subgroup_grid = [1, 1], k_tile = 32>
// NOTES: .group_segment_fixed_size: 5120
// NOTES: .name: mm_dispatch_0
// NOTES: .private_segment_fixed_size: 0
// NOTES: .vgpr_spill_count: 0
// DUMP-COUNT-4: export 0: mm_dispatch_0 {{.*}} shared memory 5120, {{.*}} scratch 0
func.func @mm(%a: tensor<32x64xf16>, %b: tensor<64x32xf16>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<32x64xf16>, tensor<64x32xf16>) outs(%f : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

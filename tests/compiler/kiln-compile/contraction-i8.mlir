// 8-bit integer matmuls with i32 accumulators take the contraction recipe
// on every GPU with integer matrix instructions: mma.sync m16n8k32 .s8 on
// NVIDIA (fragments read by the layout table: there is no ldmatrix form for
// 8 bits), v_mfma_i32_16x16x{16,32,64} on gfx90a/gfx942/gfx950 and
// v_wmma_i32_16x16x16_iu8 on gfx11/gfx12 (signed operands). LDS/shared rows
// are padded by 16 bytes: 64x64 tiles with K slices of 64 take 2 x 64 x 80
// = 10240 bytes. No scratch, no spills. The e2e tests
// matmul/contraction_i8_*.mlir run the NVIDIA form on the H100.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=cuda,rocm --rocm-chip=gfx90a,gfx942,gfx950,gfx1100,gfx1201 -o %t/m.vmfb --dump-intermediates=%t/d
// RUN: FileCheck %s --check-prefix=PTX < %t/d/mm_i8_dispatch_0/mm_i8_dispatch_0.sm_90.ptx
// RUN: llvm-objdump -d --mcpu=gfx90a %t/d/mm_i8_dispatch_0/mm_i8_dispatch_0.gfx90a.hsaco | FileCheck %s --check-prefix=GFX90A
// RUN: llvm-objdump -d --mcpu=gfx942 %t/d/mm_i8_dispatch_0/mm_i8_dispatch_0.gfx942.hsaco | FileCheck %s --check-prefix=GFX942
// RUN: llvm-objdump -d --mcpu=gfx950 %t/d/mm_i8_dispatch_0/mm_i8_dispatch_0.gfx950.hsaco | FileCheck %s --check-prefix=GFX950
// RUN: llvm-objdump -d --mcpu=gfx1100 %t/d/mm_i8_dispatch_0/mm_i8_dispatch_0.gfx1100.hsaco | FileCheck %s --check-prefix=WMMA
// RUN: llvm-objdump -d --mcpu=gfx1201 %t/d/mm_i8_dispatch_0/mm_i8_dispatch_0.gfx1201.hsaco | FileCheck %s --check-prefix=WMMA
// RUN: kiln-dump %t/m.vmfb | FileCheck %s --check-prefix=DUMP

// PTX-LABEL: .entry mm_i8_dispatch_0(
// PTX-NOT: ldmatrix
// PTX: st.shared.v4.b32
// PTX: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// PTX-NOT: .local
// GFX90A: v_mfma_i32_16x16x16i8
// GFX942: v_mfma_i32_16x16x32_i8
// GFX950: v_mfma_i32_16x16x64_i8
// WMMA: v_wmma_i32_16x16x16_iu8
// DUMP-COUNT-5: export 0: mm_i8_dispatch_0 {{.*}} shared memory 10240, {{.*}} scratch 0
func.func @mm_i8(%a: tensor<128x128xi8>, %b: tensor<128x128xi8>) -> tensor<128x128xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<128x128xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<128x128xi32>) -> tensor<128x128xi32>
  %r = linalg.matmul ins(%a, %b : tensor<128x128xi8>, tensor<128x128xi8>) outs(%f : tensor<128x128xi32>) -> tensor<128x128xi32>
  return %r : tensor<128x128xi32>
}

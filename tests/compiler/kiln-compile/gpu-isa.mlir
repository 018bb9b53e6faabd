// REQUIRES: kiln-dump
// Real kernels through the whole GPU pipeline: a row reduction combines its
// partial sums through shared memory (ds_* and s_barrier on AMD, st/ld.shared
// and bar.sync on NVIDIA, LDS recorded in the module), an elementwise exp
// uses the hardware exp unit, and a matmul reads and writes global memory.
// Wave size follows the chip (64 on gfx942, 32 on gfx1100).
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=rocm,cuda --rocm-chip=gfx942,gfx1100 --cuda-chip=sm_90 -o %t/m.vmfb --dump-intermediates=%t/d
// RUN: llvm-readobj --notes %t/d/rowsum_dispatch_0/rowsum_dispatch_0.gfx942.hsaco | FileCheck %s --check-prefix=NOTES942
// RUN: llvm-readobj --notes %t/d/rowsum_dispatch_0/rowsum_dispatch_0.gfx1100.hsaco | FileCheck %s --check-prefix=NOTES1100
// RUN: llvm-objdump -d --mcpu=gfx942 %t/d/rowsum_dispatch_0/rowsum_dispatch_0.gfx942.hsaco | FileCheck %s --check-prefix=RED942
// RUN: llvm-objdump -d --mcpu=gfx1100 %t/d/rowsum_dispatch_0/rowsum_dispatch_0.gfx1100.hsaco | FileCheck %s --check-prefix=RED1100
// RUN: FileCheck %s --check-prefix=REDPTX < %t/d/rowsum_dispatch_0/rowsum_dispatch_0.sm_90.ptx
// RUN: llvm-objdump -d --mcpu=gfx942 %t/d/ew_dispatch_0/ew_dispatch_0.gfx942.hsaco | FileCheck %s --check-prefix=EW
// RUN: llvm-objdump -d --mcpu=gfx942 %t/d/mm_dispatch_0/mm_dispatch_0.gfx942.hsaco | FileCheck %s --check-prefix=MM
// RUN: kiln-dump %t/m.vmfb --resources | FileCheck %s --check-prefix=RES

// One binding per argument and result: 2 pointers of 8 bytes.
// NOTES942: .group_segment_fixed_size: {{[1-9][0-9]*}}
// NOTES942: .kernarg_segment_size: 16
// NOTES942: .name: rowsum_dispatch_0
// NOTES942: .wavefront_size: 64
// NOTES942: amdhsa.target: amdgcn-amd-amdhsa--gfx942
// NOTES1100: .name: rowsum_dispatch_0
// NOTES1100: .wavefront_size: 32
// NOTES1100: amdhsa.target: amdgcn-amd-amdhsa--gfx1100

// RED942-LABEL: <rowsum_dispatch_0>:
// RED942: global_load_dword
// RED942: ds_write_b32
// RED942: s_barrier
// RED942: ds_read
// RED942: global_store_dword
// RED942: s_endpgm

// RED1100-LABEL: <rowsum_dispatch_0>:
// RED1100: ds_store_b32
// RED1100: s_barrier
// RED1100: ds_load
// RED1100: global_store_b32

// REDPTX: .target sm_90
// REDPTX: .visible .entry rowsum_dispatch_0(
// ptxas rejects .maxntid next to .reqntid (checked by JIT-loading on an H200).
// REDPTX: .reqntid {{[0-9]+}}, 1, 1
// REDPTX-NOT: .maxntid
// REDPTX: .shared
// REDPTX: st.shared
// REDPTX: bar.sync
// REDPTX: ld.shared

// EW-LABEL: <ew_dispatch_0>:
// EW: global_load_dword
// EW: v_exp_f32
// EW: global_store_dword

// MM-LABEL: <mm_dispatch_0>:
// MM: global_load_dword
// MM: global_store_dword

// RES: kernel target workgroup count vgpr sgpr agpr lds scratch
// RES-NEXT: rowsum_dispatch_0 rocm:gfx942 {{[0-9x]+}} 64x1x1 {{[0-9]+ [0-9]+ [0-9]+}} {{[1-9][0-9]*}} 0
// RES-NEXT: rowsum_dispatch_0 rocm:gfx1100 {{[0-9x]+}} 64x1x1 {{[0-9]+ [0-9]+ [0-9]+}} {{[1-9][0-9]*}} 0
// RES-NEXT: rowsum_dispatch_0 cuda:sm_90 {{[0-9x]+}} 64x1x1 0 0 0 {{[1-9][0-9]*}} 0
// RES-NEXT: ew_dispatch_0 rocm:gfx942 {{.*}} 0 0{{$}}
// RES-NEXT: ew_dispatch_0 rocm:gfx1100 {{.*}} 0 0{{$}}
// RES-NEXT: ew_dispatch_0 cuda:sm_90
// RES-NEXT: mm_dispatch_0 rocm:gfx942 {{.*}} 0{{$}}
// RES-NEXT: mm_dispatch_0 rocm:gfx1100 {{.*}} 0{{$}}
// RES-NEXT: mm_dispatch_0 cuda:sm_90

func.func @rowsum(%a: tensor<64x1024xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.reduce ins(%a : tensor<64x1024xf32>) outs(%f : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<64xf32>
}

func.func @ew(%a: tensor<64x1024xf32>, %b: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %0 = arith.addf %a, %b : tensor<64x1024xf32>
  %1 = math.exp %0 : tensor<64x1024xf32>
  return %1 : tensor<64x1024xf32>
}

func.func @mm(%a: tensor<128x256xf32>, %b: tensor<256x64xf32>) -> tensor<128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x256xf32>, tensor<256x64xf32>) outs(%f : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %r : tensor<128x64xf32>
}

// Elementwise kernels whose innermost size is a multiple of 128 bits give
// each thread one 128-bit chunk (kiln-gpu-vectorize): one 16-byte global
// load per input and one 16-byte store, on AMD (global_load_dwordx4) and
// NVIDIA (ld.global.v4, which needs the 16-byte alignment that
// kiln-gpu-align-vector-accesses proves). Sizes that do not allow whole
// chunks keep 32-bit (or narrower) accesses.
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx942" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | FileCheck %s --check-prefix=AMD
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx1100" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 | FileCheck %s --check-prefix=RDNA
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=nvvm chip=sm_90" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 | llc -O3 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 | FileCheck %s --check-prefix=PTX

// AMD-LABEL: bias_exp:
// AMD-DAG: global_load_dwordx4
// AMD-DAG: global_load_dwordx4
// AMD-COUNT-4: v_exp_f32
// AMD: global_store_dwordx4
// AMD: s_endpgm
// RDNA-LABEL: bias_exp:
// RDNA-DAG: global_load_b128
// RDNA-DAG: global_load_b128
// RDNA: global_store_b128
// RDNA: s_endpgm
// PTX-LABEL: .entry bias_exp(
// PTX-DAG: ld.global.v4.{{f32|b32}}
// PTX-DAG: ld.global.v4.{{f32|b32}}
// PTX: st.global.v4.{{f32|b32}}
// PTX: ret;
func.func @bias_exp(%a: tensor<256x1024xf32>, %b: tensor<1024xf32>) -> tensor<256x1024xf32> {
  %e = tensor.empty() : tensor<256x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<256x1024xf32>, tensor<1024xf32>) outs(%e : tensor<256x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = math.exp %s : f32
    linalg.yield %t : f32
  } -> tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}

// 8 x f16 per thread, computed in f32.
// AMD-LABEL: scale_f16:
// AMD: global_load_dwordx4
// AMD: global_store_dwordx4
// AMD: s_endpgm
// PTX-LABEL: .entry scale_f16(
// PTX: ld.global.v4.{{u32|b32}}
// PTX: st.global.v4.{{u32|b32}}
// PTX: ret;
func.func @scale_f16(%a: tensor<64x512xf16>) -> tensor<64x512xf16> {
  %e = tensor.empty() : tensor<64x512xf16>
  %c = arith.constant 1.5 : f16
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x512xf16>) outs(%e : tensor<64x512xf16>) {
  ^bb0(%x: f16, %o: f16):
    %s = arith.mulf %x, %c : f16
    linalg.yield %s : f16
  } -> tensor<64x512xf16>
  return %r : tensor<64x512xf16>
}

// An odd innermost size: one element per thread, dword accesses.
// AMD-LABEL: odd_add:
// AMD-NOT: global_{{load|store}}_dwordx4
// AMD: global_load_dword
// AMD: global_store_dword
// AMD: s_endpgm
// PTX-LABEL: .entry odd_add(
// PTX-NOT: .v4
// PTX: ld.global.{{f32|b32}}
// PTX: st.global.{{f32|b32}}
// PTX: ret;
func.func @odd_add(%a: tensor<33x1001xf32>, %b: tensor<33x1001xf32>) -> tensor<33x1001xf32> {
  %e = tensor.empty() : tensor<33x1001xf32>
  %r = linalg.add ins(%a, %b : tensor<33x1001xf32>, tensor<33x1001xf32>) outs(%e : tensor<33x1001xf32>) -> tensor<33x1001xf32>
  return %r : tensor<33x1001xf32>
}

// A transposed operand is not contiguous along the innermost loop: the
// whole chunk stays scalar (each thread still owns 4 elements).
// AMD-LABEL: add_transposed:
// AMD-NOT: global_{{load|store}}_dwordx4
// AMD: global_load_dword
// AMD: global_store_dword
// AMD: s_endpgm
// PTX-LABEL: .entry add_transposed(
// PTX-NOT: .v4
// PTX: ld.global.{{f32|b32}}
// PTX: st.global.{{f32|b32}}
// PTX: ret;
func.func @add_transposed(%a: tensor<128x128xf32>, %b: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %e = tensor.empty() : tensor<128x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<128x128xf32>, tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

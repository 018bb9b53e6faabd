// The pipeline's output translates to LLVM IR and compiles with the AMDGPU
// and NVPTX backends (opt -O3 as the targets do, then llc): no scratch, the
// partials in LDS / .shared, barriers, global (not flat) memory accesses,
// v_exp_f32 on AMD, no libdevice call on NVIDIA.
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx942" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | FileCheck %s --check-prefixes=AMD,GFX942
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx1100" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 | FileCheck %s --check-prefixes=AMD,GFX1100
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=nvvm chip=sm_90" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 | llc -O3 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 | FileCheck %s --check-prefix=PTX

// AMD-LABEL: row_max_exp:
// AMD: global_load_{{dword|b32}}
// AMD: v_exp_f32
// AMD: ds_{{write|store}}_b32
// AMD: s_barrier
// AMD: ds_{{read|load}}
// AMD: global_store_{{dword|b32}}
// AMD-LABEL: .amdhsa_kernel row_max_exp
// One total per wave in LDS: 256 / 64 and 128 / 32 slots of 4 bytes.
// GFX942: .amdhsa_group_segment_fixed_size 16
// GFX1100: .amdhsa_group_segment_fixed_size 16
// AMD: .amdhsa_private_segment_fixed_size 0
// GFX1100: .amdhsa_wavefront_size32 1
// GFX942: .reqd_workgroup_size:
// GFX942-NEXT: - 256
// GFX942: .sgpr_spill_count: 0
// GFX942: .vgpr_spill_count: 0
// GFX942: .wavefront_size: 64
// GFX1100: .wavefront_size: 32

// PTX-LABEL: .entry row_max_exp(
// PTX: .param .u64 .ptr .global
// PTX: .reqntid 128, 1, 1
// PTX-NOT: .maxntid
// PTX: .shared .align 16 .b8 __wg_row_max_exp_0[16];
// PTX-NOT: .local
// PTX-NOT: call
// PTX: ld.global
// PTX: shfl.sync.bfly
// PTX: st.shared
// PTX: bar.sync
// PTX: st.global
func.func @row_max_exp(%a: tensor<100x3000xf32>) -> tensor<100xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<100xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<100xf32>) -> tensor<100xf32>
  %r = linalg.reduce ins(%a : tensor<100x3000xf32>) outs(%f : tensor<100xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %x2 = math.exp %x : f32
      %m = arith.maximumf %x2, %acc : f32
      linalg.yield %m : f32
    }
  return %r : tensor<100xf32>
}

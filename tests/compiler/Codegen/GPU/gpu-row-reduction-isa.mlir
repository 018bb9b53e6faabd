// A row-fused softmax kernel (what row fusion in dispatch creation makes of
// max, exp(x - max), sum, divide): one workgroup per row, each workgroup
// reduction across lanes (DPP on CDNA wave64, DPP and v_permlanex16 on RDNA
// wave32, shfl.sync.bfly on NVIDIA) and across subgroups through one small
// shared buffer, no scratch. No AMD GPU runs it here: verified at the ISA
// level; the same code runs on NVIDIA GPUs in the e2e suite.
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx942" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 | FileCheck %s --check-prefixes=ISA,GFX942
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=rocdl chip=gfx1100" | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 | llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 | FileCheck %s --check-prefixes=ISA,GFX1100
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=nvvm chip=sm_90" | mlir-translate --mlir-to-llvmir | llc -O3 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 -mattr=+ptx80 | FileCheck %s --check-prefix=PTX

// ISA-LABEL: softmax_rows:
// The row max, then the row sum: lanes exchange by DPP within rows of 16
// (quad_perm, row_half_mirror, row_mirror), across rows by row_bcast on
// CDNA and by v_permlanex16 on RDNA; the last lane's value is read out.
// The row stays in registers: one barrier per reduction, for the subgroups'
// totals, and none between the ops.
// GFX942: v_mov_b32_dpp {{.*}} quad_perm:[1,0,3,2]
// GFX942: v_mov_b32_dpp {{.*}} row_mirror
// GFX942: v_mov_b32_dpp {{.*}} row_bcast:15
// GFX942: v_mov_b32_dpp {{.*}} row_bcast:31
// GFX942: v_readlane_b32 {{.*}}, 63
// GFX942: v_add_f32_dpp {{.*}} quad_perm:[1,0,3,2]
// GFX942: v_add_f32_dpp {{.*}} row_bcast:31
// GFX942: v_readlane_b32 {{.*}}, 63
// GFX1100: v_mov_b32_dpp {{.*}} quad_perm:[1,0,3,2]
// GFX1100: v_permlanex16_b32
// GFX1100: v_readlane_b32 {{.*}}, 31
// GFX1100: v_add_f32_dpp {{.*}} quad_perm:[1,0,3,2]
// GFX1100: v_permlanex16_b32
// ISA: s_barrier
// ISA: s_endpgm
// ISA: .amdhsa_private_segment_fixed_size 0
// PTX-LABEL: .entry softmax_rows
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync
// PTX-NOT: .local
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @softmax_rows(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1024xf32>) outs(%m0 : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x1024xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<64x1024xf32>, tensor<64xf32>) outs(%e2 : tensor<64x1024xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<64x1024xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<64x1024xf32>) outs(%s0 : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<64x1024xf32>, tensor<64xf32>) outs(%e2 : tensor<64x1024xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %0 = arith.divf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// RUN: kiln-opt %s --split-input-file | kiln-opt --split-input-file | FileCheck %s

// #kiln.gpu_strategy round-trips; parameters at their defaults are left out
// of the printed form, whatever order they are written in.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [1, 0], workgroup_count = 1024, thread_tile = 4>
func.func @elementwise() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<
    thread_tile = 4, kind = elementwise, subgroup_size = 32,
    workgroup_size = 128, workgroup_tile = [1, 0], workgroup_count = 1024,
    reduction = none, k_tile = 0, layout_fragments = false>} {
  return
}

// -----

// CHECK-LABEL: func.func @rows
// CHECK-SAME: #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [4, 0], workgroup_count = 8192, reduction = subgroup, reduction_vector = 4>
func.func @rows() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [4, 0], workgroup_count = 8192, reduction = subgroup, reduction_vector = 4>} {
  return
}

// -----

// CHECK-LABEL: func.func @contraction
// CHECK-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [128, 128, 0], workgroup_count = 256, intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 4>
func.func @contraction() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [128, 128, 0], workgroup_count = 256, intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 4>} {
  return
}

// -----

// CHECK-LABEL: func.func @layout
// CHECK-SAME: intrinsic = mma_sync_f32_16x8x16_bf16, subgroup_grid = [2, 2], k_tile = 32, layout_fragments = true>
func.func @layout() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = mma_sync_f32_16x8x16_bf16, subgroup_grid = [2, 2], k_tile = 32, layout_fragments = true>} {
  return
}

// -----

// CHECK-LABEL: func.func @simt
// CHECK-SAME: #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [128, 128, 0], workgroup_count = 256, simt_tile = [8, 8], k_tile = 16>
func.func @simt() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [128, 128, 0], workgroup_count = 256, simt_tile = [8, 8], k_tile = 16>} {
  return
}

// -----

// CHECK-LABEL: func.func @attention
// CHECK-SAME: #kiln.gpu_strategy<kind = attention, workgroup_size = 128, subgroup_size = 32, workgroup_count = 2, intrinsic = mma_sync_f32_16x8x16_f16, k_tile = 32, pipeline_depth = 2, query_rows = 128, q_in_shared = true>
func.func @attention() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = attention, workgroup_size = 128, subgroup_size = 32, workgroup_count = 2, intrinsic = mma_sync_f32_16x8x16_f16, k_tile = 32, pipeline_depth = 2, query_rows = 128, q_in_shared = true>} {
  return
}

// -----

// Every matrix intrinsic by its spelling (the AMD ones here).
// CHECK-LABEL: func.func @mfma
// CHECK-SAME: intrinsic = mfma_i32_16x16x64_i8
func.func @mfma() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 64, workgroup_tile = [128, 128, 0], intrinsic = mfma_i32_16x16x64_i8, subgroup_grid = [2, 2], k_tile = 64>} {
  return
}
// CHECK-LABEL: func.func @wmma
// CHECK-SAME: intrinsic = wmma_gfx12_f32_16x16x16_bf16
func.func @wmma() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = wmma_gfx12_f32_16x16x16_bf16, subgroup_grid = [2, 2], k_tile = 32>} {
  return
}

// -----

// #kiln.host_strategy round-trips too.
// CHECK-LABEL: func.func @host
// CHECK-SAME: kiln.host_strategy = #kiln.host_strategy<kind = matmul, root = "linalg.matmul", tile_sizes = [16, 32, 0], workgroup_count = [16, 16, 1], vector_width = 512, vector_sizes = [8, 32, 1]>
func.func @host() attributes {kiln.host_strategy = #kiln.host_strategy<workgroup_count = [16, 16, 1], kind = matmul, root = "linalg.matmul", tile_sizes = [16, 32, 0], vector_width = 512, vector_sizes = [8, 32, 1]>} {
  return
}
// CHECK-LABEL: func.func @host_single
// CHECK-SAME: #kiln.host_strategy<kind = single, workgroup_count = [1, 1, 1]>
func.func @host_single() attributes {kiln.host_strategy = #kiln.host_strategy<kind = single, root = "", workgroup_count = [1, 1, 1], vector_width = 0>} {
  return
}

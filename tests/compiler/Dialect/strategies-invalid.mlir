// RUN: kiln-opt %s --split-input-file --verify-diagnostics

// expected-error @+2 {{unknown matrix intrinsic 'mma_sync_f32_16x8x8_f16'}}
// expected-error @+1 {{failed to parse Kiln_GPUStrategyAttr parameter 'intrinsic'}}
func.func @unknown_intrinsic() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = mma_sync_f32_16x8x8_f16, subgroup_grid = [2, 2], k_tile = 32>} {
  return
}

// -----

// expected-error @+1 {{struct is missing required parameter: subgroup_size}}
func.func @missing_subgroup_size() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128>} {
  return
}

// -----

// expected-error @+2 {{expected 'true' or 'false'}}
// expected-error @+1 {{failed to parse Kiln_GPUStrategyAttr parameter 'layout_fragments'}}
func.func @bad_flag() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], k_tile = 32, layout_fragments = yes>} {
  return
}

// -----

// expected-error @+1 {{workgroup_size must be positive, got 0}}
func.func @no_threads() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 0, subgroup_size = 32>} {
  return
}

// -----

// expected-error @+1 {{workgroup_tile sizes must not be negative}}
func.func @negative_tile() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [-1, 0]>} {
  return
}

// -----

// expected-error @+1 {{subgroup_grid must be two positive sizes (M, N)}}
func.func @grid_rank() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [4], k_tile = 32>} {
  return
}

// -----

// expected-error @+1 {{a contraction strategy needs either an intrinsic with a subgroup_grid, or a simt_tile}}
func.func @both_forms() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [64, 64, 0], intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2], simt_tile = [4, 4], k_tile = 32>} {
  return
}

// -----

// expected-error @+1 {{a contraction strategy needs a workgroup_tile and a k_tile}}
func.func @no_k_tile() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [64, 64, 0], simt_tile = [4, 4]>} {
  return
}

// -----

// expected-error @+1 {{an attention strategy needs an intrinsic, query_rows and a k_tile}}
func.func @attention_without_rows() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = attention, workgroup_size = 128, subgroup_size = 32, intrinsic = mma_sync_f32_16x8x16_f16, k_tile = 64>} {
  return
}

// -----

// expected-error @+1 {{intrinsic, subgroup_grid, simt_tile, k_tile and pipeline_depth belong to contraction and attention strategies}}
func.func @elementwise_intrinsic() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32, intrinsic = mma_sync_f32_16x8x16_f16>} {
  return
}

// -----

// expected-error @+1 {{layout_fragments needs a contraction strategy with an intrinsic}}
func.func @simt_layout() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = contraction, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [64, 64, 0], simt_tile = [4, 4], k_tile = 16, layout_fragments = true>} {
  return
}

// -----

// expected-error @+1 {{query_rows and q_in_shared belong to attention strategies}}
func.func @rows_outside_attention() attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, query_rows = 64>} {
  return
}

// -----

// expected-error @+1 {{a host strategy's kind is single, elementwise, reduction, matmul or conv, not attention}}
func.func @host_attention() attributes {kiln.host_strategy = #kiln.host_strategy<kind = attention, workgroup_count = [1, 1, 1]>} {
  return
}

// -----

// expected-error @+1 {{a host strategy tiles at most three loops}}
func.func @host_four_loops() attributes {kiln.host_strategy = #kiln.host_strategy<kind = elementwise, tile_sizes = [1, 2, 3, 4], workgroup_count = [1, 1, 1]>} {
  return
}

// -----

// expected-error @+1 {{workgroup_count must be three positive sizes}}
func.func @host_grid() attributes {kiln.host_strategy = #kiln.host_strategy<kind = elementwise, workgroup_count = [4, 1]>} {
  return
}

// -----

// expected-error @+1 {{vector_sizes need the root op they tile}}
func.func @host_rootless() attributes {kiln.host_strategy = #kiln.host_strategy<kind = matmul, workgroup_count = [1, 1, 1], vector_width = 128, vector_sizes = [4, 8, 1]>} {
  return
}

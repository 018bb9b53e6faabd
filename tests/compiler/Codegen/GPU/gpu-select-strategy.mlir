// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy=subgroup-size=64 | FileCheck %s --check-prefix=WAVE64
// RUN: kiln-opt %s --split-input-file --kiln-gpu-select-strategy=subgroup-size=32 | FileCheck %s --check-prefix=WAVE32

// Elementwise f32 with an innermost size divisible by 4: each thread handles
// 128 bits (4 elements) per step; a workgroup is 4 subgroups, i.e. 256
// threads on wave64 CDNA (gfx9) and 128 on wave32 RDNA/NVIDIA, and covers
// threads x 4 elements.
// WAVE64-LABEL: func.func @elementwise
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 256, subgroup_size = 64, workgroup_tile = [2, 0], workgroup_count = 512, thread_tile = 4>
// WAVE32-LABEL: func.func @elementwise
// WAVE32-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [1, 0], workgroup_count = 1024, thread_tile = 4>
func.func @elementwise(%a: tensor<1024x512xf32>, %b: tensor<1024x512xf32>) -> tensor<1024x512xf32> {
  %e = tensor.empty() : tensor<1024x512xf32>
  %r = linalg.add ins(%a, %b : tensor<1024x512xf32>, tensor<1024x512xf32>) outs(%e : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %r : tensor<1024x512xf32>
}

// -----

// Odd innermost size, i8: no 128-bit chunks.
// WAVE64-LABEL: func.func @elementwise_odd
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 256, subgroup_size = 64>
func.func @elementwise_odd(%a: tensor<3x5xi8>) -> tensor<3x5xi8> {
  %e = tensor.empty() : tensor<3x5xi8>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<3x5xi8>) outs(%e : tensor<3x5xi8>) {
  ^bb0(%x: i8, %o: i8):
    %y = arith.addi %x, %x : i8
    linalg.yield %y : i8
  } -> tensor<3x5xi8>
  return %r : tensor<3x5xi8>
}

// -----

// A large reduction along the innermost dimension: one workgroup per row,
// its threads reduce the row together through shared memory.
// WAVE64-LABEL: func.func @row_sum
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 64, workgroup_tile = [1, 0], workgroup_count = 1000, reduction = workgroup, reduction_vector = 4>
// WAVE32-LABEL: func.func @row_sum
// WAVE32-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [1, 0], workgroup_count = 1000, reduction = workgroup, reduction_vector = 4>
func.func @row_sum(%a: tensor<1000x1024xf32>) -> tensor<1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1000xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1000xf32>) -> tensor<1000xf32>
  %r = linalg.reduce ins(%a : tensor<1000x1024xf32>) outs(%f : tensor<1000xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<1000xf32>
}

// -----

// Softmax normalization consuming an innermost max reduction: the result
// spans the reduced dimension too, so each workgroup takes one full row;
// the row is read and the result written in 128-bit chunks per thread.
// WAVE64-LABEL: func.func @softmax_tail
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 64, workgroup_tile = [1, 0], workgroup_count = 64, thread_tile = 4, reduction = workgroup, reduction_vector = 4>
func.func @softmax_tail(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x4096xf32>) outs(%m0 : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x4096xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<64x4096xf32>, tensor<64xf32>) outs(%e2 : tensor<64x4096xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<64x4096xf32>
  return %r : tensor<64x4096xf32>
}

// -----

// Reducing a non-innermost dimension: threads own 128-bit chunks of output
// columns (thread_tile = 4 f32) and reduce serially.
// WAVE64-LABEL: func.func @column_sum
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 64, workgroup_tile = [0, 1024], workgroup_count = 2, thread_tile = 4, reduction = thread>
func.func @column_sum(%a: tensor<512x2048xf32>) -> tensor<2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048xf32>) -> tensor<2048xf32>
  %r = linalg.reduce ins(%a : tensor<512x2048xf32>) outs(%f : tensor<2048xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2048xf32>
}

// -----

// Matmuls get square-ish output tiles: 16x16 for 256 threads, 8x16 for 128.
// Reduction loops are never tiled. (i32: f32 and f16/bf16 matmuls of tile
// multiples take the contraction strategy, gpu-select-strategy-contraction.mlir.)
// WAVE64-LABEL: func.func @matmul
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = matmul, workgroup_size = 256, subgroup_size = 64, workgroup_tile = [16, 16, 0], workgroup_count = 512, reduction = thread>
// WAVE32-LABEL: func.func @matmul
// WAVE32-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = matmul, workgroup_size = 128, subgroup_size = 32, workgroup_tile = [8, 16, 0], workgroup_count = 1024, reduction = thread>
func.func @matmul(%a: tensor<256x128xi32>, %b: tensor<128x512xi32>) -> tensor<256x512xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<256x512xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<256x512xi32>) -> tensor<256x512xi32>
  %mm = linalg.matmul ins(%a, %b : tensor<256x128xi32>, tensor<128x512xi32>) outs(%f : tensor<256x512xi32>) -> tensor<256x512xi32>
  return %mm : tensor<256x512xi32>
}

// -----

// WAVE64-LABEL: func.func @batch_matmul
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = matmul, workgroup_size = 256, subgroup_size = 64, workgroup_tile = [1, 16, 16, 0], workgroup_count = 128, reduction = thread>
func.func @batch_matmul(%a: tensor<8x64x32xi32>, %b: tensor<8x32x64xi32>) -> tensor<8x64x64xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x64x64xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<8x64x64xi32>) -> tensor<8x64x64xi32>
  %mm = linalg.batch_matmul ins(%a, %b : tensor<8x64x32xi32>, tensor<8x32x64xi32>) outs(%f : tensor<8x64x64xi32>) -> tensor<8x64x64xi32>
  return %mm : tensor<8x64x64xi32>
}

// -----

// Convolutions and pooling tile output loops only (never the window or the
// input channels).
// WAVE64-LABEL: func.func @conv
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = conv, workgroup_size = 256, subgroup_size = 64, workgroup_tile = [1, 1, 8, 0, 0, 0, 0], workgroup_count = 512, reduction = thread>
func.func @conv(%in: tensor<4x34x34x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<4x32x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32x32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32x32x32xf32>) -> tensor<4x32x32x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : tensor<4x34x34x16xf32>, tensor<3x3x16x32xf32>) outs(%f : tensor<4x32x32x32xf32>) -> tensor<4x32x32x32xf32>
  return %r : tensor<4x32x32x32xf32>
}

// -----

// WAVE64-LABEL: func.func @max_pool
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = pooling, workgroup_size = 256, subgroup_size = 64, workgroup_tile = [1, 2, 0, 0, 0, 0], workgroup_count = 16, reduction = thread>
func.func @max_pool(%in: tensor<2x32x32x8xf32>, %win: tensor<2x2xf32>) -> tensor<2x16x16x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x16x16x8xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x16x16x8xf32>) -> tensor<2x16x16x8xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%in, %win : tensor<2x32x32x8xf32>, tensor<2x2xf32>) outs(%f : tensor<2x16x16x8xf32>) -> tensor<2x16x16x8xf32>
  return %r : tensor<2x16x16x8xf32>
}

// -----

// Ops other than linalg (here tensor.pad) take the generic path.
// WAVE64-LABEL: func.func @pad
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = generic, workgroup_size = 256, subgroup_size = 64, workgroup_tile = [7, 0], workgroup_count = 5>
func.func @pad(%a: tensor<30x30xf32>) -> tensor<34x34xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %a low[2, 2] high[2, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<30x30xf32> to tensor<34x34xf32>
  return %p : tensor<34x34xf32>
}

// -----

// Several results: one workgroup computes everything.
// WAVE64-LABEL: func.func @two_results
// WAVE64-SAME: kiln.gpu_strategy = #kiln.gpu_strategy<kind = single, workgroup_size = 256, subgroup_size = 64>
func.func @two_results(%a: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  return %r, %a : tensor<16xf32>, tensor<16xf32>
}

// -----

// f16: 128 bits are 8 elements per thread (kiln-gpu-vectorize turns them
// into one 16-byte load/store per thread).
// WAVE64-LABEL: func.func @elementwise_f16
// WAVE64-SAME: thread_tile = 8{{[,>]}}
// WAVE32-LABEL: func.func @elementwise_f16
// WAVE32-SAME: thread_tile = 8{{[,>]}}
func.func @elementwise_f16(%a: tensor<64x512xf16>) -> tensor<64x512xf16> {
  %e = tensor.empty() : tensor<64x512xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x512xf16>) outs(%e : tensor<64x512xf16>) {
  ^bb0(%x: f16, %o: f16):
    %y = arith.addf %x, %x : f16
    linalg.yield %y : f16
  } -> tensor<64x512xf16>
  return %r : tensor<64x512xf16>
}

// -----

// Many short rows (32768 of 512 f32, 2 KiB each): one row per subgroup,
// four rows per workgroup; each lane reads 128-bit chunks. Rows of 1024 f32
// stay one per workgroup (faster that way on an H100).
// WAVE32-LABEL: func.func @many_short_rows
// WAVE32-SAME: workgroup_size = 128{{[,>]}}
// WAVE32-SAME: workgroup_tile = [4, 0]
// WAVE32-SAME: workgroup_count = 8192{{[,>]}}
// WAVE32-SAME: reduction = subgroup{{[,>]}}
// WAVE32-SAME: reduction_vector = 4{{[,>]}}
// WAVE32-LABEL: func.func @many_rows_of_4k
// WAVE32-SAME: workgroup_count = 32768{{[,>]}}
// WAVE32-SAME: reduction = workgroup{{[,>]}}
func.func @many_short_rows(%x: tensor<32768x512xf32>) -> tensor<32768xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32768xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32768xf32>) -> tensor<32768xf32>
  %r = linalg.reduce ins(%x : tensor<32768x512xf32>) outs(%f : tensor<32768xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<32768xf32>
}

// -----

func.func @many_rows_of_4k(%x: tensor<32768x1024xf32>) -> tensor<32768xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32768xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32768xf32>) -> tensor<32768xf32>
  %r = linalg.reduce ins(%x : tensor<32768x1024xf32>) outs(%f : tensor<32768xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<32768xf32>
}

// -----

// Few long rows (1024 of 32768): wider workgroups (512 threads), so that
// 1024 workgroups still fill the GPU.
// WAVE32-LABEL: func.func @few_long_rows
// WAVE32-SAME: workgroup_size = 512{{[,>]}}
// WAVE32-SAME: workgroup_tile = [1, 0]
// WAVE32-SAME: workgroup_count = 1024{{[,>]}}
// WAVE32-SAME: reduction = workgroup{{[,>]}}
// WAVE32-SAME: reduction_vector = 4{{[,>]}}
func.func @few_long_rows(%x: tensor<1024x32768xf32>) -> tensor<1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %r = linalg.reduce ins(%x : tensor<1024x32768xf32>) outs(%f : tensor<1024xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<1024xf32>
}

// -----

// Many long rows under a result that spans them (softmax): 4096 rows fill
// the GPU with 128-thread workgroups, but a thread's share of a row (256
// f16, 256 f32) would not fit kGPURowRegisterBudget (64 registers), and
// kiln-gpu-lower-rows would read the row once per op. The workgroup widens
// to where the widest input row fits: 256 threads for f16 (128 values, 64
// registers), 512 for f32. Few such rows fill the GPU at half the threads
// of a plain reduction: 1024 rows of 32768 f16 take 256 threads where the
// row sum of "few long rows" takes 512. A plain row sum holds nothing (128
// threads), and rows no workgroup can hold (262144 f32 would need 4096
// threads) stay at 128.
// WAVE32-LABEL: func.func @many_long_rows_softmax_f16
// WAVE32-SAME: workgroup_size = 256{{[,>]}}
// WAVE32-SAME: workgroup_count = 4096{{[,>]}}
// WAVE32-SAME: reduction = workgroup{{[,>]}}
// WAVE32-LABEL: func.func @many_long_rows_softmax_f32
// WAVE32-SAME: workgroup_size = 512{{[,>]}}
// WAVE32-SAME: reduction = workgroup{{[,>]}}
// WAVE32-LABEL: func.func @few_long_rows_softmax_f16
// WAVE32-SAME: workgroup_size = 256{{[,>]}}
// WAVE32-SAME: workgroup_count = 1024{{[,>]}}
// WAVE32-LABEL: func.func @many_long_rows_sum
// WAVE32-SAME: workgroup_size = 128{{[,>]}}
// WAVE32-SAME: workgroup_count = 4096{{[,>]}}
// WAVE32-LABEL: func.func @rows_too_long_to_hold
// WAVE32-SAME: workgroup_size = 128{{[,>]}}
// WAVE32-SAME: reduction = workgroup{{[,>]}}
// WAVE64-LABEL: func.func @many_long_rows_softmax_f16
// WAVE64-SAME: workgroup_size = 256{{[,>]}}
// WAVE64-LABEL: func.func @many_long_rows_softmax_f32
// WAVE64-SAME: workgroup_size = 512{{[,>]}}
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @many_long_rows_softmax_f16(%x: tensor<4096x32768xf16>) -> tensor<4096x32768xf16> {
  %cst = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<4096x32768xf32>
  %1 = tensor.empty() : tensor<4096xf32>
  %2 = linalg.fill ins(%ninf : f32) outs(%1 : tensor<4096xf32>) -> tensor<4096xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%1 : tensor<4096xf32>) -> tensor<4096xf32>
  %4 = tensor.empty() : tensor<4096x32768xf16>
    %5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4096x32768xf16>) outs(%0 : tensor<4096x32768xf32>) {
    ^bb0(%in: f16, %out: f32):
      %10 = arith.extf %in : f16 to f32
      linalg.yield %10 : f32
    } -> tensor<4096x32768xf32>
  %6 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%5 : tensor<4096x32768xf32>) outs(%2 : tensor<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.maxnumf %in, %out : f32
    linalg.yield %10 : f32
  } -> tensor<4096xf32>
  %7 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%5, %6 : tensor<4096x32768xf32>, tensor<4096xf32>) outs(%0 : tensor<4096x32768xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %10 = arith.subf %in, %in_1 : f32
    %11 = math.exp %10 : f32
    linalg.yield %11 : f32
  } -> tensor<4096x32768xf32>
  %8 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<4096x32768xf32>) outs(%3 : tensor<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.addf %in, %out : f32
    linalg.yield %10 : f32
  } -> tensor<4096xf32>
  %9 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%7, %8 : tensor<4096x32768xf32>, tensor<4096xf32>) outs(%4 : tensor<4096x32768xf16>) {
  ^bb0(%in: f32, %in_1: f32, %out: f16):
      %10 = arith.divf %in, %in_1 : f32
      %11 = arith.truncf %10 : f32 to f16
      linalg.yield %11 : f16
  } -> tensor<4096x32768xf16>
  return %9 : tensor<4096x32768xf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @many_long_rows_softmax_f32(%x: tensor<4096x32768xf32>) -> tensor<4096x32768xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<4096x32768xf32>
  %1 = tensor.empty() : tensor<4096xf32>
  %2 = linalg.fill ins(%ninf : f32) outs(%1 : tensor<4096xf32>) -> tensor<4096xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%1 : tensor<4096xf32>) -> tensor<4096xf32>
  %4 = tensor.empty() : tensor<4096x32768xf32>
  %6 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4096x32768xf32>) outs(%2 : tensor<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.maxnumf %in, %out : f32
    linalg.yield %10 : f32
  } -> tensor<4096xf32>
  %7 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %6 : tensor<4096x32768xf32>, tensor<4096xf32>) outs(%0 : tensor<4096x32768xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %10 = arith.subf %in, %in_1 : f32
    %11 = math.exp %10 : f32
    linalg.yield %11 : f32
  } -> tensor<4096x32768xf32>
  %8 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<4096x32768xf32>) outs(%3 : tensor<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.addf %in, %out : f32
    linalg.yield %10 : f32
  } -> tensor<4096xf32>
  %9 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%7, %8 : tensor<4096x32768xf32>, tensor<4096xf32>) outs(%4 : tensor<4096x32768xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
      %10 = arith.divf %in, %in_1 : f32
      linalg.yield %10 : f32
  } -> tensor<4096x32768xf32>
  return %9 : tensor<4096x32768xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @few_long_rows_softmax_f16(%x: tensor<1024x32768xf16>) -> tensor<1024x32768xf16> {
  %cst = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<1024x32768xf32>
  %1 = tensor.empty() : tensor<1024xf32>
  %2 = linalg.fill ins(%ninf : f32) outs(%1 : tensor<1024xf32>) -> tensor<1024xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%1 : tensor<1024xf32>) -> tensor<1024xf32>
  %4 = tensor.empty() : tensor<1024x32768xf16>
    %5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1024x32768xf16>) outs(%0 : tensor<1024x32768xf32>) {
    ^bb0(%in: f16, %out: f32):
      %10 = arith.extf %in : f16 to f32
      linalg.yield %10 : f32
    } -> tensor<1024x32768xf32>
  %6 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%5 : tensor<1024x32768xf32>) outs(%2 : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.maxnumf %in, %out : f32
    linalg.yield %10 : f32
  } -> tensor<1024xf32>
  %7 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%5, %6 : tensor<1024x32768xf32>, tensor<1024xf32>) outs(%0 : tensor<1024x32768xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %10 = arith.subf %in, %in_1 : f32
    %11 = math.exp %10 : f32
    linalg.yield %11 : f32
  } -> tensor<1024x32768xf32>
  %8 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<1024x32768xf32>) outs(%3 : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.addf %in, %out : f32
    linalg.yield %10 : f32
  } -> tensor<1024xf32>
  %9 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%7, %8 : tensor<1024x32768xf32>, tensor<1024xf32>) outs(%4 : tensor<1024x32768xf16>) {
  ^bb0(%in: f32, %in_1: f32, %out: f16):
      %10 = arith.divf %in, %in_1 : f32
      %11 = arith.truncf %10 : f32 to f16
      linalg.yield %11 : f16
  } -> tensor<1024x32768xf16>
  return %9 : tensor<1024x32768xf16>
}

// -----

func.func @many_long_rows_sum(%x: tensor<4096x32768xf32>) -> tensor<4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %r = linalg.reduce ins(%x : tensor<4096x32768xf32>) outs(%f : tensor<4096xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4096xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @rows_too_long_to_hold(%x: tensor<4096x262144xf32>) -> tensor<4096x262144xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<4096x262144xf32>
  %1 = tensor.empty() : tensor<4096xf32>
  %2 = linalg.fill ins(%ninf : f32) outs(%1 : tensor<4096xf32>) -> tensor<4096xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%1 : tensor<4096xf32>) -> tensor<4096xf32>
  %4 = tensor.empty() : tensor<4096x262144xf32>
  %6 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4096x262144xf32>) outs(%2 : tensor<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.maxnumf %in, %out : f32
    linalg.yield %10 : f32
  } -> tensor<4096xf32>
  %7 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %6 : tensor<4096x262144xf32>, tensor<4096xf32>) outs(%0 : tensor<4096x262144xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %10 = arith.subf %in, %in_1 : f32
    %11 = math.exp %10 : f32
    linalg.yield %11 : f32
  } -> tensor<4096x262144xf32>
  %8 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<4096x262144xf32>) outs(%3 : tensor<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.addf %in, %out : f32
    linalg.yield %10 : f32
  } -> tensor<4096xf32>
  %9 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%7, %8 : tensor<4096x262144xf32>, tensor<4096xf32>) outs(%4 : tensor<4096x262144xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
      %10 = arith.divf %in, %in_1 : f32
      linalg.yield %10 : f32
  } -> tensor<4096x262144xf32>
  return %9 : tensor<4096x262144xf32>
}

// -----

// An elementwise kernel over three loops that reads linalg.index (a causal
// mask over batch x rows x columns) stays scalar per thread: vectorizing it
// never terminates in kiln-gpu-vectorize today (known bug). The same body
// over two loops is vectorized (elsewhere in this file: 128-bit chunks).
// WAVE32-LABEL: func.func @causal_mask_3d
// WAVE32-SAME: kind = elementwise{{[,>]}}
// WAVE32-NOT: thread_tile =
func.func @causal_mask_3d(%a: tensor<2x64x256xf32>) -> tensor<2x64x256xf32> {
  %e = tensor.empty() : tensor<2x64x256xf32>
  %minf = arith.constant 0xFF800000 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<2x64x256xf32>) outs(%e : tensor<2x64x256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c = arith.cmpi ugt, %j, %i : index
    %s = arith.select %c, %minf, %x : f32
    linalg.yield %s : f32
  } -> tensor<2x64x256xf32>
  return %r : tensor<2x64x256xf32>
}

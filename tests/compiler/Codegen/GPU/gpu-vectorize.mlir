// RUN: kiln-opt %s --split-input-file --kiln-gpu-vectorize | FileCheck %s

// Each thread owns 4 contiguous f32 (thread_tile = 4): the chunk becomes
// one vector.load per contiguous operand, the body on vector<4xf32> and one
// vector.store.
// CHECK-LABEL: func.func @bias_add
// CHECK: scf.forall
// CHECK: scf.forall
// CHECK-DAG: vector.load %{{.*}} : memref<4xf32, {{.*}}>, vector<4xf32>
// CHECK-DAG: vector.load %{{.*}} : memref<4xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: vector.store %{{.*}} : memref<4xf32, {{.*}}>, vector<4xf32>
// CHECK-NOT: linalg.generic
func.func @bias_add(%arg0: memref<4x512xf32>, %arg1: memref<512xf32>, %arg2: memref<4x512xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32, thread_tile = 4>} {
  scf.forall (%arg3) in (4) {
    %subview = memref.subview %arg0[%arg3, 0] [1, 512] [1, 1] : memref<4x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    %subview_0 = memref.subview %arg2[%arg3, 0] [1, 512] [1, 1] : memref<4x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    scf.forall (%arg4, %arg5) = (0, 0) to (1, 512) step (1, 4) {
      %subview_1 = memref.subview %subview[%arg4, %arg5] [1, 4] [1, 1] : memref<1x512xf32, strided<[512, 1], offset: ?>> to memref<1x4xf32, strided<[512, 1], offset: ?>>
      %subview_2 = memref.subview %arg1[%arg5] [4] [1] : memref<512xf32> to memref<4xf32, strided<[1], offset: ?>>
      %subview_3 = memref.subview %subview_0[%arg4, %arg5] [1, 4] [1, 1] : memref<1x512xf32, strided<[512, 1], offset: ?>> to memref<1x4xf32, strided<[512, 1], offset: ?>>
      linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%subview_1, %subview_2 : memref<1x4xf32, strided<[512, 1], offset: ?>>, memref<4xf32, strided<[1], offset: ?>>) outs(%subview_3 : memref<1x4xf32, strided<[512, 1], offset: ?>>) {
      ^bb0(%in: f32, %in_4: f32, %out: f32):
        %0 = arith.addf %in, %in_4 : f32
        linalg.yield %0 : f32
      }
    } {mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>]}
  } {mapping = [#gpu.block<linear_dim_0>]}
  return
}

// -----

// A per-row operand (d0) does not depend on the innermost loop: one scalar
// read, broadcast to the chunk.
// CHECK-LABEL: func.func @row_scale
// CHECK: vector.load %{{.*}}[] : memref<f32, strided<[], offset: ?>>, vector<f32>
// CHECK: vector.extract
// CHECK: vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK: arith.mulf %{{.*}} : vector<4xf32>
// CHECK: vector.store
func.func @row_scale(%a: memref<8x64xf32>, %s: memref<8xf32>, %o: memref<8x64xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32, thread_tile = 4>} {
  scf.forall (%i, %j) = (0, 0) to (8, 64) step (1, 4) {
    %a1 = memref.subview %a[%i, %j] [1, 4] [1, 1] : memref<8x64xf32> to memref<1x4xf32, strided<[64, 1], offset: ?>>
    %s1 = memref.subview %s[%i] [1] [1] : memref<8xf32> to memref<1xf32, strided<[1], offset: ?>>
    %o1 = memref.subview %o[%i, %j] [1, 4] [1, 1] : memref<8x64xf32> to memref<1x4xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a1, %s1 : memref<1x4xf32, strided<[64, 1], offset: ?>>, memref<1xf32, strided<[1], offset: ?>>) outs(%o1 : memref<1x4xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32, %z: f32):
      %m = arith.mulf %x, %y : f32
      linalg.yield %m : f32
    }
  } {mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>]}
  return
}

// -----

// Not chunks: a partial (dynamic) tile, a transposed operand, a tile of
// another width than thread_tile, i1 elements, and an op outside any
// forall. All stay linalg (scalar loops later).
// CHECK-LABEL: func.func @not_chunks
// CHECK-NOT: vector.
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: vector.
func.func @not_chunks(%a: memref<64x64xf32>, %b: memref<64x64xi1>, %n: index) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32, thread_tile = 4>} {
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (1, 4) {
    %p = memref.subview %a[%i, %j] [1, %n] [1, 1] : memref<64x64xf32> to memref<1x?xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%p : memref<1x?xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%x: f32):
      %y = arith.addf %x, %x : f32
      linalg.yield %y : f32
    }
    %t = memref.subview %a[%j, %i] [4, 1] [1, 1] : memref<64x64xf32> to memref<4x1xf32, strided<[64, 1], offset: ?>>
    %q = memref.subview %a[%i, %j] [1, 4] [1, 1] : memref<64x64xf32> to memref<1x4xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : memref<4x1xf32, strided<[64, 1], offset: ?>>) outs(%q : memref<1x4xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%x: f32, %o: f32):
      linalg.yield %x : f32
    }
    %w = memref.subview %a[%i, %j] [1, 2] [1, 1] : memref<64x64xf32> to memref<1x2xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%w : memref<1x2xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%x: f32):
      %y = arith.addf %x, %x : f32
      linalg.yield %y : f32
    }
    %bits = memref.subview %b[%i, %j] [1, 4] [1, 1] : memref<64x64xi1> to memref<1x4xi1, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%bits : memref<1x4xi1, strided<[64, 1], offset: ?>>) {
    ^bb0(%x: i1):
      %y = arith.xori %x, %x : i1
      linalg.yield %y : i1
    }
  } {mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>]}
  %s = memref.subview %a[0, 0] [1, 4] [1, 1] : memref<64x64xf32> to memref<1x4xf32, strided<[64, 1]>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%s : memref<1x4xf32, strided<[64, 1]>>) {
  ^bb0(%x: f32):
    %y = arith.addf %x, %x : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// Without a thread tile > 1 nothing changes.
// CHECK-LABEL: func.func @scalar_strategy
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @scalar_strategy(%a: memref<64x64xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32>} {
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (1, 4) {
    %q = memref.subview %a[%i, %j] [1, 4] [1, 1] : memref<64x64xf32> to memref<1x4xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%q : memref<1x4xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%x: f32):
      %y = arith.addf %x, %x : f32
      linalg.yield %y : f32
    }
  } {mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>]}
  return
}

// -----

// A chunk computed from linalg.index alone (no input read) into a
// leading-unit output: the 1-D result broadcast to 1x8 for the write is cast
// away before broadcasts are lowered (both at once looped forever, running
// out of memory); the step folds into a constant vector.
// CHECK-LABEL: func.func @index_only
// CHECK: %[[IOTA:.*]] = arith.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]> : vector<8xf16>
// CHECK: vector.store %[[IOTA]]
// CHECK-NOT: vector.broadcast
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @index_only(%arg0: memref<1x8xf16>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32, thread_tile = 8>} {
  scf.forall (%arg2) in (1) {
    linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%arg0 : memref<1x8xf16>) {
    ^bb0(%out: f16):
      %0 = linalg.index 1 : index
      %1 = arith.index_cast %0 : index to i32
      %2 = arith.sitofp %1 : i32 to f16
      linalg.yield %2 : f16
    }
  }
  return
}

// -----

// A reduction across rows whose thread tile is 4 adjacent columns: a loop
// over the 64 reduced rows carrying a vector<4xf32> of partials, one
// 128-bit load per row (the per-column scale as one), a broadcast of the
// per-row weight, the body on vectors, one store at the end.
// CHECK-LABEL: func.func @column_chunks
// CHECK: scf.forall
// CHECK: %[[INIT:.*]] = vector.load %{{.*}} : memref<4xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[R:.*]] = %c0 to %c64 step %c1 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<4xf32>)
// CHECK:   %[[X:.*]] = vector.load %{{.*}} : memref<64x4xf32, strided<[512, 1], offset: ?>>, vector<4xf32>
// CHECK:   %[[W:.*]] = memref.load %{{.*}} : memref<64xf32>
// CHECK:   %[[WV:.*]] = vector.broadcast %[[W]] : f32 to vector<4xf32>
// CHECK:   %[[P:.*]] = arith.mulf %[[X]], %[[WV]] : vector<4xf32>
// CHECK:   %[[S:.*]] = arith.addf %[[P]], %[[ACC]] : vector<4xf32>
// CHECK:   scf.yield %[[S]] : vector<4xf32>
// CHECK: vector.store %[[SUM]], %{{.*}} : memref<4xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK-NOT: linalg.generic
func.func @column_chunks(%x: memref<64x512xf32>, %w: memref<64xf32>, %out: memref<512xf32>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, thread_tile = 4, reduction = thread>} {
  scf.forall (%c) = (0) to (512) step (4) {
    %xs = memref.subview %x[0, %c] [64, 4] [1, 1] : memref<64x512xf32> to memref<64x4xf32, strided<[512, 1], offset: ?>>
    %os = memref.subview %out[%c] [4] [1] : memref<512xf32> to memref<4xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>, affine_map<(r, c) -> (c)>], iterator_types = ["reduction", "parallel"]} ins(%xs, %w : memref<64x4xf32, strided<[512, 1], offset: ?>>, memref<64xf32>) outs(%os : memref<4xf32, strided<[1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %p, %acc : f32
      linalg.yield %s : f32
    }
  } {mapping = [#gpu.thread<linear_dim_0>]}
  return
}

// -----

// The im2col gather of a convolution (kiln-convolutions-to-matmuls): the
// input is read through (n, oh + kh, ow + kw, c), not a projected
// permutation, so the upstream vectorizer declines; the chunk of 8 channels
// is contiguous in both operands and is vectorized by hand: one 128-bit
// load at the mapped position, one store, and the output is not read.
// CHECK-LABEL: func.func @im2col_chunk
// CHECK: scf.forall
// CHECK-NOT: vector.load %{{.*}} : memref<1x1x1x1x1x8xf16
// CHECK: %[[V:.*]] = vector.load %{{.*}} : memref<1x1x1x8xf16, strided<[{{.*}}], offset: ?>>, vector<8xf16>
// CHECK: vector.store %[[V]], %{{.*}} : memref<1x1x1x1x1x8xf16, strided<[{{.*}}], offset: ?>>, vector<8xf16>
// CHECK-NOT: linalg.generic
func.func @im2col_chunk(%x: memref<2x10x10x64xf16>, %p: memref<2x8x8x3x3x64xf16>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32, thread_tile = 8>} {
  scf.forall (%kh, %kw, %c) = (0, 0, 0) to (3, 3, 64) step (1, 1, 8) {
    %xs = memref.subview %x[0, %kh, %kw, %c] [1, 1, 1, 8] [1, 1, 1, 1] : memref<2x10x10x64xf16> to memref<1x1x1x8xf16, strided<[6400, 640, 64, 1], offset: ?>>
    %ps = memref.subview %p[0, 0, 0, %kh, %kw, %c] [1, 1, 1, 1, 1, 8] [1, 1, 1, 1, 1, 1] : memref<2x8x8x3x3x64xf16> to memref<1x1x1x1x1x8xf16, strided<[36864, 4608, 576, 192, 64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d3, d2 + d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%xs : memref<1x1x1x8xf16, strided<[6400, 640, 64, 1], offset: ?>>) outs(%ps : memref<1x1x1x1x1x8xf16, strided<[36864, 4608, 576, 192, 64, 1], offset: ?>>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    }
  }
  return
}

// -----

// The NCHW gather: the chunk runs along ow, and the input's last index is
// ow + kw (contiguous along the chunk, at an offset): one vector load.
// CHECK-LABEL: func.func @nchw_gather_chunk
// CHECK: %[[V:.*]] = vector.load %{{.*}} : memref<1x1x1x8xf16, strided<[{{.*}}], offset: ?>>, vector<8xf16>
// CHECK: vector.store %[[V]]
// CHECK-NOT: linalg.generic
func.func @nchw_gather_chunk(%x: memref<1x2x10x10xf16>, %p: memref<2x3x3x1x8x8xf16>) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 128, subgroup_size = 32, thread_tile = 8>} {
  scf.forall (%c, %kh, %kw, %oh) = (0, 0, 0, 0) to (2, 3, 3, 8) step (1, 1, 1, 1) {
    %xs = memref.subview %x[0, %c, %oh, %kw] [1, 1, 1, 8] [1, 1, 1, 1] : memref<1x2x10x10xf16> to memref<1x1x1x8xf16, strided<[200, 100, 10, 1], offset: ?>>
    %ps = memref.subview %p[%c, %kh, %kw, 0, %oh, 0] [1, 1, 1, 1, 1, 8] [1, 1, 1, 1, 1, 1] : memref<2x3x3x1x8x8xf16> to memref<1x1x1x1x1x8xf16, strided<[576, 192, 64, 64, 8, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d1 + d4, d2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%xs : memref<1x1x1x8xf16, strided<[200, 100, 10, 1], offset: ?>>) outs(%ps : memref<1x1x1x1x1x8xf16, strided<[576, 192, 64, 64, 8, 1], offset: ?>>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    }
  }
  return
}

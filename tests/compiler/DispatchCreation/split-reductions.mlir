// RUN: kiln-opt %s --split-input-file --kiln-split-reductions | FileCheck %s

// A sum over all 2^24 elements: the first reduced loop splits into 512
// slices of 8 rows (32768 elements each), reduced as rows; the 512 partials
// are summed into the original init.
// CHECK-LABEL: func.func @sum_all
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [512, 8, 4096]
// CHECK: %[[P0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<512xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[X]] : tensor<512x8x4096xf32>) outs(%[[P0]] : tensor<512xf32>)
// CHECK:   arith.addf
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction"]} ins(%[[P]] : tensor<512xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:   arith.addf
// CHECK: return %[[R]]
func.func @sum_all(%x: tensor<4096x4096xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%x : tensor<4096x4096xf32>) outs(%f : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// -----

// A column max over 4096 rows of 4096 (4096 results, one thread each):
// 64 slices of 64 rows give 2^18 partials (the slice loop parallel, the
// columns innermost and parallel, so threads stay along the contiguous
// dimension), starting from the combiner's neutral element (NaN for
// maxnumf); the final op reduces the 64 partials of each column, its loops
// in the partials' order.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[PART:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @column_max
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [64, 64, 4096]
// CHECK: %[[NAN:.*]] = arith.constant 0xFFC00000 : f32
// CHECK: %[[P0:.*]] = linalg.fill ins(%[[NAN]] : f32) outs(%{{.*}} : tensor<64x4096xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[PART]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<64x64x4096xf32>) outs(%[[P0]] : tensor<64x4096xf32>)
// CHECK:   arith.maxnumf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]]], iterator_types = ["reduction", "parallel"]} ins(%[[P]] : tensor<64x4096xf32>) outs(%{{.*}} : tensor<4096xf32>)
// CHECK:   arith.maxnumf
func.func @column_max(%x: tensor<4096x4096xf32>) -> tensor<4096xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %r = linalg.reduce ins(%x : tensor<4096x4096xf32>) outs(%f : tensor<4096xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.maxnumf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4096xf32>
}

// -----

// Two rows of 65536 (one workgroup each): 16 slices of 4096 per row, the
// slice loop outermost (partials 16x2), innermost in the final op (each
// row's 16 partials reduced cooperatively). The body reads the split
// loop's index, now slice * 4096 + position.
// CHECK-LABEL: func.func @weighted_long_rows
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [2, 16, 4096]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<16x2xf32>)
// CHECK:   %[[R:.*]] = linalg.index 2 : index
// CHECK:   %[[S:.*]] = linalg.index 0 : index
// CHECK:   %[[BASE:.*]] = arith.muli %[[S]], %c4096
// CHECK:   %[[J:.*]] = arith.addi %[[BASE]], %[[R]]
// CHECK:   arith.index_cast %[[J]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<16x2xf32>) outs(%{{.*}} : tensor<2xf32>)
func.func @weighted_long_rows(%x: tensor<2x65536xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x65536xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %w = arith.sitofp %ji : i32 to f32
    %p = arith.mulf %a, %w : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Enough rows to fill the GPU (4096 workgroups), and a column sum with
// enough columns (65536 threads): unchanged.
// CHECK-LABEL: func.func @many_rows
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.reduce
// CHECK-LABEL: func.func @many_columns
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.reduce
func.func @many_rows(%x: tensor<4096x4096xf32>) -> tensor<4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %r = linalg.reduce ins(%x : tensor<4096x4096xf32>) outs(%f : tensor<4096xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4096xf32>
}
func.func @many_columns(%x: tensor<1024x65536xf32>) -> tensor<65536xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<65536xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<65536xf32>) -> tensor<65536xf32>
  %r = linalg.reduce ins(%x : tensor<1024x65536xf32>) outs(%f : tensor<65536xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<65536xf32>
}

// -----

// A batch of matrix-vector products (decode attention's P V: 32 x 128
// results over 4096) computes a result per thread like a column sum: 64
// slices of 64 along K, the slice loop outermost and N moved after K, so
// that threads reduce chunks of adjacent results along the contiguous N.
// CHECK-LABEL: func.func @batch_matvec
// CHECK-DAG: tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [32, 1, 64, 64]
// CHECK-DAG: tensor.expand_shape %arg1 {{\[}}[0], [1, 2], [3]] output_shape [32, 64, 64, 128]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<64x32x1x128xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<32x1x128xf32>)
func.func @batch_matvec(%p: tensor<32x1x4096xf32>, %v: tensor<32x4096x128xf32>) -> tensor<32x1x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x1x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x1x128xf32>) -> tensor<32x1x128xf32>
  %r = linalg.batch_matmul ins(%p, %v : tensor<32x1x4096xf32>, tensor<32x4096x128xf32>) outs(%f : tensor<32x1x128xf32>) -> tensor<32x1x128xf32>
  return %r : tensor<32x1x128xf32>
}

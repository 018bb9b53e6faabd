// RUN: kiln-opt %s --kiln-host-bufferize --canonicalize | FileCheck %s

// Each workgroup tile is computed in place in the result binding: no
// allocation or copy of the whole result. Fused producers whose tile is
// needed as an input get a tile-sized stack buffer.
// CHECK-LABEL: func.func @matmul_bias_relu(
// CHECK-SAME: %[[A:.+]]: memref<64x32xf32>, %[[B:.+]]: memref<32x48xf32>, %[[BIAS:.+]]: memref<48xf32>, %[[OUT:.+]]: memref<64x48xf32>)
// CHECK-NOT: memref.alloc(
// CHECK: scf.forall (%[[I:.+]], %[[J:.+]]) = (0, 0) to (64, 48) step (8, 12) {
// CHECK:   %[[TMP:.+]] = memref.alloca() {alignment = 64 : i64} : memref<8x12xf32>
// CHECK:   linalg.fill {{.+}} outs(%[[TMP]] : memref<8x12xf32>)
// CHECK:   linalg.matmul {{.+}} outs(%[[TMP]] : memref<8x12xf32>)
// CHECK:   %[[OUTTILE:.+]] = memref.subview %[[OUT]][%[[I]], %[[J]]] [8, 12] [1, 1]
// CHECK:   linalg.generic {{.+}} ins(%[[TMP]], %{{.+}} : memref<8x12xf32>, memref<12xf32, {{.+}}>) outs(%[[OUTTILE]] :
// CHECK-NOT: linalg.copy
// CHECK: } {mapping = [#gpu.block<y>, #gpu.block<x>]}
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @matmul_bias_relu(%arg0: memref<64x32xf32>, %arg1: memref<32x48xf32>, %arg2: memref<48xf32>, %arg3: memref<64x48xf32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<64x32xf32> to tensor<64x32xf32>
  %1 = bufferization.to_tensor %arg1 restrict : memref<32x48xf32> to tensor<32x48xf32>
  %2 = bufferization.to_tensor %arg2 restrict : memref<48xf32> to tensor<48xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %3 = tensor.empty() : tensor<64x48xf32>
  %4 = scf.forall (%i, %j) = (0, 0) to (64, 48) step (8, 12) shared_outs(%out = %3) -> (tensor<64x48xf32>) {
    %a = tensor.extract_slice %0[%i, 0] [8, 32] [1, 1] : tensor<64x32xf32> to tensor<8x32xf32>
    %b = tensor.extract_slice %1[0, %j] [32, 12] [1, 1] : tensor<32x48xf32> to tensor<32x12xf32>
    %e = tensor.extract_slice %3[%i, %j] [8, 12] [1, 1] : tensor<64x48xf32> to tensor<8x12xf32>
    %f = linalg.fill ins(%cst : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    %mm = linalg.matmul ins(%a, %b : tensor<8x32xf32>, tensor<32x12xf32>) outs(%f : tensor<8x12xf32>) -> tensor<8x12xf32>
    %bias = tensor.extract_slice %2[%j] [12] [1] : tensor<48xf32> to tensor<12xf32>
    %o = tensor.extract_slice %out[%i, %j] [8, 12] [1, 1] : tensor<64x48xf32> to tensor<8x12xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%mm, %bias : tensor<8x12xf32>, tensor<12xf32>) outs(%o : tensor<8x12xf32>) {
    ^bb0(%x: f32, %y: f32, %z: f32):
      %s = arith.addf %x, %y : f32
      %m = arith.maximumf %s, %cst : f32
      linalg.yield %m : f32
    } -> tensor<8x12xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %r into %out[%i, %j] [8, 12] [1, 1] : tensor<8x12xf32> into tensor<64x48xf32>
    }
  } {mapping = [#gpu.block<y>, #gpu.block<x>]}
  bufferization.materialize_in_destination %4 in restrict writable %arg3 : (tensor<64x48xf32>, memref<64x48xf32>) -> ()
  return
}

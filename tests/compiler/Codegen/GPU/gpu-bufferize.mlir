// RUN: kiln-opt %s --split-input-file --kiln-gpu-bufferize | FileCheck %s

// The workgroup's matmul tile is a temporary shared by its threads: it lives
// in workgroup memory. Edge tiles are smaller, so the buffer is allocated
// at the largest tile size (16x16) and viewed with the actual sizes.
// CHECK-LABEL: func.func @tile_temporary
// CHECK: scf.forall
// CHECK: %[[BUF:.*]] = memref.alloc() {{.*}} : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK: %[[VIEW:.*]] = memref.reinterpret_cast %[[BUF]] to offset: [0], sizes: [%{{.*}}, %{{.*}}], strides: [%{{.*}}, 1]
// CHECK: linalg.fill {{.*}} outs(%[[VIEW]]
// CHECK: linalg.matmul {{.*}} outs(%[[VIEW]]
// CHECK: linalg.generic {{.*}} ins(%[[VIEW]]
func.func @tile_temporary(%a: memref<250x128xf32>, %b: memref<128x500xf32>, %out: memref<250x500xf32>) {
  %zero = arith.constant 0.0 : f32
  %ta = bufferization.to_tensor %a restrict : memref<250x128xf32> to tensor<250x128xf32>
  %tb = bufferization.to_tensor %b restrict : memref<128x500xf32> to tensor<128x500xf32>
  %e = tensor.empty() : tensor<250x500xf32>
  %r = scf.forall (%i, %j) = (0, 0) to (250, 500) step (16, 16) shared_outs(%o = %e) -> (tensor<250x500xf32>) {
    %m = affine.min affine_map<(d0) -> (-d0 + 250, 16)>(%i)
    %n = affine.min affine_map<(d0) -> (-d0 + 500, 16)>(%j)
    %sa = tensor.extract_slice %ta[%i, 0] [%m, 128] [1, 1] : tensor<250x128xf32> to tensor<?x128xf32>
    %sb = tensor.extract_slice %tb[0, %j] [128, %n] [1, 1] : tensor<128x500xf32> to tensor<128x?xf32>
    %t = tensor.empty(%m, %n) : tensor<?x?xf32>
    %f = linalg.fill ins(%zero : f32) outs(%t : tensor<?x?xf32>) -> tensor<?x?xf32>
    %mm = linalg.matmul ins(%sa, %sb : tensor<?x128xf32>, tensor<128x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
    %so = tensor.extract_slice %o[%i, %j] [%m, %n] [1, 1] : tensor<250x500xf32> to tensor<?x?xf32>
    %relu = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%mm : tensor<?x?xf32>) outs(%so : tensor<?x?xf32>) {
    ^bb0(%x: f32, %y: f32):
      %v = arith.maximumf %x, %zero : f32
      linalg.yield %v : f32
    } -> tensor<?x?xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %relu into %o[%i, %j] [%m, %n] [1, 1] : tensor<?x?xf32> into tensor<250x500xf32>
    }
  } {mapping = [#gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>]}
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<250x500xf32>, memref<250x500xf32>) -> ()
  return
}

// -----

// Shared memory cannot be initialized: tensor constants become globals in
// device global memory.
// CHECK: memref.global "private" constant @__kiln_constant : memref<4xf32, #gpu.address_space<global>> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// CHECK-LABEL: func.func @constant
// CHECK: memref.get_global @__kiln_constant : memref<4xf32, #gpu.address_space<global>>
func.func @constant(%out: memref<4xf32>) {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  bufferization.materialize_in_destination %c in restrict writable %out : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// tensor.concat is written piecewise into its destination (the result).
// CHECK-LABEL: func.func @concat
// CHECK-NOT: memref.alloc
// CHECK: %[[LHS:.*]] = memref.subview %arg2[0, 0] [2, 3] [1, 1]
// CHECK: linalg.copy ins(%arg0 {{.*}} outs(%[[LHS]]
// CHECK: %[[RHS:.*]] = memref.subview %arg2[0, 3] [2, 2] [1, 1]
// CHECK: linalg.copy ins(%arg1 {{.*}} outs(%[[RHS]]
func.func @concat(%a: memref<2x3xf32>, %b: memref<2x2xf32>, %out: memref<2x5xf32>) {
  %ta = bufferization.to_tensor %a restrict : memref<2x3xf32> to tensor<2x3xf32>
  %tb = bufferization.to_tensor %b restrict : memref<2x2xf32> to tensor<2x2xf32>
  %c = tensor.concat dim(1) %ta, %tb : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  bufferization.materialize_in_destination %c in restrict writable %out : (tensor<2x5xf32>, memref<2x5xf32>) -> ()
  return
}

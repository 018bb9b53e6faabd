// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kiln-host-tile-and-distribute,canonicalize,cse))' | FileCheck %s

// The bias+relu generic producing the result is tiled 8x12 over workgroups;
// the fill and the matmul are fused into the tile (full reduction loop).
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<64x48xf32>
// CHECK: %[[R:.+]] = scf.forall (%[[I:.+]], %[[J:.+]]) = (0, 0) to (64, 48) step (8, 12) shared_outs(%[[OUT:.+]] = %[[EMPTY]])
// CHECK:   %[[A:.+]] = tensor.extract_slice %{{.+}}[%[[I]], 0] [8, 32] [1, 1]
// CHECK:   %[[B:.+]] = tensor.extract_slice %{{.+}}[0, %[[J]]] [32, 12] [1, 1]
// CHECK:   %[[FILL:.+]] = linalg.fill {{.+}} -> tensor<8x12xf32>
// CHECK:   %[[MM:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<8x32xf32>, tensor<32x12xf32>) outs(%[[FILL]] : tensor<8x12xf32>)
// CHECK:   %[[T:.+]] = linalg.generic {{.+}} ins(%[[MM]], %{{.+}} : tensor<8x12xf32>, tensor<12xf32>)
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[T]] into %[[OUT]][%[[I]], %[[J]]] [8, 12] [1, 1]
// CHECK: } {mapping = [#gpu.block<y>, #gpu.block<x>]}
// CHECK-NOT: linalg.matmul
// CHECK: return %[[R]]
func.func @matmul_bias_relu(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %bias: tensor<48xf32>) -> tensor<64x48xf32>
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = matmul, tile_sizes = [8, 12], workgroup_count = [4, 8, 1]>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<64x48xf32>, tensor<48xf32>) outs(%e : tensor<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

// -----

// A single tiled loop maps to x.
// CHECK-LABEL: func.func @rows
// CHECK: scf.forall (%{{.+}}) = (0) to (1024) step (4)
// CHECK:   linalg.reduce ins(%{{.+}} : tensor<4x1024xf32>)
// CHECK: } {mapping = [#gpu.block<x>]}
func.func @rows(%a: tensor<1024x1024xf32>) -> tensor<1024xf32>
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = reduction, tile_sizes = [4, 0], workgroup_count = [256, 1, 1]>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %r = linalg.reduce ins(%a : tensor<1024x1024xf32>) outs(%f : tensor<1024xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<1024xf32>
}

// -----

// One-workgroup strategies leave the kernel untouched.
// CHECK-LABEL: func.func @single
// CHECK-NOT: scf.forall
// CHECK: linalg.add
func.func @single(%a: tensor<4xf32>) -> tensor<4xf32>
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = elementwise, workgroup_count = [1, 1, 1]>} {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// expected-error @+1 {{kernel 'no_strategy' has no kiln.host_strategy (a #kiln.host_strategy); run kiln-host-select-strategy first}}
func.func @no_strategy(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{the strategy's tile sizes do not match the op producing the kernel result}}
func.func @mismatch(%a: tensor<4xf32>) -> tensor<4xf32>
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = elementwise, tile_sizes = [2, 2], workgroup_count = [1, 1, 1]>} {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// RUN: kiln-opt %s --split-input-file --kiln-gpu-tile-to-workgroups --verify-diagnostics | FileCheck %s

// The result op is tiled by `workgroup_tile` into a forall over workgroups,
// linearized onto the grid's x dimension (linear_dim_0: innermost tiled
// loop); the matmul and its fill are fused into each tile.
// CHECK-LABEL: func.func @matmul_relu
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]]) = (0, 0) to (250, 500) step (16, 16)
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: scf.forall.in_parallel
// CHECK: } {mapping = [#gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>]}
func.func @matmul_relu(%a: tensor<250x128xf32>, %b: tensor<128x500xf32>) -> tensor<250x500xf32>
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = matmul, workgroup_size = 256, subgroup_size = 32, workgroup_tile = [16, 16]>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<250x500xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<250x500xf32>) -> tensor<250x500xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<250x128xf32>, tensor<128x500xf32>) outs(%f : tensor<250x500xf32>) -> tensor<250x500xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<250x500xf32>) outs(%e : tensor<250x500xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<250x500xf32>
  return %r : tensor<250x500xf32>
}

// -----

// An empty tile list: one workgroup, nothing to tile.
// CHECK-LABEL: func.func @single
// CHECK-NOT: scf.forall
func.func @single(%a: tensor<4xf32>) -> tensor<4xf32>
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = single, workgroup_size = 128, subgroup_size = 32>} {
  return %a : tensor<4xf32>
}

// -----

// expected-error @below {{kernel 'no_strategy' has no kiln.gpu_strategy (a #kiln.gpu_strategy); run kiln-gpu-select-strategy first}}
func.func @no_strategy(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

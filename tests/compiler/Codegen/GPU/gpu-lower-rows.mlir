// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-rows --verify-diagnostics | FileCheck %s
// kiln-gpu-lower-rows alone: a row-fused workgroup whose rows fit the
// registers is lowered as a whole; anything else is left for
// kiln-gpu-lower-workgroup-reductions and kiln-gpu-distribute-to-threads
// (whose behaviour with all three passes is in gpu-distribute-to-threads.mlir).

// A row max and a scale by it, one row of 1024 f32 over 128 threads: no
// linalg op is left; every thread loads its two chunks once.
// CHECK-LABEL: func.func @row_scale
// CHECK-COUNT-2: vector.load %arg0
// CHECK-NOT: vector.load
// CHECK: gpu.subgroup_reduce maxnumf
// CHECK: vector.store
// CHECK-NOT: linalg.
// CHECK: return
func.func @row_scale(%in: memref<1x1024xf32>, %out: memref<1x1024xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, thread_tile = 4, reduction = workgroup, reduction_vector = 4>} {
  %ninf = arith.constant 0xFFC00000 : f32
  %max = memref.alloc() : memref<1xf32, #gpu.address_space<workgroup>>
  linalg.fill ins(%ninf : f32) outs(%max : memref<1xf32, #gpu.address_space<workgroup>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<1x1024xf32>) outs(%max : memref<1xf32, #gpu.address_space<workgroup>>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maxnumf %x, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%in, %max : memref<1x1024xf32>, memref<1xf32, #gpu.address_space<workgroup>>) outs(%out : memref<1x1024xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %y = arith.divf %x, %m : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// Not a workgroup reduction strategy ("thread"): left as it is.
// CHECK-LABEL: func.func @thread_strategy
// CHECK: linalg.generic
// CHECK-NOT: gpu.subgroup_reduce
func.func @thread_strategy(%in: memref<1x1024xf32>, %out: memref<1xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, reduction = thread>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<1x1024xf32>) outs(%out : memref<1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row too long for the registers (8192 f32 over 32 threads held from one
// reduction to the next): left as it is, for the op-by-op lowering.
// CHECK-LABEL: func.func @row_too_long
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: gpu.subgroup_reduce
func.func @row_too_long(%in: memref<1x8192xf32>, %out: memref<1xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 32, subgroup_size = 32, thread_tile = 4, reduction = workgroup, reduction_vector = 4>} {
  %ninf = arith.constant 0xFFC00000 : f32
  %zero = arith.constant 0.0 : f32
  %max = memref.alloc() : memref<1xf32, #gpu.address_space<workgroup>>
  linalg.fill ins(%ninf : f32) outs(%max : memref<1xf32, #gpu.address_space<workgroup>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<1x8192xf32>) outs(%max : memref<1xf32, #gpu.address_space<workgroup>>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maxnumf %x, %acc : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%out : memref<1xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in, %max : memref<1x8192xf32>, memref<1xf32, #gpu.address_space<workgroup>>) outs(%out : memref<1xf32>) {
  ^bb0(%x: f32, %m: f32, %acc: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// expected-error @+1 {{kernel 'no_strategy' has no kiln.gpu_strategy (a #kiln.gpu_strategy); run kiln-gpu-select-strategy first}}
func.func @no_strategy(%in: memref<4xf32>, %out: memref<4xf32>) {
  linalg.copy ins(%in : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

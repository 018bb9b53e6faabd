// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-workgroup-reductions --verify-diagnostics | FileCheck %s
// kiln-gpu-lower-workgroup-reductions alone: innermost reductions with at
// least as many elements per output as threads become cooperative
// reductions; every other op is left for kiln-gpu-distribute-to-threads.

// A row sum (3000 elements per row, 256 threads) followed by an elementwise
// op: the reduction becomes subgroup reductions and shared slots, with a
// barrier before the elementwise op, which stays a linalg op.
// CHECK-LABEL: func.func @row_sum_then_scale
// CHECK: gpu.subgroup_reduce add
// CHECK: gpu.barrier
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel"]
func.func @row_sum_then_scale(%in: memref<2x3000xf32>, %sum: memref<2xf32>, %out: memref<2xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 32, reduction = workgroup>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<2x3000xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sum : memref<2xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// Fewer elements per output (100) than threads (256): left to the
// distribution (each thread reduces serially).
// CHECK-LABEL: func.func @short_rows
// CHECK: linalg.generic
// CHECK-NOT: gpu.subgroup_reduce
func.func @short_rows(%in: memref<2x100xf32>, %out: memref<2xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 32, reduction = workgroup>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<2x100xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The "thread" strategy: nothing to do here.
// CHECK-LABEL: func.func @thread_strategy
// CHECK: linalg.generic
// CHECK-NOT: gpu.subgroup_reduce
func.func @thread_strategy(%in: memref<2x3000xf32>, %out: memref<2xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 32, reduction = thread>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<2x3000xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

func.func @tensors(%in: tensor<2x3000xf32>, %out: tensor<2xf32>) -> tensor<2xf32>
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 32, reduction = workgroup>} {
  // expected-error @+1 {{expected a bufferized op; run kiln-gpu-bufferize first}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : tensor<2x3000xf32>) outs(%out : tensor<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}

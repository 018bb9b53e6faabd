// The three passes that spread a workgroup's ops over its threads, in
// pipeline order: kiln-gpu-lower-rows (row-fused workgroups whose rows fit
// registers), kiln-gpu-lower-workgroup-reductions (cooperative reductions),
// kiln-gpu-distribute-to-threads (everything else).
// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-rows --kiln-gpu-lower-workgroup-reductions --kiln-gpu-distribute-to-threads | FileCheck %s

// Each op of the workgroup is spread over the threads (one output element,
// or a 4-element innermost chunk with thread_tile = 4, per iteration); a
// barrier separates two ops, since the second reads what other threads
// wrote in the first.
// CHECK-LABEL: func.func @two_ops
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (16, 64) step (1, 4) {
// CHECK:   linalg.fill {{.*}} outs(%{{.*}} : memref<1x4xf32
// CHECK: } {mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>]}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (16, 64) step (1, 4) {
// CHECK:   linalg.generic {{.*}} outs(%{{.*}} : memref<1x4xf32
// CHECK: } {mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>]}
// CHECK-NEXT: return
func.func @two_ops(%in: memref<16x64xf32>, %out: memref<16x64xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = elementwise, workgroup_size = 256, subgroup_size = 32, thread_tile = 4>} {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<16x64xf32, #gpu.address_space<workgroup>>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<16x64xf32, #gpu.address_space<workgroup>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%in, %tmp : memref<16x64xf32>, memref<16x64xf32, #gpu.address_space<workgroup>>) outs(%out : memref<16x64xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %s = arith.addf %x, %t : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Serial reduction per thread ("thread" strategy): only the parallel loop
// is distributed, each thread reduces its whole column.
// CHECK-LABEL: func.func @column_sum
// CHECK: scf.forall (%[[J:.*]]) in (256) {
// CHECK:   linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : memref<512x1xf32
// CHECK: } {mapping = [#gpu.thread<linear_dim_0>]}
func.func @column_sum(%in: memref<512x256xf32>, %out: memref<256xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 32, reduction = thread>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%in : memref<512x256xf32>) outs(%out : memref<256xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The "workgroup" strategy: all threads reduce each row together. Thread t
// folds elements t, t+256, ... (the op's own body, starting at the neutral
// element of its combiner), the partials go to workgroup memory, and a tree
// with a barrier per step combines them (subgroups of one lane here: no
// shuffles); thread 0 folds the total into the output.
// CHECK-LABEL: func.func @row_max
// CHECK-DAG: %[[NEUTRAL:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SHARED:.*]] = memref.alloc() : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[TID:.*]] = gpu.thread_id x
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK:   %[[PARTIAL:.*]] = scf.for %{{.*}} = %[[TID]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[NEUTRAL]]) -> (f32) {
// CHECK:     memref.load
// CHECK:     arith.maximumf %{{.*}}, %[[ACC]] : f32
// CHECK:   memref.store %[[PARTIAL]], %[[SHARED]][%[[TID]]]
// CHECK:   gpu.barrier
// CHECK:   arith.constant 128 : index
// CHECK:   scf.if
// CHECK:     arith.maximumf
// CHECK:   gpu.barrier
// CHECK:   arith.constant 1 : index
// CHECK:   scf.if
// CHECK:     arith.maximumf
// CHECK:   gpu.barrier
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[TID]]
// CHECK:   scf.if %[[FIRST]] {
// CHECK:     %[[OLD:.*]] = memref.load %arg1
// CHECK:     %[[TOTAL:.*]] = memref.load %[[SHARED]]
// CHECK:     %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[TOTAL]] : f32
// CHECK:     memref.store %[[NEW]], %arg1
func.func @row_max(%in: memref<2x3000xf32>, %out: memref<2xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 1, reduction = workgroup>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<2x3000xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// An op without parallel loops runs on thread 0.
// CHECK-LABEL: func.func @scalar_fill
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]]
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: linalg.fill
func.func @scalar_fill(%out: memref<f32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = single, workgroup_size = 64, subgroup_size = 32>} {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%out : memref<f32>)
  return
}

// -----

// With the subgroup size known and a combiner gpu.subgroup_reduce has, the
// partials are reduced across each subgroup's lanes, lane 0 of each of the
// 8 subgroups stores its total to workgroup memory, and after one barrier
// thread 0 combines the 8 totals into the output; a barrier follows each
// row, since the slots are written again for the next one.
// CHECK-LABEL: func.func @row_sum_subgroups
// CHECK-DAG: %[[SHARED:.*]] = memref.alloc() : memref<8xf32, #gpu.address_space<workgroup>>
// CHECK:     scf.for
// CHECK:       %[[PARTIAL:.*]] = scf.for
// CHECK:       %[[TOTAL:.*]] = gpu.subgroup_reduce add %[[PARTIAL]] uniform : (f32) -> f32
// CHECK:       %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK:       %[[SG:.*]] = arith.divui %{{.*}}, %c32
// CHECK:       scf.if
// CHECK-NEXT:    memref.store %[[TOTAL]], %[[SHARED]][%[[SG]]]
// CHECK:       gpu.barrier
// CHECK:       scf.if
// CHECK-COUNT-8: memref.load %[[SHARED]]
// CHECK:         memref.store
// CHECK:       gpu.barrier
// CHECK-NOT:   gpu.subgroup_reduce
func.func @row_sum_subgroups(%in: memref<2x3000xf32>, %out: memref<2xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 32, reduction = workgroup>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<2x3000xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// f64 sums have no one-step subgroup reduction: the shared-memory tree.
// CHECK-LABEL: func.func @row_sum_f64_tree
// CHECK: memref.alloc() : memref<256xf64, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.subgroup_reduce
func.func @row_sum_f64_tree(%in: memref<2x3000xf64>, %out: memref<2xf64>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 32, reduction = workgroup>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<2x3000xf64>) outs(%out : memref<2xf64>) {
  ^bb0(%x: f64, %acc: f64):
    %s = arith.addf %x, %acc : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// reduction_vector = 4 with a row of 4096 = 4 steps of 4 chunks of 256 x 4:
// thread t reads elements 4t .. 4t + 3 of each chunk with one vector load
// per chunk (all four loaded before any is reduced) and the row value
// (broadcast along the row) with one scalar load, runs the body on the
// sixteen elements in order, then steps 4096 elements on.
// CHECK-LABEL: func.func @row_chunks
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[START:.*]] = arith.muli %[[TID]], %c4
// CHECK: scf.for %[[K:.*]] = %[[START]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] =
// CHECK:   %[[V0:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<2x4096xf32>, vector<4xf32>
// CHECK:   %[[M:.*]] = memref.load %arg1[
// CHECK:   %[[V1:.*]] = vector.load %arg0
// CHECK:   %[[V2:.*]] = vector.load %arg0
// CHECK:   %[[V3:.*]] = vector.load %arg0
// CHECK-NOT: memref.load %arg1
// CHECK:   %[[E0:.*]] = vector.extract %[[V0]][0]
// CHECK:   %[[D0:.*]] = arith.subf %[[E0]], %[[M]]
// CHECK:   %[[S0:.*]] = arith.addf %[[D0]], %[[ACC]]
// CHECK:   vector.extract %[[V1]][0]
// CHECK:   vector.extract %[[V2]][0]
// CHECK:   %[[E3:.*]] = vector.extract %[[V3]][3]
// CHECK:   %[[D3:.*]] = arith.subf %[[E3]], %[[M]]
// CHECK:   %[[S3:.*]] = arith.addf %[[D3]], %{{.*}}
// CHECK:   scf.yield %[[S3]] : f32
// CHECK: gpu.subgroup_reduce add
func.func @row_chunks(%in: memref<2x4096xf32>, %max: memref<2xf32>, %out: memref<2xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 32, reduction = workgroup, reduction_vector = 4>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in, %max : memref<2x4096xf32>, memref<2xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %m: f32, %acc: f32):
    %d = arith.subf %x, %m : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row of 1000 does not split into 256 x 4 chunks: scalar loads.
// CHECK-LABEL: func.func @row_not_chunked
// CHECK-NOT: vector.load
// CHECK: gpu.subgroup_reduce add
func.func @row_not_chunked(%in: memref<2x1000xf32>, %out: memref<2xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 256, subgroup_size = 32, reduction = workgroup, reduction_vector = 4>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<2x1000xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// "subgroup" rows: the workgroup's tile has 4 rows, one per subgroup of 32
// lanes; each lane strides over its subgroup's row, the subgroup reduces
// across lanes, and lane 0 folds the total into the row's output. No shared
// memory and no barrier inside the reduction.
// CHECK-LABEL: func.func @subgroup_rows
// CHECK-NOT: memref.alloc
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// CHECK: %[[ROW:.*]] = arith.divui %[[TID]], %c32
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:   %[[R:.*]] = affine.apply #{{.*}}(%[[ROW]], %{{.*}})
// CHECK:   vector.load %arg0[%[[R]], %{{.*}}] : memref<4x512xf32>, vector<4xf32>
// CHECK: %[[TOTAL:.*]] = gpu.subgroup_reduce add
// CHECK: %[[LEAD:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: scf.if %[[LEAD]]
// CHECK:   memref.load %arg1[%{{.*}}]
// CHECK:   memref.store %{{.*}}, %arg1[%{{.*}}]
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @subgroup_rows(%in: memref<4x512xf32>, %out: memref<4xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, reduction = subgroup, reduction_vector = 4>} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<4x512xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows in registers: a row-fused softmax (max, exp-sum, divide) whose row
// of 1024 f32 fits 128 threads' registers (two chunks of 4 per thread) is
// lowered as a whole. Each thread loads its chunks once, before the first
// reduction; the max and the sum are values every thread holds (subgroup
// reduction, then the subgroups' totals through shared slots, one barrier
// per reduction); exp(x - max) is not recomputed from memory, and the
// workgroup temporaries are never stored.
// CHECK-LABEL: func.func @softmax_row_in_registers
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[START:.*]] = arith.muli %[[TID]], %c4
// CHECK: %[[START1:.*]] = arith.addi %[[START]], %c512
// CHECK: %[[X0:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<1x1024xf32, strided<[1024, 1], offset: ?>>, vector<4xf32>
// CHECK: %[[X1:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<1x1024xf32, strided<[1024, 1], offset: ?>>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK: %[[MAXLANES:.*]] = gpu.subgroup_reduce maxnumf
// CHECK: %[[MSLOTS:.*]] = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %[[MAXLANES]], %[[MSLOTS]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load %[[MSLOTS]]
// CHECK: %[[SUMLANES:.*]] = gpu.subgroup_reduce add
// CHECK: %[[SSLOTS:.*]] = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %[[SUMLANES]], %[[SSLOTS]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load %[[SSLOTS]]
// CHECK-NOT: gpu.barrier
// CHECK-NOT: vector.load
// CHECK: %[[Y0:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: vector.store %[[Y0]], %arg1[%{{.*}}, %{{.*}}]
// CHECK: %[[Y1:.*]] = vector.from_elements
// CHECK: vector.store %[[Y1]], %arg1
// CHECK-NOT: memref.store
// CHECK: return
func.func @softmax_row_in_registers(%in: memref<1x1024xf32, strided<[1024, 1], offset: ?>>, %out: memref<1x1024xf32, strided<[1024, 1], offset: ?>>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, thread_tile = 4, reduction = workgroup, reduction_vector = 4>} {
  %ninf = arith.constant 0xFFC00000 : f32
  %zero = arith.constant 0.0 : f32
  %max = memref.alloc() : memref<1xf32, #gpu.address_space<workgroup>>
  linalg.fill ins(%ninf : f32) outs(%max : memref<1xf32, #gpu.address_space<workgroup>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<1x1024xf32, strided<[1024, 1], offset: ?>>) outs(%max : memref<1xf32, #gpu.address_space<workgroup>>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maxnumf %x, %acc : f32
    linalg.yield %m : f32
  }
  %sum = memref.alloc() : memref<1xf32, #gpu.address_space<workgroup>>
  linalg.fill ins(%zero : f32) outs(%sum : memref<1xf32, #gpu.address_space<workgroup>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in, %max : memref<1x1024xf32, strided<[1024, 1], offset: ?>>, memref<1xf32, #gpu.address_space<workgroup>>) outs(%sum : memref<1xf32, #gpu.address_space<workgroup>>) {
  ^bb0(%x: f32, %m: f32, %acc: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%in, %max, %sum : memref<1x1024xf32, strided<[1024, 1], offset: ?>>, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32, #gpu.address_space<workgroup>>) outs(%out : memref<1x1024xf32, strided<[1024, 1], offset: ?>>) {
  ^bb0(%x: f32, %m: f32, %s: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    %y = arith.divf %e, %s : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// Rows in registers, one row per subgroup: a layernorm-like workgroup with
// per-row scalar ops (a fill, a copy, the mean) between its reductions and
// a row vector (gamma) read along the row. The subgroup's lanes reduce
// without shared memory or barriers; the mean is computed by every lane.
// CHECK-LABEL: func.func @rows_per_subgroup_scalars
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// CHECK: %[[ROW:.*]] = arith.divui %[[TID]], %c32
// CHECK: %[[LEAD:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: %[[R:.*]] = affine.apply #{{.*}}(%[[ROW]], %{{.*}})
// CHECK: vector.load %arg0[%[[R]], %{{.*}}] : memref<4x256xf16>, vector<8xf16>
// CHECK-NOT: vector.load %arg0
// CHECK: gpu.subgroup_reduce add
// CHECK: arith.mulf %{{.*}}, %cst
// CHECK: scf.if %[[LEAD]]
// CHECK:   memref.store %cst{{.*}}, %arg3[%{{.*}}] : memref<4xf32>
// CHECK: %[[VAR:.*]] = gpu.subgroup_reduce add
// CHECK: %[[NEW:.*]] = arith.addf %cst{{.*}}, %[[VAR]]
// CHECK: scf.if %[[LEAD]]
// CHECK:   memref.store %[[NEW]], %arg3[%{{.*}}] : memref<4xf32>
// CHECK: vector.load %arg1[%{{.*}}] : memref<256xf16>, vector<8xf16>
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<4x256xf16>, vector<8xf16>
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @rows_per_subgroup_scalars(%in: memref<4x256xf16>, %gamma: memref<256xf16>, %out: memref<4x256xf16>, %variance: memref<4xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, thread_tile = 8, reduction = subgroup, reduction_vector = 8>} {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 3.906250e-03 : f32
  %acc = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
  linalg.fill ins(%zero : f32) outs(%acc : memref<4xf32, #gpu.address_space<workgroup>>)
  %sum = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
  linalg.copy ins(%acc : memref<4xf32, #gpu.address_space<workgroup>>) outs(%sum : memref<4xf32, #gpu.address_space<workgroup>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<4x256xf16>) outs(%sum : memref<4xf32, #gpu.address_space<workgroup>>) {
  ^bb0(%x: f16, %a: f32):
    %w = arith.extf %x : f16 to f32
    %s = arith.addf %w, %a : f32
    linalg.yield %s : f32
  }
  %mean = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sum : memref<4xf32, #gpu.address_space<workgroup>>) outs(%mean : memref<4xf32, #gpu.address_space<workgroup>>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%variance : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in, %mean : memref<4x256xf16>, memref<4xf32, #gpu.address_space<workgroup>>) outs(%variance : memref<4xf32>) {
  ^bb0(%x: f16, %m: f32, %a: f32):
    %w = arith.extf %x : f16 to f32
    %d = arith.subf %w, %m : f32
    %q = arith.mulf %d, %d : f32
    %s = arith.addf %q, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%in, %mean, %gamma : memref<4x256xf16>, memref<4xf32, #gpu.address_space<workgroup>>, memref<256xf16>) outs(%out : memref<4x256xf16>) {
  ^bb0(%x: f16, %m: f32, %g: f16, %o: f16):
    %w = arith.extf %x : f16 to f32
    %d = arith.subf %w, %m : f32
    %gw = arith.extf %g : f16 to f32
    %y = arith.mulf %d, %gw : f32
    %t = arith.truncf %y : f32 to f16
    linalg.yield %t : f16
  }
  return
}

// -----

// A row too long for the registers (8192 f32 over 32 threads, held from the
// max to the sum: 256 registers a thread) keeps the op-by-op lowering: each
// reduction loops over the row from memory, a barrier between the ops.
// CHECK-LABEL: func.func @row_too_long_for_registers
// CHECK: scf.for
// CHECK: gpu.subgroup_reduce maxnumf
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: gpu.subgroup_reduce add
func.func @row_too_long_for_registers(%in: memref<1x8192xf32>, %out: memref<1xf32>)
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

// Rows in registers: a row temporary that one op writes and a later op
// reduces stays in registers; the workgroup buffer is never stored to or
// loaded from.
// CHECK-LABEL: func.func @row_temporary_in_registers
// CHECK: %[[T:.*]] = memref.alloc() : memref<1x512xf32, #gpu.address_space<workgroup>>
// CHECK: vector.load %arg0
// CHECK-NOT: %[[T]]
// CHECK: gpu.subgroup_reduce add
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK:   memref.store %{{.*}}, %arg1[%{{.*}}] : memref<1xf32>
// CHECK-NOT: %[[T]]
// CHECK: return
func.func @row_temporary_in_registers(%in: memref<1x512xf32>, %out: memref<1xf32>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 128, subgroup_size = 32, thread_tile = 4, reduction = workgroup, reduction_vector = 4>} {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<1x512xf32, #gpu.address_space<workgroup>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<1x512xf32>) outs(%t : memref<1x512xf32, #gpu.address_space<workgroup>>) {
  ^bb0(%x: f32, %o: f32):
    %q = arith.mulf %x, %x : f32
    linalg.yield %q : f32
  }
  linalg.fill ins(%zero : f32) outs(%out : memref<1xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%t : memref<1x512xf32, #gpu.address_space<workgroup>>) outs(%out : memref<1xf32>) {
  ^bb0(%q: f32, %acc: f32):
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  }
  return
}

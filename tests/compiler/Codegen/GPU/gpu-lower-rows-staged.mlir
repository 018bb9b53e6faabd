// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-rows="processor-registers=65536 processor-threads=2048 processor-shared-memory-bytes=233472 max-shared-memory-bytes=232448" | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-rows="stage-rows=never processor-registers=65536 processor-threads=2048 processor-shared-memory-bytes=233472 max-shared-memory-bytes=232448" | FileCheck %s --check-prefixes=CHECK,NEVER
// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-rows="stage-rows=always processor-registers=65536 processor-threads=2048 processor-shared-memory-bytes=233472 max-shared-memory-bytes=232448" | FileCheck %s --check-prefixes=CHECK,ALWAYS
// RUN: kiln-opt %s --split-input-file --kiln-gpu-lower-rows="processor-registers=131072 processor-threads=2048 processor-shared-memory-bytes=65536 max-shared-memory-bytes=65536" | FileCheck %s --check-prefixes=CHECK,CDNA
// RUN: not kiln-opt %s --split-input-file --kiln-gpu-lower-rows="stage-rows=sometimes" 2>&1 | FileCheck %s --check-prefix=BAD
// Rows staged in shared memory (kiln-gpu-lower-rows): a row that several
// ops read stays in registers unless that leaves one workgroup per SM / CU
// and shared memory holds it for at least two.

// Softmax over a row of 32768 f16 on 512 threads (64 values a thread, as
// f32 96 registers with the working set: one workgroup per H100/H200 SM).
// Staged (auto, always): the max loads the row from memory once and stores
// each chunk into a 64 KiB workgroup buffer at the thread's slot; the sum
// and the output read their chunks back from it; three workgroups per SM
// (64 KiB + slots each of 228 KiB). In registers (never; CDNA, whose 64 KiB
// of LDS cannot hold the row next to the reductions' slots): the row is
// loaded once and nothing is stored to shared memory but the slots.
// CHECK-LABEL: func.func @softmax_long_f16
// AUTO-SAME:   kiln.min_workgroups_per_processor = 3
// ALWAYS-SAME: kiln.min_workgroups_per_processor = 3
// NEVER-NOT:   kiln.min_workgroups_per_processor
// CDNA-NOT:    kiln.min_workgroups_per_processor
// NEVER-NOT:   memref<32768xf16
// CDNA-NOT:    memref<32768xf16
// CHECK:       gpu.thread_id x
// AUTO:        %[[ROW:.*]] = memref.alloc() : memref<32768xf16, #gpu.address_space<workgroup>>
// ALWAYS:      %[[ROW:.*]] = memref.alloc() : memref<32768xf16, #gpu.address_space<workgroup>>
// AUTO:           %[[C0:.*]] = vector.load %arg0{{.*}}vector<8xf16>
// AUTO:           vector.store %[[C0]], %[[ROW]]
// AUTO:           %[[C1:.*]] = vector.load %arg0{{.*}}vector<8xf16>
// AUTO:           vector.store %[[C1]], %[[ROW]]
// AUTO:           %[[C2:.*]] = vector.load %arg0{{.*}}vector<8xf16>
// AUTO:           vector.store %[[C2]], %[[ROW]]
// AUTO:           %[[C3:.*]] = vector.load %arg0{{.*}}vector<8xf16>
// AUTO:           vector.store %[[C3]], %[[ROW]]
// AUTO:           %[[C4:.*]] = vector.load %arg0{{.*}}vector<8xf16>
// AUTO:           vector.store %[[C4]], %[[ROW]]
// AUTO:           %[[C5:.*]] = vector.load %arg0{{.*}}vector<8xf16>
// AUTO:           vector.store %[[C5]], %[[ROW]]
// AUTO:           %[[C6:.*]] = vector.load %arg0{{.*}}vector<8xf16>
// AUTO:           vector.store %[[C6]], %[[ROW]]
// AUTO:           %[[C7:.*]] = vector.load %arg0{{.*}}vector<8xf16>
// AUTO:           vector.store %[[C7]], %[[ROW]]
// AUTO-NOT:       vector.load %arg0
// AUTO:           gpu.subgroup_reduce maxnumf
// AUTO-COUNT-8:   vector.load %[[ROW]]
// AUTO:           gpu.subgroup_reduce add
// AUTO-COUNT-8:   vector.load %[[ROW]]
// AUTO-NOT:       vector.load %arg0
// AUTO-COUNT-8:   vector.store %{{.*}}, %arg1
// NEVER-COUNT-8:  vector.load %arg0{{.*}}vector<8xf16>
// NEVER-NOT:      vector.load
// CDNA-COUNT-8:   vector.load %arg0{{.*}}vector<8xf16>
// CDNA-NOT:       vector.load
// CHECK-NOT:   linalg.
// CHECK:       return
func.func @softmax_long_f16(%in: memref<1x32768xf16>, %out: memref<1x32768xf16>)
    attributes {kiln.gpu_strategy = #kiln.gpu_strategy<kind = reduction, workgroup_size = 512, subgroup_size = 32, thread_tile = 8, reduction = workgroup, reduction_vector = 8>} {
  %ninf = arith.constant 0xFFC00000 : f32
  %zero = arith.constant 0.0 : f32
  %max = memref.alloc() : memref<1xf32, #gpu.address_space<workgroup>>
  linalg.fill ins(%ninf : f32) outs(%max : memref<1xf32, #gpu.address_space<workgroup>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<1x32768xf16>) outs(%max : memref<1xf32, #gpu.address_space<workgroup>>) {
  ^bb0(%x: f16, %acc: f32):
    %w = arith.extf %x : f16 to f32
    %m = arith.maxnumf %w, %acc : f32
    linalg.yield %m : f32
  }
  %sum = memref.alloc() : memref<1xf32, #gpu.address_space<workgroup>>
  linalg.fill ins(%zero : f32) outs(%sum : memref<1xf32, #gpu.address_space<workgroup>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%in, %max : memref<1x32768xf16>, memref<1xf32, #gpu.address_space<workgroup>>) outs(%sum : memref<1xf32, #gpu.address_space<workgroup>>) {
  ^bb0(%x: f16, %m: f32, %acc: f32):
    %w = arith.extf %x : f16 to f32
    %d = arith.subf %w, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%in, %max, %sum : memref<1x32768xf16>, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32, #gpu.address_space<workgroup>>) outs(%out : memref<1x32768xf16>) {
  ^bb0(%x: f16, %m: f32, %s: f32, %o: f16):
    %w = arith.extf %x : f16 to f32
    %d = arith.subf %w, %m : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %s : f32
    %t = arith.truncf %q : f32 to f16
    linalg.yield %t : f16
  }
  return
}

// -----

// A row max and a scale by it over a row of 1024 f32 on 128 threads (8
// values a thread): many workgroups fit an SM in registers, so auto keeps
// the row there; always stages it (4 KiB), budgeting 12 workgroups of 128
// threads (40 registers each).
// CHECK-LABEL: func.func @row_scale
// AUTO-NOT:    kiln.min_workgroups_per_processor
// NEVER-NOT:   kiln.min_workgroups_per_processor
// ALWAYS-SAME: kiln.min_workgroups_per_processor = 12
// AUTO-NOT:    memref<1024xf32
// ALWAYS:      %[[ROW:.*]] = memref.alloc() : memref<1024xf32, #gpu.address_space<workgroup>>
// ALWAYS:      %[[C0:.*]] = vector.load %arg0
// ALWAYS:      vector.store %[[C0]], %[[ROW]]
// ALWAYS:      %[[C1:.*]] = vector.load %arg0
// ALWAYS:      vector.store %[[C1]], %[[ROW]]
// ALWAYS:      gpu.subgroup_reduce maxnumf
// ALWAYS-COUNT-2: vector.load %[[ROW]]
// CHECK:       return
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

// BAD: error: kiln-gpu-lower-rows: stage-rows must be auto, always or never, not 'sometimes'

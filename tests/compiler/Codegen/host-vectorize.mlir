// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-host-vectorize | FileCheck %s

// The root matmul gets the strategy's 4x8x1 register tile: M and N loops
// around the K loop, one vector.contract per K step (kiln-host-lower-vectors
// keeps the accumulators in registers). The fill gets one 128-bit register
// (4 x f32) along its innermost loop.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: scf.for
// CHECK:   scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C4]]
// CHECK:     vector.transfer_write %{{.+}} : vector<1x4xf32>, memref<1x4xf32
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %[[C4]]
// CHECK:   scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %[[C8]]
// CHECK:     scf.for %[[K:.+]] = %{{.+}} to %[[C64]] step
// CHECK-DAG:   %[[A:.+]] = memref.subview %{{.+}}[%[[I]], %[[K]]] [4, 1] [1, 1]
// CHECK-DAG:   %[[B:.+]] = memref.subview %{{.+}}[%[[K]], %[[J]]] [1, 8] [1, 1]
// CHECK-DAG:   %[[C:.+]] = memref.subview %{{.+}}[%[[I]], %[[J]]] [4, 8] [1, 1]
// CHECK-DAG:   %[[LHS:.+]] = vector.transfer_read %[[A]]{{.+}} vector<4x1xf32>
// CHECK-DAG:   %[[RHS:.+]] = vector.transfer_read %[[B]]{{.+}} vector<1x8xf32>
// CHECK-DAG:   %[[ACC:.+]] = vector.transfer_read %[[C]]{{.+}} vector<4x8xf32>
// CHECK:       %[[R:.+]] = vector.contract {{.+}} %[[LHS]], %[[RHS]], %[[ACC]] : vector<4x1xf32>, vector<1x8xf32> into vector<4x8xf32>
// CHECK:       vector.transfer_write %[[R]], %[[C]]
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul(%a: memref<16x64xf32>, %b: memref<64x16xf32>, %c: memref<16x16xf32>)
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = matmul, root = "linalg.matmul", workgroup_count = [1, 1, 1], vector_width = 128, vector_sizes = [4, 8, 1]>} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x16xf32>)
  linalg.matmul ins(%a, %b : memref<16x64xf32>, memref<64x16xf32>) outs(%c : memref<16x16xf32>)
  return
}

// -----

// 37 is no multiple of 4: the register tile loop is peeled, the main loop
// covers 36 columns with vector<1x4xf32>, the last column is a static
// vector<1x1xf32> tile.
// CHECK-LABEL: func.func @partial
// CHECK-DAG: %[[C36:.+]] = arith.constant 36 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: scf.for
// CHECK:   scf.for %[[J:.+]] = %{{.+}} to %[[C36]] step %[[C4]]
// CHECK:     %[[S:.+]] = memref.subview %{{.+}}[%{{.+}}, %[[J]]] [1, 4] [1, 1]
// CHECK:     %[[V:.+]] = vector.transfer_read %[[S]]{{.+}} vector<1x4xf32>
// CHECK:     arith.mulf %[[V]], %[[V]] : vector<1x4xf32>
// CHECK:   %[[ST:.+]] = memref.subview %{{.+}}[%{{.+}}, 36] [1, 1] [1, 1]
// CHECK:   %[[T:.+]] = vector.transfer_read %[[ST]]{{.+}} vector<1x1xf32>
// CHECK:   arith.mulf %[[T]], %[[T]] : vector<1x1xf32>
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @partial(%a: memref<3x37xf32>, %b: memref<3x37xf32>)
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = elementwise, workgroup_count = [1, 1, 1], vector_width = 128>} {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<3x37xf32>) outs(%b : memref<3x37xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// A dynamic extent (a partial workgroup tile): full 256-bit tiles in the
// main loop, the dynamic remainder stays a linalg op (scalar loops later).
// CHECK-LABEL: func.func @dynamic
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK: %[[SPLIT:.+]] = affine.apply
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[SPLIT]] step %[[C8]]
// CHECK:   vector.transfer_read {{.+}} vector<8xf32>
// CHECK:   arith.addf {{.+}} : vector<8xf32>
// CHECK: scf.for %{{.+}} = %[[SPLIT]] to %{{.+}} step %[[C8]]
// CHECK:   linalg.generic
// CHECK:     arith.addf {{.+}} : f32
func.func @dynamic(%a: memref<64xf32>, %b: memref<64xf32>, %n: index)
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = elementwise, workgroup_count = [1, 1, 1], vector_width = 256>} {
  %sa = memref.subview %a[0] [%n] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  %sb = memref.subview %b[0] [%n] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sa : memref<?xf32, strided<[1]>>) outs(%sb : memref<?xf32, strided<[1]>>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %x : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// Reduction along the innermost loop: one vector.multi_reduction per
// register into the output element.
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.for
// CHECK:   scf.for
// CHECK-DAG: %[[V:.+]] = vector.transfer_read {{.+}} : memref<1x4xf32{{.*}}>, vector<1x4xf32>
// CHECK-DAG: %[[A:.+]] = vector.transfer_read {{.+}} : memref<1xf32{{.*}}>, vector<1xf32>
// CHECK:     %[[R:.+]] = vector.multi_reduction <add>, %[[V]], %[[A]] [1] : vector<1x4xf32> to vector<1xf32>
// CHECK:     vector.transfer_write %[[R]]
func.func @row_sum(%a: memref<4x100xf32>, %r: memref<4xf32>)
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = reduction, root = "linalg.reduce", workgroup_count = [1, 1, 1], vector_width = 128, vector_sizes = [1, 4]>} {
  linalg.reduce ins(%a : memref<4x100xf32>) outs(%r : memref<4xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// 16-bit floats are vectorized like the others (8 lanes in 128 bits; their
// arithmetic runs in f32 and kiln-host-expand-small-floats turns the
// conversions into integer vector code); i1 keeps its scalar lowering (i1
// vectors are bit-packed in LLVM while i1 memrefs hold bytes) and is not
// tiled.
// CHECK-LABEL: func.func @not_vectorized
// CHECK: scf.for %{{.*}} step %c8
// CHECK: vector.transfer_read {{.*}} vector<8xf16>
// CHECK: arith.addf {{.*}} : vector<8xf16>
// CHECK: vector.transfer_write
// CHECK: }
// CHECK-NOT: vector.
// CHECK: linalg.copy
func.func @not_vectorized(%a: memref<64xf16>, %b: memref<64xf16>, %p: memref<64xi1>, %q: memref<64xi1>)
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = elementwise, workgroup_count = [1, 1, 1], vector_width = 128>} {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : memref<64xf16>) outs(%b : memref<64xf16>) {
  ^bb0(%x: f16, %o: f16):
    %y = arith.addf %x, %x : f16
    linalg.yield %y : f16
  }
  linalg.copy ins(%p : memref<64xi1>) outs(%q : memref<64xi1>)
  return
}

// -----

// expected-error @+1 {{kernel 'no_strategy' has no kiln.host_strategy with a positive 'vector_width'; run kiln-host-select-strategy first}}
func.func @no_strategy(%a: memref<4xf32>, %b: memref<4xf32>) {
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

// A matmul of f16 operands into f32: the workgroup's operands are widened
// once into 16-byte aligned f32 stack buffers and the register tiles
// multiply those (no conversion in the K loop).
// CHECK-LABEL: func.func @narrow_matmul
// CHECK: %[[AW:.*]] = memref.alloca() {alignment = 16 : i64} : memref<32x64xf32>
// CHECK: arith.extf {{.*}} : vector<1x4xf16> to vector<1x4xf32>
// CHECK: %[[BW:.*]] = memref.alloca() {alignment = 16 : i64} : memref<64x32xf32>
// CHECK: arith.extf {{.*}} : vector<1x4xf16> to vector<1x4xf32>
// CHECK: memref.subview %[[AW]]
// CHECK: memref.subview %[[BW]]
// CHECK-NOT: arith.extf
// CHECK: vector.contract {{.*}} : vector<4x1xf32>, vector<1x8xf32> into vector<4x8xf32>
// CHECK-NOT: linalg.matmul
func.func @narrow_matmul(%a: memref<32x64xf16>, %b: memref<64x32xf16>, %c: memref<32x32xf32>)
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = matmul, root = "linalg.matmul", tile_sizes = [32, 32, 0], workgroup_count = [1, 1, 1], vector_width = 128, vector_sizes = [4, 8, 1]>} {
  linalg.matmul ins(%a, %b : memref<32x64xf16>, memref<64x32xf16>) outs(%c : memref<32x32xf32>)
  return
}

// -----

// A workgroup's 64x64 tile of a 1024^3 f32 matmul: K is blocked by 256, and
// each block of B (rows 4 KiB apart, which alias in the L1 cache) is first
// copied, one row at a time, into a 256x64 buffer on the kernel's stack
// that the register tiles read.
// CHECK-LABEL: func.func @packed_b
// CHECK-DAG:   %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG:   %[[BUF:.+]] = memref.alloca() {alignment = 64 : i64} : memref<256x64xf32>
// CHECK:       scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step %[[C256]]
// CHECK:         scf.for %[[R:.+]] = %{{.+}} to %[[C256]] step
// CHECK:           %[[ROW:.+]] = vector.transfer_read %{{.+}} vector<1x64xf32>
// CHECK:           vector.transfer_write %[[ROW]], %{{.+}} : vector<1x64xf32>, memref<1x64xf32, strided<[64, 1], offset: ?>>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               memref.subview %[[BUF]]
// CHECK:               vector.contract
// CHECK: return
func.func @packed_b(%a: memref<64x1024xf32, strided<[1024, 1], offset: ?>>, %b: memref<1024x64xf32, strided<[1024, 1], offset: ?>>, %c: memref<64x64xf32, strided<[1024, 1], offset: ?>>)
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = matmul, root = "linalg.matmul", workgroup_count = [1, 1, 1], vector_width = 256, vector_sizes = [4, 16, 1]>} {
  linalg.matmul ins(%a, %b : memref<64x1024xf32, strided<[1024, 1], offset: ?>>, memref<1024x64xf32, strided<[1024, 1], offset: ?>>) outs(%c : memref<64x64xf32, strided<[1024, 1], offset: ?>>)
  return
}

// -----

// Rows 1000 floats apart do not alias: B is read where it is.
// CHECK-LABEL: func.func @unpacked_b
// CHECK-NOT:   memref.alloca
// CHECK:       vector.contract
// CHECK: return
func.func @unpacked_b(%a: memref<64x1000xf32, strided<[1000, 1], offset: ?>>, %b: memref<1000x64xf32, strided<[1000, 1], offset: ?>>, %c: memref<64x64xf32, strided<[1000, 1], offset: ?>>)
    attributes {kiln.host_strategy = #kiln.host_strategy<kind = matmul, root = "linalg.matmul", workgroup_count = [1, 1, 1], vector_width = 256, vector_sizes = [4, 16, 1]>} {
  linalg.matmul ins(%a, %b : memref<64x1000xf32, strided<[1000, 1], offset: ?>>, memref<1000x64xf32, strided<[1000, 1], offset: ?>>) outs(%c : memref<64x64xf32, strided<[1000, 1], offset: ?>>)
  return
}

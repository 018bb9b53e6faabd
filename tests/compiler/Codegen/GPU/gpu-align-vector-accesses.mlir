// RUN: kiln-opt %s --kiln-gpu-align-vector-accesses --allow-unregistered-dialect | FileCheck %s

// Offsets provably multiples of 4 elements on a binding: 16-byte aligned.
// tid * 4 (affine.apply), a block offset times 512, a constant 8, loop ivs
// starting at 0 with step 4.
// CHECK-LABEL: func.func @aligned
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<256x512xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<256x512xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<512xf16>, vector<8xf16>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<1024xf32>, vector<4xf32>
func.func @aligned(%a: memref<256x512xf32>, %h: memref<512xf16>, %l: memref<1024xf32>) {
  %tid = gpu.thread_id x
  %bid = gpu.block_id x
  %col = affine.apply affine_map<(d0) -> (d0 * 4)>(%tid)
  %v = vector.load %a[%bid, %col] : memref<256x512xf32>, vector<4xf32>
  vector.store %v, %a[%bid, %col] : memref<256x512xf32>, vector<4xf32>
  %c8 = arith.constant 8 : index
  %hcol = arith.muli %tid, %c8 : index
  %w = vector.load %h[%hcol] : memref<512xf16>, vector<8xf16>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1024 = arith.constant 1024 : index
  scf.for %i = %c0 to %c1024 step %c4 {
    %x = vector.load %l[%i] : memref<1024xf32>, vector<4xf32>
    "test.use"(%x) : (vector<4xf32>) -> ()
  }
  return
}

// Negative cases: nothing beyond the element alignment is known: an
// offset by one element, an unknown thread id, a shared-memory buffer
// (not a binding), a strided layout with a dynamic offset. Partially
// known: loop steps and offsets of 2 elements give 8 bytes.
// CHECK-LABEL: func.func @unaligned
// CHECK: vector.load %{{.*}} : memref<512xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} : memref<512xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.load %{{.*}} : memref<4xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<512xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<512xf32>, vector<4xf32>
func.func @unaligned(%a: memref<512xf32>, %s: memref<4xf32, strided<[1], offset: ?>>) {
  %tid = gpu.thread_id x
  %shifted = affine.apply affine_map<(d0) -> (d0 * 4 + 1)>(%tid)
  %0 = vector.load %a[%shifted] : memref<512xf32>, vector<4xf32>
  %1 = vector.load %a[%tid] : memref<512xf32>, vector<4xf32>
  %shared = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
  %c0 = arith.constant 0 : index
  %2 = vector.load %shared[%c0] : memref<64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
  %3 = vector.load %s[%c0] : memref<4xf32, strided<[1], offset: ?>>, vector<4xf32>
  %c2 = arith.constant 2 : index
  %c512 = arith.constant 512 : index
  scf.for %i = %c0 to %c512 step %c2 {
    %x = vector.load %a[%i] : memref<512xf32>, vector<4xf32>
    "test.use"(%x) : (vector<4xf32>) -> ()
  }
  %two = affine.apply affine_map<(d0) -> (d0 * 4 + 2)>(%tid)
  %4 = vector.load %a[%two] : memref<512xf32>, vector<4xf32>
  "test.use"(%0, %1, %2, %3, %4) : (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) -> ()
  return
}

// The contraction strategy on NVIDIA: matmuls with f16/bf16 inputs and an
// f32 accumulator become mma.sync m16n8k16 kernels staging A and B in
// multi-buffered shared memory with cp.async (this shape runs and is checked against
// numpy on H100s: tests/e2e/matmul/contraction_*.mlir, docs/testing.md).
// RUN: kiln-opt %s --kiln-gpu-codegen="backend=nvvm chip=sm_90" | mlir-translate --mlir-to-llvmir | llc -O3 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 -mattr=+ptx80 | FileCheck %s

// 128x64 of f16 with K = 64: two 64x64 workgroups of 4 warps, two K slices
// of 32 with 2x4 tiles of 16x8 per warp and 2 K steps of 16 each, three
// swizzled shared stages (3 x 64x32 and 3 x 32x64 f16, no padding): both
// slices are in flight before the first is multiplied (wait_group 1), the
// second is multiplied once it has landed (wait_group 0).
// CHECK: .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// CHECK-LABEL: .entry matmul_f16(
// CHECK-DAG: .shared .align 16 .b8 {{.*}}[12288]
// CHECK-DAG: .shared .align 16 .b8 {{.*}}[12288]
// CHECK-COUNT-4: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// CHECK: cp.async.commit_group;
// CHECK-COUNT-4: cp.async.cg.shared.global
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: bar.sync 0;
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-COUNT-16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NOT: bar.sync
// CHECK: cp.async.wait_group 0;
// CHECK-NEXT: bar.sync 0;
// CHECK-COUNT-16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// Epilogue: each lane's two adjacent accumulators of a row are truncated
// together and stored as one 32-bit word.
// CHECK: cvt.rn.f16x2.f32 [[PAIR:%r[0-9]+]]
// CHECK: st.global.b32 [{{.*}}], [[PAIR]];
// CHECK-NOT: st.global.b16
func.func @matmul_f16(%a: tensor<128x64xf16>, %b: tensor<64x64xf16>) -> tensor<128x64xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x64xf16>, tensor<64x64xf16>) outs(%f : tensor<128x64xf32>) -> tensor<128x64xf32>
  %e2 = tensor.empty() : tensor<128x64xf16>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<128x64xf32>) outs(%e2 : tensor<128x64xf16>) {
  ^bb0(%x: f32, %o: f16):
    %y = arith.truncf %x : f32 to f16
    linalg.yield %y : f16
  } -> tensor<128x64xf16>
  return %t : tensor<128x64xf16>
}

// bf16 takes the bf16 form of the instruction.
// CHECK-LABEL: .entry matmul_bf16(
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
func.func @matmul_bf16(%a: tensor<64x32xbf16>, %b: tensor<32x64xbf16>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xbf16>, tensor<32x64xbf16>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %m : tensor<64x64xf32>
}

// Enough 128x128 tiles (12 x 8) for the large tiling: 4 stages of 16 KiB,
// above the 48 KiB a PTX kernel may declare statically, live in one
// `.extern .shared` array that the driver sizes at launch.
// CHECK-LABEL: .entry matmul_large(
// CHECK-NOT: .shared .align 16 .b8 __wg
// CHECK: mov.b64 {{.*}}, __dynamic_shmem__0;
// CHECK: cp.async.wait_group 2;
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @matmul_large(%a: tensor<1536x128xf16>, %b: tensor<128x1024xf16>) -> tensor<1536x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1536x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1536x1024xf32>) -> tensor<1536x1024xf32>
  %m = linalg.matmul ins(%a, %b : tensor<1536x128xf16>, tensor<128x1024xf16>) outs(%f : tensor<1536x1024xf32>) -> tensor<1536x1024xf32>
  return %m : tensor<1536x1024xf32>
}

// The whole GPU recipe: tensor kernels in, LLVM-dialect kernels out, one
// global pointer per binding (inputs, then results), annotated for the
// backend and carrying what the runtime needs to launch them.
// RUN: kiln-opt %s --split-input-file --kiln-gpu-codegen="backend=rocdl chip=gfx942" | FileCheck %s --check-prefixes=CHECK,GFX942
// RUN: kiln-opt %s --split-input-file --kiln-gpu-codegen="backend=rocdl chip=gfx1100" | FileCheck %s --check-prefixes=CHECK,GFX1100
// RUN: kiln-opt %s --split-input-file --kiln-gpu-codegen="backend=nvvm chip=sm_90" | FileCheck %s --check-prefixes=CHECK,SM90

// CHECK-LABEL: llvm.func @bias_gelu(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>)
// GFX942-SAME: kiln.shared_memory_bytes = 0 : i64, kiln.workgroup_count = array<i64: 128, 1, 1>, kiln.workgroup_size = array<i64: 256, 1, 1>
// GFX942-SAME: rocdl.flat_work_group_size = "256,256", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 256, 1, 1>
// GFX1100-SAME: kiln.shared_memory_bytes = 0 : i64, kiln.workgroup_count = array<i64: 256, 1, 1>, kiln.workgroup_size = array<i64: 128, 1, 1>
// GFX1100-SAME: rocdl.flat_work_group_size = "128,128", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 128, 1, 1>
// SM90-SAME: kiln.shared_memory_bytes = 0 : i64, kiln.workgroup_count = array<i64: 256, 1, 1>, kiln.workgroup_size = array<i64: 128, 1, 1>
// SM90-SAME: nvvm.kernel, nvvm.reqntid = array<i32: 128, 1, 1>
// GFX942-DAG: rocdl.workgroup.id.x
// GFX942-DAG: rocdl.workitem.id.x range <i32, 0, 256>
// SM90-DAG: nvvm.read.ptx.sreg.ctaid.x
// SM90-DAG: nvvm.read.ptx.sreg.tid.x range <i32, 0, 128>
// AMD GPUs compute exp with v_exp_f32 (llvm.exp); on NVIDIA exp is a
// Cody-Waite reduction around ex2.approx (the NVVM intrinsic, no libdevice
// call).
// GFX942: llvm.intr.exp
// SM90-NOT: llvm.call @
// SM90: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// SM90-NOT: llvm.call @
// CHECK: llvm.return
func.func @bias_gelu(%a: tensor<256x512xf32>, %bias: tensor<512xf32>) -> tensor<256x512xf32> {
  %e = tensor.empty() : tensor<256x512xf32>
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %bias : tensor<256x512xf32>, tensor<512xf32>) outs(%e : tensor<256x512xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %s = arith.addf %x, %b : f32
    %t = math.tanh %s : f32
    %u = arith.addf %t, %one : f32
    %v = arith.mulf %u, %half : f32
    %w = arith.mulf %v, %s : f32
    linalg.yield %w : f32
  } -> tensor<256x512xf32>
  return %r : tensor<256x512xf32>
}

// -----

// The row reduction: per-thread partials reduced across each subgroup's
// lanes, one total per subgroup in workgroup memory (LDS, address space 3
// on both backends), one barrier before thread 0 combines them and one
// after the op.
// CHECK: llvm.mlir.global internal @__wg_row_max_0() {addr_space = 3 : i32
// CHECK-LABEL: llvm.func @row_max(
// GFX942-SAME: kiln.shared_memory_bytes = 16 : i64, kiln.workgroup_count = array<i64: 100, 1, 1>, kiln.workgroup_size = array<i64: 256, 1, 1>
// GFX1100-SAME: kiln.shared_memory_bytes = 16 : i64, kiln.workgroup_count = array<i64: 100, 1, 1>, kiln.workgroup_size = array<i64: 128, 1, 1>
// SM90-SAME: kiln.shared_memory_bytes = 16 : i64, kiln.workgroup_count = array<i64: 100, 1, 1>, kiln.workgroup_size = array<i64: 128, 1, 1>
// CHECK: llvm.mlir.addressof @__wg_row_max_0 : !llvm.ptr<3>
// GFX942: rocdl.update.dpp
// GFX1100: rocdl.update.dpp
// GFX1100: rocdl.permlanex16
// SM90-COUNT-5: nvvm.shfl.sync  bfly
// GFX942: rocdl.barrier
// GFX1100: rocdl.barrier
// SM90: nvvm.barrier0
// CHECK: llvm.return
func.func @row_max(%a: tensor<100x3000xf32>) -> tensor<100xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<100xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<100xf32>) -> tensor<100xf32>
  %r = linalg.reduce ins(%a : tensor<100x3000xf32>) outs(%f : tensor<100xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %m = arith.maximumf %x, %acc : f32
      linalg.yield %m : f32
    }
  return %r : tensor<100xf32>
}

// -----

// A matmul whose tiles do not divide the shape; the fused bias+relu reads
// the workgroup's matmul tile from shared memory.
// CHECK-LABEL: llvm.func @matmul_bias_relu(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>)
// GFX942-SAME: kiln.shared_memory_bytes = 1024 : i64, kiln.workgroup_count = array<i64: 512, 1, 1>, kiln.workgroup_size = array<i64: 256, 1, 1>
// SM90-SAME: kiln.shared_memory_bytes = 512 : i64, kiln.workgroup_count = array<i64: 1024, 1, 1>, kiln.workgroup_size = array<i64: 128, 1, 1>
// CHECK: llvm.return
func.func @matmul_bias_relu(%a: tensor<250x128xf32>, %b: tensor<128x500xf32>, %bias: tensor<500xf32>) -> tensor<250x500xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<250x500xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<250x500xf32>) -> tensor<250x500xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<250x128xf32>, tensor<128x500xf32>) outs(%f : tensor<250x500xf32>) -> tensor<250x500xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<250x500xf32>, tensor<500xf32>) outs(%e : tensor<250x500xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<250x500xf32>
  return %r : tensor<250x500xf32>
}

// RUN: kiln-opt %s --split-input-file --kiln-gpu-unwrap-kernels | FileCheck %s

// The lowered gpu.module dissolves into the top module. Bindings become
// global-memory pointers (addrspace 1), cast back to flat pointers for the
// body; launch bounds are set for the backend; libdevice calls that are one
// instruction become intrinsics.
// CHECK-NOT: gpu.module
// CHECK-NOT: llvm.func @__nv_floorf
// CHECK: llvm.func @__nv_exp(f64) -> f64
// CHECK: llvm.func @k(%[[ARG:.*]]: !llvm.ptr<1>)
// CHECK-SAME: kiln.shared_memory_bytes = 0 : i64
// CHECK-SAME: nvvm.kernel, nvvm.reqntid = array<i32: 32, 1, 1>
// CHECK-NOT: gpu.kernel
// CHECK: %[[PTR:.*]] = llvm.addrspacecast %[[ARG]] : !llvm.ptr<1> to !llvm.ptr
// CHECK: %[[X:.*]] = llvm.load %[[PTR]]
// CHECK: llvm.intr.floor(%[[X]]) : (f32) -> f32
gpu.module @kiln_kernels {
  llvm.func @__nv_floorf(f32) -> f32
  llvm.func @__nv_exp(f64) -> f64
  llvm.func @k(%arg0: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel, kiln.shared_memory_bytes = 0 : i64, kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 32, 1, 1>} {
    %0 = llvm.load %arg0 : !llvm.ptr -> f32
    %1 = llvm.call @__nv_floorf(%0) : (f32) -> f32
    llvm.store %1, %arg0 : f32, !llvm.ptr
    llvm.return
  }
}

// -----

// CHECK-LABEL: llvm.func @r(
// CHECK-SAME: rocdl.flat_work_group_size = "256,256", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 256, 1, 1>
// CHECK: llvm.intr.ceil
gpu.module @kiln_kernels {
  llvm.func @__ocml_ceil_f32(f32) -> f32
  llvm.func @r(%arg0: !llvm.ptr) attributes {rocdl.kernel, kiln.shared_memory_bytes = 0 : i64, kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 256, 1, 1>} {
    %0 = llvm.load %arg0 : !llvm.ptr -> f32
    %1 = llvm.call @__ocml_ceil_f32(%0) : (f32) -> f32
    llvm.store %1, %arg0 : f32, !llvm.ptr
    llvm.return
  }
}

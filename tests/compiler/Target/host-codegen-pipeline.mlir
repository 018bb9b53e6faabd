// RUN: kiln-opt %s --kiln-host-codegen | FileCheck %s

// The whole host recipe on an f16 kernel: split over 16 workgroups, lowered
// to the LLVM dialect with f16 math computed in f32 by inline polynomial
// approximations (no exp/log intrinsic, so no libm call), f16 conversions as
// integer ops on vectors of 8 (no compiler-rt helpers), and the host_abi.h
// entry point.
// CHECK-NOT: __extendhfsf2
// CHECK-NOT: __truncsfhf2
// CHECK-LABEL: llvm.func internal @softplus.impl(
// CHECK-SAME: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64)
// CHECK-NOT: llvm.fpext
// CHECK-NOT: llvm.fptrunc
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: llvm.intr.log
// CHECK: llvm.fptosi %{{.+}} : {{.*}}f32{{.*}} to {{.*}}i32
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: llvm.intr.log
// CHECK: llvm.store %{{.+}}, %{{.+}} : vector<8xf16>, !llvm.ptr
// CHECK-LABEL: llvm.func @softplus(
// CHECK-SAME: %{{.+}}: !llvm.ptr, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32) -> i32
// CHECK-SAME: kiln.workgroup_count = array<i64: 16, 1, 1>
// CHECK: llvm.call @softplus.impl
// CHECK-NOT: memref.
// CHECK-NOT: tensor.
// CHECK-NOT: builtin.unrealized_conversion_cast
func.func @softplus(%a: tensor<1024x64xf16>) -> tensor<1024x64xf16> {
  %e = tensor.empty() : tensor<1024x64xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<1024x64xf16>) outs(%e : tensor<1024x64xf16>) {
  ^bb0(%x: f16, %o: f16):
    %ex = math.exp %x : f16
    %one = arith.constant 1.0 : f16
    %s = arith.addf %ex, %one : f16
    %l = math.log %s : f16
    linalg.yield %l : f16
  } -> tensor<1024x64xf16>
  return %r : tensor<1024x64xf16>
}

// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-host-add-abi-wrapper | FileCheck %s

// The kernel becomes internal `<name>.impl`; the exported `<name>` has the
// host_abi.h signature, checks state->binding_count (offset 24), loads the
// binding pointers from state->bindings (offset 0), widens the workgroup
// ids and returns 0.
// CHECK-LABEL: llvm.func internal @k.impl(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64)
// CHECK-LABEL: llvm.func @k(
// CHECK-SAME: %[[STATE:.+]]: !llvm.ptr, %[[X:.+]]: i32, %[[Y:.+]]: i32, %[[Z:.+]]: i32) -> i32
// CHECK-SAME: kiln.workgroup_count = array<i64: 4, 2, 1>
// CHECK: %[[COUNTP:.+]] = llvm.getelementptr %[[STATE]][24] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[COUNT:.+]] = llvm.load %[[COUNTP]] {alignment = 4 : i64} : !llvm.ptr -> i32
// CHECK: %[[TWO:.+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: %[[OK:.+]] = llvm.icmp "uge" %[[COUNT]], %[[TWO]] : i32
// CHECK: llvm.cond_br %[[OK]], ^[[BODY:.+]], ^[[FAIL:.+]]
// CHECK: ^[[BODY]]:
// CHECK: %[[BINDINGS:.+]] = llvm.load %[[STATE]] {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[P0:.+]] = llvm.getelementptr %[[BINDINGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[B0:.+]] = llvm.load %[[P0]] {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[P1:.+]] = llvm.getelementptr %[[BINDINGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[B1:.+]] = llvm.load %[[P1]] {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[WX:.+]] = llvm.zext %[[X]] : i32 to i64
// CHECK: %[[WY:.+]] = llvm.zext %[[Y]] : i32 to i64
// CHECK: %[[WZ:.+]] = llvm.zext %[[Z]] : i32 to i64
// CHECK: llvm.call @k.impl(%[[B0]], %[[B1]], %[[WX]], %[[WY]], %[[WZ]])
// CHECK: %[[ZERO:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: llvm.return %[[ZERO]] : i32
// CHECK: ^[[FAIL]]:
// CHECK: %[[ONE:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.return %[[ONE]] : i32
llvm.func @k(%in: !llvm.ptr, %out: !llvm.ptr, %x: i64, %y: i64, %z: i64) attributes {kiln.workgroup_count = array<i64: 4, 2, 1>} {
  llvm.return
}

// Functions without a workgroup count (helpers, libm declarations) are
// left alone.
// CHECK-LABEL: llvm.func @helper()
// CHECK-NOT: llvm.func @helper.impl
llvm.func @helper() {
  llvm.return
}

// -----

// expected-error @+1 {{host kernel parameter #1 must be 'i64' (bare-pointer bindings, then i64 workgroup ids), found 'i32'}}
llvm.func @bad(%in: !llvm.ptr, %x: i32, %y: i64, %z: i64) attributes {kiln.workgroup_count = array<i64: 1, 1, 1>} {
  llvm.return
}

// Bad ROCm target requests are clear errors, never a crash.
// RUN: split-file %s %t
// RUN: not kiln-compile --compile-mode=executable --target=rocm --rocm-chip=gfx9420 %t/ok.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not kiln-compile --compile-mode=executable --target=rocm --rocm-chip=gfx942,gfx110 %t/ok.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=TYPO
// RUN: not kiln-compile --compile-mode=executable --target=rocm --rocm-chip=gfx942, %t/ok.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not kiln-compile --compile-mode=executable --target=rocm --rocm-chip=gfx942,gfx942 %t/ok.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not kiln-compile --compile-mode=executable --target=cuda %t/ok.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=BACKEND
// RUN: not kiln-compile --compile-mode=executable --target=rocm %t/no-size.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=NOSIZE
// RUN: not kiln-compile --compile-mode=executable --target=rocm %t/too-big.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=TOOBIG
// RUN: not kiln-compile --compile-mode=executable --target=rocm %t/undefined.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=UNDEF
// RUN: not test -e %t/out.vmfb

// UNKNOWN: kiln-compile: error: --rocm-chip: unknown ROCm chip 'gfx9420'; known chips: gfx908, gfx90a, gfx942, gfx950, gfx1030, gfx1100, gfx1101, gfx1102, gfx1151, gfx1200, gfx1201
// TYPO: kiln-compile: error: --rocm-chip: unknown ROCm chip 'gfx110'; known chips: {{.*}}gfx1100
// EMPTY: kiln-compile: error: --rocm-chip='gfx942,' has an empty item
// TWICE: kiln-compile: error: --rocm-chip lists 'gfx942' twice
// BACKEND: ok.mlir:2:3: error: cuda target: kernel 'k' is already lowered for another GPU backend (expected NVVM, 'nvvm.kernel')
// NOSIZE: no-size.mlir:2:3: error: rocm target: kernel 'k' has no kiln.workgroup_size = array<i64: x, y, z> after GPU codegen
// TOOBIG: too-big.mlir:2:3: error: rocm target: kernel 'k' uses 2048 threads per workgroup; gfx942 allows at most 1024
// UNDEF: undefined.mlir:1:1: error: rocm target: executable 'k' on gfx942 calls undefined function 'external_helper'

//--- ok.mlir
kiln.executable @k {
  llvm.func @k(%a: !llvm.ptr<1>) attributes {rocdl.kernel, kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 64, 1, 1>} {
    llvm.return
  }
}
//--- no-size.mlir
kiln.executable @k {
  llvm.func @k(%a: !llvm.ptr<1>) attributes {rocdl.kernel, kiln.workgroup_count = array<i64: 1, 1, 1>} {
    llvm.return
  }
}
//--- too-big.mlir
kiln.executable @k {
  llvm.func @k(%a: !llvm.ptr<1>) attributes {rocdl.kernel, kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 1024, 2, 1>} {
    llvm.return
  }
}
//--- undefined.mlir
kiln.executable @k {
  llvm.func @external_helper(!llvm.ptr<1>)
  llvm.func @k(%a: !llvm.ptr<1>) attributes {rocdl.kernel, kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 64, 1, 1>} {
    llvm.call @external_helper(%a) : (!llvm.ptr<1>) -> ()
    llvm.return
  }
}

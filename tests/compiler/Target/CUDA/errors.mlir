// Bad CUDA target requests are clear errors, never a crash.
// RUN: split-file %s %t
// RUN: not kiln-compile --compile-mode=executable --target=cuda --cuda-chip=sm_91 %t/ok.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not kiln-compile --compile-mode=executable --target=cuda --cuda-chip=sm_80,sm90 %t/ok.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=TYPO
// RUN: not kiln-compile --compile-mode=executable --target=rocm --cuda-chip=sm_80 %t/ok.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: not kiln-compile --compile-mode=executable --target=cuda %t/libdevice.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=LIBDEVICE
// RUN: not kiln-compile --compile-mode=executable --target=cuda %t/exp.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=EXP
// RUN: not test -e %t/out.vmfb

// UNKNOWN: kiln-compile: error: --cuda-chip: unknown CUDA chip 'sm_91'; known chips: sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_120
// TYPO: kiln-compile: error: --cuda-chip: unknown CUDA chip 'sm90'; known chips:
// NOTARGET: kiln-compile: error: --cuda-chip needs --target=cuda
// LIBDEVICE: libdevice.mlir:1:1: error: cuda target: executable 'k' on sm_90 calls external function '__nv_expf'; libdevice is not linked, so math functions must be expanded by the GPU codegen pipeline
// EXP: exp.mlir:1:1: error: cuda target: llvm.exp.f32 (exp on float) has no lowering for sm_90; the GPU codegen pipeline must expand it

//--- ok.mlir
kiln.executable @k {
  llvm.func @k(%a: !llvm.ptr<1>) attributes {nvvm.kernel, kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 32, 1, 1>} {
    llvm.return
  }
}
//--- libdevice.mlir
kiln.executable @k {
  llvm.func @__nv_expf(f32) -> f32
  llvm.func @k(%a: !llvm.ptr<1>) attributes {nvvm.kernel, kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 32, 1, 1>} {
    %x = llvm.load %a : !llvm.ptr<1> -> f32
    %y = llvm.call @__nv_expf(%x) : (f32) -> f32
    llvm.store %y, %a : f32, !llvm.ptr<1>
    llvm.return
  }
}
//--- exp.mlir
kiln.executable @k {
  llvm.func @k(%a: !llvm.ptr<1>) attributes {nvvm.kernel, kiln.workgroup_count = array<i64: 1, 1, 1>, kiln.workgroup_size = array<i64: 32, 1, 1>} {
    %x = llvm.load %a : !llvm.ptr<1> -> f32
    %y = llvm.intr.exp(%x) : (f32) -> f32
    llvm.store %y, %a : f32, !llvm.ptr<1>
    llvm.return
  }
}

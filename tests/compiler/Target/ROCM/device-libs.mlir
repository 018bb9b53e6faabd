// Kernels that call AMD device-library functions get ocml (and what it
// needs) linked in, with the oclc control constants defined by the compiler:
// Debian's rocm-device-libs has no oclc_isa_version file for gfx942, gfx950,
// gfx1100 or gfx1201, yet they compile. Nothing stays undefined.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile --compile-mode=executable --target=rocm --rocm-chip=gfx942,gfx950,gfx1100,gfx1201 %s -o %t/m.vmfb --dump-intermediates=%t/dump
// RUN: llvm-readelf --dyn-syms %t/dump/erf/erf.gfx942.hsaco | FileCheck %s --check-prefix=SYMS
// RUN: FileCheck %s --check-prefix=OPT < %t/dump/erf/erf.gfx1100.opt.ll
// RUN: FileCheck %s --check-prefix=LL < %t/dump/erf/erf.gfx1100.ll
// The directory can be given explicitly; a wrong one is a clear error.
// RUN: kiln-compile --compile-mode=executable --target=rocm --rocm-device-libs=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode %s -o %t/explicit.vmfb
// RUN: not kiln-compile --compile-mode=executable --target=rocm --rocm-device-libs=%t/nowhere %s -o %t/bad.vmfb 2>&1 | FileCheck %s --check-prefix=MISSING

// SYMS-NOT: UND {{.*}}__ocml
// SYMS: erf.kd
// SYMS-NOT: UND {{.*}}__ocml

// The library call is inlined and the constants folded away.
// OPT: define amdgpu_kernel void @erf(
// OPT-NOT: call {{.*}}@__ocml_erf_f32
// OPT-NOT: @__oclc_ISA_version

// LL: declare float @__ocml_erf_f32(float)

// MISSING: device-libs.mlir:[[@LINE+1]]:1: error: rocm target: executable 'erf' on gfx942: AMD device-library directory '{{.*}}nowhere' does not hold ocml.bc and ockl.bc
kiln.executable @erf {
  llvm.func @__ocml_erf_f32(f32) -> f32
  llvm.func @erf(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {
      rocdl.kernel, kiln.workgroup_count = array<i64: 1, 1, 1>,
      kiln.workgroup_size = array<i64: 64, 1, 1>} {
    %tid = rocdl.workitem.id.x : i32
    %pin = llvm.getelementptr inbounds %in[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
    %x = llvm.load %pin : !llvm.ptr<1> -> f32
    %y = llvm.call @__ocml_erf_f32(%x) : (f32) -> f32
    %pout = llvm.getelementptr inbounds %out[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
    llvm.store %y, %pout : f32, !llvm.ptr<1>
    llvm.return
  }
}


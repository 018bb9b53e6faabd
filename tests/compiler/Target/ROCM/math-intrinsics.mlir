// Math intrinsics the AMDGPU backend cannot expand itself (tanh, atan2, any
// f64 transcendental) are compiled as calls of the equivalent ocml
// functions, linked from the device libraries; f32 exp stays the hardware
// instruction. Without this the backend would stop with a fatal error.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile --compile-mode=executable --target=rocm --rocm-chip=gfx942,gfx1201 %s -o %t/m.vmfb --dump-intermediates=%t/dump 2>&1 | count 0
// RUN: FileCheck %s --check-prefix=LL < %t/dump/math/math.gfx942.ll
// RUN: FileCheck %s --check-prefix=OPT < %t/dump/math/math.gfx942.opt.ll
// RUN: llvm-objdump -d --mcpu=gfx942 %t/dump/math/math.gfx942.hsaco | FileCheck %s --check-prefix=ISA
// RUN: llvm-readelf --dyn-syms %t/dump/math/math.gfx1201.hsaco | FileCheck %s --check-prefix=SYMS

// LL-DAG: call float @llvm.tanh.f32(
// LL-DAG: call float @llvm.atan2.f32(
// LL-DAG: call double @llvm.exp.f64(
// LL-DAG: call float @llvm.exp.f32(

// OPT: define amdgpu_kernel void @math(
// OPT-NOT: call {{.*}}@llvm.tanh
// OPT-NOT: call {{.*}}@llvm.atan2
// OPT-NOT: call {{.*}}@llvm.exp.f64
// OPT-NOT: call {{.*}}@__ocml

// ISA-LABEL: <math>:
// ISA: v_exp_f32
// ISA: s_endpgm

// SYMS-NOT: UND {{[_a-zA-Z]}}
// SYMS: math.kd

kiln.executable @math {
  llvm.func @math(%f: !llvm.ptr<1>, %d: !llvm.ptr<1>) attributes {
      rocdl.kernel, kiln.workgroup_count = array<i64: 1, 1, 1>,
      kiln.workgroup_size = array<i64: 64, 1, 1>} {
    %tid = rocdl.workitem.id.x : i32
    %pf = llvm.getelementptr inbounds %f[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
    %pd = llvm.getelementptr inbounds %d[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f64
    %x = llvm.load %pf : !llvm.ptr<1> -> f32
    %y = llvm.load %pd : !llvm.ptr<1> -> f64
    %t = llvm.intr.tanh(%x) : (f32) -> f32
    %a = llvm.intr.atan2(%t, %x) : (f32, f32) -> f32
    %e = llvm.intr.exp(%a) : (f32) -> f32
    %ed = llvm.intr.exp(%y) : (f64) -> f64
    llvm.store %e, %pf : f32, !llvm.ptr<1>
    llvm.store %ed, %pd : f64, !llvm.ptr<1>
    llvm.return
  }
}

// RUN: kiln-opt %s --kiln-gpu-lower-math=backend=rocdl | FileCheck %s --check-prefix=ROCDL
// RUN: kiln-opt %s --kiln-gpu-lower-math=backend=nvvm | FileCheck %s --check-prefix=NVVM

// AMD GPUs have exp/log/sqrt instructions: f32 exp stays one intrinsic.
// tanh is expanded into exp; erf is a polynomial. NVIDIA gets polynomials
// for exp too (no libdevice). f64 exp is left for the device libraries.
// ROCDL-LABEL: func.func @math
// ROCDL-NOT: math.tanh
// ROCDL-NOT: math.erf
// ROCDL: llvm.intr.exp
// ROCDL: llvm.intr.sqrt
// ROCDL: math.exp %{{.*}} : f64
// NVVM-LABEL: func.func @math
// NVVM-NOT: math.tanh
// NVVM-NOT: math.erf
// NVVM-NOT: llvm.intr.exp
// NVVM-NOT: math.exp %{{.*}} : f32
// NVVM: math.sqrt %{{.*}} : f32
// NVVM: math.exp %{{.*}} : f64
func.func @math(%x: f32, %d: f64) -> (f32, f64) {
  %0 = math.tanh %x : f32
  %1 = math.erf %0 : f32
  %2 = math.exp %1 : f32
  %3 = math.sqrt %2 : f32
  %4 = math.exp %d : f64
  return %3, %4 : f32, f64
}

// extf/truncf lose fast-math flags LLVM's fpext/fptrunc cannot carry.
// ROCDL-LABEL: func.func @ext
// ROCDL: arith.extf %{{.*}} : f16 to f32
// ROCDL-NOT: fastmath
func.func @ext(%h: f16) -> f32 {
  %0 = arith.extf %h fastmath<contract> : f16 to f32
  return %0 : f32
}

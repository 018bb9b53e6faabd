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

// The f32 log approximation clamps its input to the smallest normal float:
// on NVVM denormal inputs are scaled by 2^23 first and 23 ln 2 is taken off
// the result. AMD keeps the log instruction, whose lowering handles them.
// ROCDL-LABEL: func.func @log_denormals
// ROCDL-NOT: arith.cmpf
// ROCDL: llvm.intr.log
// NVVM-LABEL: func.func @log_denormals
// NVVM-DAG: %[[MIN:.*]] = arith.constant 1.17549435E-38 : f32
// NVVM-DAG: %[[SCALE:.*]] = arith.constant 0x4B000000 : f32
// NVVM-DAG: %[[SHIFT:.*]] = arith.constant 15.9423847 : f32
// NVVM: %[[DENORMAL:.*]] = arith.cmpf olt, %[[X:.*]], %[[MIN]] : f32
// NVVM: %[[SCALED:.*]] = arith.mulf %[[X]], %[[SCALE]] : f32
// NVVM: arith.select %[[DENORMAL]], %[[SCALED]], %[[X]] : f32
// NVVM-NOT: math.log
// NVVM: %[[CORRECTION:.*]] = arith.select %[[DENORMAL]], %[[SHIFT]], %{{.*}} : f32
// NVVM: arith.subf %{{.*}}, %[[CORRECTION]] : f32
func.func @log_denormals(%x: f32) -> f32 {
  %0 = math.log %x : f32
  return %0 : f32
}

// On NVIDIA f32 exp is two ex2.approx (Cody-Waite reduction, exact 2^n) where
// the kernel has any buffer wider than 16 bits; one ex2.approx of x log2(e)
// where every buffer holds f16 or bf16 (the results are rounded to them),
// flushing f32 subnormal results only where no buffer holds bf16 (whose
// exponent range is f32's).
// NVVM-LABEL: func.func @exp_f32_buffers
// NVVM:         arith.constant 1.250000e+01 : f32
// NVVM-COUNT-2: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// NVVM-NOT:     llvm.call_intrinsic "llvm.nvvm.ex2.approx
// NVVM:         return
func.func @exp_f32_buffers(%in: memref<4xf16>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %h = memref.load %in[%c0] : memref<4xf16>
  %x = arith.extf %h : f16 to f32
  %c = arith.constant 12.5 : f32
  %y = arith.mulf %x, %c : f32
  %e = math.exp %y : f32
  memref.store %e, %out[%c0] : memref<4xf32>
  return
}
// NVVM-LABEL: func.func @exp_half_buffers
// NVVM:       %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// NVVM:       %[[X:.*]] = arith.extf
// NVVM:       %[[A:.*]] = arith.mulf %[[X]], %[[LOG2E]] : f32
// NVVM:       %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%[[A]])
// NVVM-NOT:   llvm.call_intrinsic "llvm.nvvm.ex2.approx
// NVVM:       arith.truncf %[[E]] : f32 to bf16
// NVVM:       return
func.func @exp_half_buffers(%in: memref<4xf16>, %out: memref<4xbf16>) {
  %c0 = arith.constant 0 : index
  %h = memref.load %in[%c0] : memref<4xf16>
  %x = arith.extf %h : f16 to f32
  %e = math.exp %x : f32
  %t = arith.truncf %e : f32 to bf16
  memref.store %t, %out[%c0] : memref<4xbf16>
  return
}
// NVVM-LABEL: func.func @exp_f16_buffers
// NVVM:       %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// NVVM:       %[[X:.*]] = arith.extf
// NVVM:       %[[A:.*]] = arith.mulf %[[X]], %[[LOG2E]] : f32
// NVVM:       %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[A]])
// NVVM-NOT:   llvm.call_intrinsic "llvm.nvvm.ex2.approx
// NVVM:       arith.truncf %[[E]] : f32 to f16
// NVVM:       return
func.func @exp_f16_buffers(%in: memref<4xf16>, %out: memref<4xf16>) {
  %c0 = arith.constant 0 : index
  %h = memref.load %in[%c0] : memref<4xf16>
  %x = arith.extf %h : f16 to f32
  %e = math.exp %x : f32
  %t = arith.truncf %e : f32 to f16
  memref.store %t, %out[%c0] : memref<4xf16>
  return
}

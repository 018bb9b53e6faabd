// gpu.subgroup_reduce, which the upstream GPU conversions do not lower,
// becomes a shuffle butterfly on NVVM and DPP on ROCDL.
// RUN: kiln-opt %s --kiln-gpu-lower-subgroup-reduce="backend=nvvm subgroup-size=32" | FileCheck %s --check-prefix=NVVM
// RUN: kiln-opt %s --kiln-gpu-lower-subgroup-reduce="backend=rocdl chip=gfx942 subgroup-size=64" | FileCheck %s --check-prefix=GFX942
// RUN: kiln-opt %s --kiln-gpu-lower-subgroup-reduce="backend=rocdl chip=gfx1100 subgroup-size=32" | FileCheck %s --check-prefix=GFX1100
// RUN: not kiln-opt %s --kiln-gpu-lower-subgroup-reduce="backend=rocdl chip=vega subgroup-size=64" 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not kiln-opt %s --kiln-gpu-lower-subgroup-reduce="backend=nvvm subgroup-size=24" 2>&1 | FileCheck %s --check-prefix=BADSIZE

// NVVM-LABEL: func.func @sum
// NVVM-COUNT-5: gpu.shuffle  xor
// NVVM-NOT: gpu.subgroup_reduce
// GFX942-LABEL: func.func @sum
// GFX942: amdgpu.dpp
// GFX942: rocdl.readlane
// GFX942-NOT: gpu.subgroup_reduce
// GFX1100-LABEL: func.func @sum
// GFX1100: amdgpu.dpp
// GFX1100: rocdl.permlanex16
// GFX1100-NOT: gpu.subgroup_reduce
// BADCHIP: unknown AMD chip 'vega'
// BADSIZE: subgroup size 24 is not a power of two
func.func @sum(%x: f32) -> f32 {
  %r = gpu.subgroup_reduce add %x uniform : (f32) -> f32
  return %r : f32
}

// NVVM-LABEL: func.func @max
// NVVM-COUNT-5: arith.maxnumf
// GFX942-LABEL: func.func @max
// GFX942: arith.maxnumf
func.func @max(%x: f32) -> f32 {
  %r = gpu.subgroup_reduce maxnumf %x uniform : (f32) -> f32
  return %r : f32
}

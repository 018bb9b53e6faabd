// RUN: kiln-opt %s --split-input-file --kiln-gpu-expand-f64-math | FileCheck %s
// The CUDA recipe, where a leftover f64 function would become a __nv_* call
// (no libdevice is linked): exp, log, and what math's expansions build from
// them (tanh, pow, sinh) become arithmetic. ROCm keeps them for ocml.
// RUN: kiln-opt %s --split-input-file --kiln-gpu-codegen="backend=nvvm chip=sm_90" | FileCheck %s --check-prefix=NVVM
// RUN: kiln-opt %s --split-input-file --kiln-gpu-codegen="backend=rocdl chip=gfx942" | FileCheck %s --check-prefix=ROCDL

// exp: clamp, Cody-Waite reduction (two fmas with ln2 hi/lo), the
// polynomial, 2^n as two exponent-field factors, NaN passed through.
// CHECK-LABEL: func.func @exp
// CHECK-NOT: math.exp
// CHECK-DAG: arith.constant 7.100000e+02 : f64
// CHECK-DAG: arith.constant -7.460000e+02 : f64
// CHECK-DAG: arith.constant 0x4338000000000000 : f64
// CHECK-DAG: arith.constant 0.69314718036912382 : f64
// CHECK-DAG: arith.constant 1.9082149292705877E-10 : f64
// CHECK-DAG: arith.constant 1.6059043836821613E-10 : f64
// CHECK-DAG: arith.constant 1023 : i64
// CHECK-DAG: arith.constant 52 : i64
// CHECK: arith.cmpf uno
// CHECK: math.fma
// CHECK: arith.fptosi %{{.*}} : f64 to i64
// CHECK: arith.shrsi
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i64 to f64
// CHECK: return
// NVVM-LABEL: llvm.func @exp
// NVVM-NOT: __nv_
// NVVM: llvm.return
// ROCDL-LABEL: llvm.func @exp
// ROCDL: llvm.call @__ocml_exp_f64
func.func @exp(%a: tensor<64xf64>) -> tensor<64xf64> {
  %e = tensor.empty() : tensor<64xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<64xf64>) outs(%e : tensor<64xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = math.exp %x : f64
    linalg.yield %y : f64
  } -> tensor<64xf64>
  return %r : tensor<64xf64>
}

// -----

// log: exponent and mantissa from the bits (subnormals scaled by 2^54),
// mantissa folded into [sqrt(1/2), sqrt(2)), the series in s = f / (2 + f),
// then the special cases.
// CHECK-LABEL: func.func @log
// CHECK-NOT: math.log
// CHECK-DAG: arith.constant 2.2250738585072014E-308 : f64
// CHECK-DAG: arith.constant 0x4350000000000000 : f64
// CHECK-DAG: arith.constant 1.4142135623730951 : f64
// CHECK-DAG: arith.constant 4503599627370495 : i64
// CHECK-DAG: arith.constant 0xFFF0000000000000 : f64
// CHECK-DAG: arith.constant 0x7FF8000000000000 : f64
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK: arith.shrui
// CHECK: arith.sitofp
// CHECK: arith.divf
// CHECK: arith.cmpf ueq
// CHECK: return
// NVVM-LABEL: llvm.func @log
// NVVM-NOT: __nv_
// NVVM: llvm.return
// ROCDL-LABEL: llvm.func @log
// ROCDL: llvm.call @__ocml_log_f64
func.func @log(%a: tensor<64xf64>) -> tensor<64xf64> {
  %e = tensor.empty() : tensor<64xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<64xf64>) outs(%e : tensor<64xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = math.log %x : f64
    linalg.yield %y : f64
  } -> tensor<64xf64>
  return %r : tensor<64xf64>
}

// -----

// Functions upstream expansions build from exp and log. The pass alone
// leaves them (kiln-gpu-lower-math expands them first in the recipe).
// CHECK-LABEL: func.func @derived
// CHECK: math.tanh
// CHECK: math.powf
// CHECK: math.sinh
// NVVM-LABEL: llvm.func @derived
// NVVM-NOT: __nv_
// NVVM: llvm.return
func.func @derived(%a: tensor<64xf64>) -> tensor<64xf64> {
  %e = tensor.empty() : tensor<64xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<64xf64>) outs(%e : tensor<64xf64>) {
  ^bb0(%x: f64, %o: f64):
    %t = math.tanh %x : f64
    %p = math.powf %x, %t : f64
    %s = math.sinh %p : f64
    linalg.yield %s : f64
  } -> tensor<64xf64>
  return %r : tensor<64xf64>
}

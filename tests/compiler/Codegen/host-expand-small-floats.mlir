// RUN: kiln-opt %s --kiln-host-expand-small-floats | FileCheck %s

// f16 <-> f32 conversions become integer bit manipulation (no libcall).
// CHECK-LABEL: func.func @f16_roundtrip
// CHECK-NOT: arith.extf {{.*}} f16 to f32
// CHECK-NOT: arith.truncf {{.*}} f32 to f16
// CHECK-DAG: %[[MANT:.+]] = arith.constant 1023 : i32
// CHECK-DAG: %[[INF:.+]] = arith.constant 2139095040 : i32
// CHECK-DAG: %[[F16MAX:.+]] = arith.constant 1199570944 : i32
// CHECK: arith.bitcast %{{.+}} : f16 to i16
// CHECK: arith.andi %{{.+}}, %[[MANT]] : i32
// CHECK: %[[X:.+]] = arith.bitcast %{{.+}} : i32 to f32
// CHECK: arith.addf %[[X]]
// CHECK: arith.cmpi uge, %{{.+}}, %[[F16MAX]] : i32
// CHECK: arith.trunci %{{.+}} : i32 to i16
// CHECK: arith.bitcast %{{.+}} : i16 to f16
func.func @f16_roundtrip(%a: f16, %b: f32) -> f16 {
  %x = arith.extf %a : f16 to f32
  %s = arith.addf %x, %b : f32
  %r = arith.truncf %s : f32 to f16
  return %r : f16
}

// f64 goes through f32.
// CHECK-LABEL: func.func @bf16_f64
// CHECK-NOT: arith.extf {{.*}} bf16
// CHECK-NOT: arith.truncf {{.*}} to bf16
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: arith.addf %{{.+}} : f64
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: arith.bitcast %{{.+}} : i16 to bf16
func.func @bf16_f64(%a: bf16, %b: f64) -> bf16 {
  %x = arith.extf %a : bf16 to f64
  %s = arith.addf %x, %b : f64
  %y = arith.truncf %s : f64 to bf16
  return %y : bf16
}

// Emulation's `contract` flag is dropped so the rounding between two
// emulated 16-bit ops is not folded away.
// CHECK-LABEL: func.func @contract_roundtrip
// CHECK: arith.mulf
// CHECK: arith.trunci
// CHECK: arith.shli
// CHECK: arith.subf
func.func @contract_roundtrip(%a: f32, %b: f32) -> bf16 {
  %m = arith.mulf %a, %b : f32
  %t = arith.truncf %m fastmath<contract> : f32 to bf16
  %e = arith.extf %t fastmath<contract> : bf16 to f32
  %s = arith.subf %e, %b : f32
  %r = arith.truncf %s fastmath<contract> : f32 to bf16
  return %r : bf16
}

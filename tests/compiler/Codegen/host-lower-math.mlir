// RUN: kiln-opt %s --split-input-file --kiln-host-lower-math | FileCheck %s

// Vector f32 exp becomes Kiln's expansion on whole vectors: x clamped to
// [-104, 89], n = round(x log2 e) by adding and subtracting 1.5 * 2^23 (no
// floor: no floorf call before SSE4.1), Cody-Waite r = x - n c1 - n c2, a
// polynomial written as contractable multiply-adds, and 2^n as two exponent
// fields built with integer ops (2^(n - h) * 2^h, h = n >> 1, so that the
// result rounds into the subnormals). No math.exp is left for LLVM to
// scalarize into expf calls.
// CHECK-LABEL: func.func @vector_exp(
// CHECK-SAME: %[[X:.+]]: vector<16xf32>
// CHECK-NOT: math.exp
// CHECK-NOT: math.floor
// CHECK: arith.cmpf ogt, %[[X]], %{{.+}} : vector<16xf32>
// CHECK: arith.cmpf olt
// CHECK: %[[T:.+]] = arith.addf %{{.+}}, %[[MAGIC:.+]] : vector<16xf32>
// CHECK: %[[N:.+]] = arith.subf %[[T]], %[[MAGIC]] : vector<16xf32>
// CHECK: arith.mulf %[[N]], %{{.+}} : vector<16xf32>
// CHECK: arith.mulf %{{.+}} fastmath<contract> : vector<16xf32>
// CHECK: arith.addf %{{.+}} fastmath<contract> : vector<16xf32>
// CHECK: %[[K:.+]] = arith.fptosi %[[N]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[H:.+]] = arith.shrsi %[[K]], %{{.+}} : vector<16xi32>
// CHECK: arith.subi %[[K]], %[[H]] : vector<16xi32>
// CHECK: arith.shli %{{.+}} : vector<16xi32>
// CHECK: arith.bitcast %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK: arith.mulf
// CHECK: arith.shli %{{.+}} : vector<16xi32>
// CHECK: arith.bitcast %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK: %[[R:.+]] = arith.mulf
// CHECK-NOT: math.exp
// CHECK-NOT: math.floor
// CHECK: return %[[R]]
func.func @vector_exp(%x: vector<16xf32>) -> vector<16xf32> {
  %r = math.exp %x : vector<16xf32>
  return %r : vector<16xf32>
}

// -----

// Scalars too; tanh is approximated (a rational function), not expanded into
// exp.
// CHECK-LABEL: func.func @scalar_tanh(
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: return
func.func @scalar_tanh(%x: f32) -> f32 {
  %r = math.tanh %x : f32
  return %r : f32
}

// -----

// log of a denormal: the input is scaled by 2^23 (0x4B000000) before the
// approximation and 23 * ln(2) is subtracted after it.
// CHECK-LABEL: func.func @log_denormal(
// CHECK-SAME: %[[X:.+]]: vector<8xf32>
// CHECK-DAG: %[[MIN:.+]] = arith.constant dense<1.17549435E-38> : vector<8xf32>
// CHECK-DAG: %[[SCALE:.+]] = arith.constant dense<0x4B000000> : vector<8xf32>
// CHECK-DAG: %[[SHIFT:.+]] = arith.constant dense<15.9423847> : vector<8xf32>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant dense<0xFF800000> : vector<8xf32>
// CHECK: %[[DENORMAL:.+]] = arith.cmpf olt, %[[X]], %[[MIN]]
// CHECK: %[[SCALED:.+]] = arith.mulf %[[X]], %[[SCALE]]
// CHECK: %[[IN:.+]] = arith.select %[[DENORMAL]], %[[SCALED]], %[[X]]
// CHECK-NOT: math.log
// CHECK: %[[ISZERO:.+]] = arith.cmpf oeq, %[[IN]], %[[ZERO]]
// CHECK: %[[APPROX:.+]] = arith.select %[[ISZERO]], %[[NEGINF]], %{{.+}} : vector<8xi1>, vector<8xf32>
// CHECK: %[[CORR:.+]] = arith.select %[[DENORMAL]], %[[SHIFT]], %[[ZERO]]
// CHECK: %[[R:.+]] = arith.subf %[[APPROX]], %[[CORR]]
// CHECK: return %[[R]]
func.func @log_denormal(%x: vector<8xf32>) -> vector<8xf32> {
  %r = math.log %x : vector<8xf32>
  return %r : vector<8xf32>
}

// -----

// log2 subtracts 23.
// CHECK-LABEL: func.func @log2_denormal(
// CHECK: %[[SHIFT:.+]] = arith.constant 2.300000e+01 : f32
// CHECK-NOT: math.log2
// CHECK: arith.select %{{.+}}, %[[SHIFT]], %{{.+}} : f32
// CHECK: arith.subf
func.func @log2_denormal(%x: f32) -> f32 {
  %r = math.log2 %x : f32
  return %r : f32
}

// -----

// f64 stays on libm: exp is kept, tanh is expanded into exp (as
// math-expand-ops does), and the log has no denormal scaling.
// CHECK-LABEL: func.func @f64_stays(
// CHECK: math.exp %{{.+}} : vector<4xf64>
// CHECK: math.exp %{{.+}} : vector<4xf64>
// CHECK-NOT: math.tanh
// CHECK: %[[L:.+]] = math.log %{{.+}} : f64
// CHECK-NEXT: return %{{.+}}, %{{.+}}, %[[L]]
func.func @f64_stays(%x: vector<4xf64>, %y: f64) -> (vector<4xf64>, vector<4xf64>, f64) {
  %e = math.exp %x : vector<4xf64>
  %t = math.tanh %x : vector<4xf64>
  %l = math.log %y : f64
  return %e, %t, %l : vector<4xf64>, vector<4xf64>, f64
}

// -----

// f32 functions whose approximation is not accurate over the whole range
// stay for libm.
// CHECK-LABEL: func.func @not_approximated(
// CHECK: math.sin %{{.+}} : f32
// CHECK: math.cos %{{.+}} : f32
// CHECK: math.atan %{{.+}} : f32
func.func @not_approximated(%x: f32) -> (f32, f32, f32) {
  %s = math.sin %x : f32
  %c = math.cos %x : f32
  %a = math.atan %x : f32
  return %s, %c, %a : f32, f32, f32
}

// -----

// Compound functions are expanded and their exp approximated in turn.
// CHECK-LABEL: func.func @sinh(
// CHECK-NOT: math.sinh
// CHECK-NOT: math.exp
// CHECK: arith.fptosi
// CHECK-NOT: math.exp
// CHECK: return
func.func @sinh(%x: f32) -> f32 {
  %r = math.sinh %x : f32
  return %r : f32
}

// -----

// Logs created by expansions get the denormal scaling too: powf(x, y) is
// exp(log(x) * y), both approximated.
// CHECK-LABEL: func.func @powf_variable(
// CHECK-NOT: math.powf
// CHECK-NOT: math.log
// CHECK-NOT: math.exp
// CHECK: arith.constant 0x4B000000 : f32
// CHECK-NOT: math.log
// CHECK-NOT: math.exp
// CHECK: return
func.func @powf_variable(%x: f32, %y: f32) -> f32 {
  %r = math.powf %x, %y : f32
  return %r : f32
}

// -----

// Powers with constant exponents are multiplications or square roots.
// CHECK-LABEL: func.func @powf_constant(
// CHECK-SAME: %[[X:.+]]: f32
// CHECK-NOT: math.powf
// CHECK: %[[SQ:.+]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[RT:.+]] = math.sqrt %[[X]] : f32
// CHECK: return %[[SQ]], %[[RT]]
func.func @powf_constant(%x: f32) -> (f32, f32) {
  %c2 = arith.constant 2.0 : f32
  %ch = arith.constant 0.5 : f32
  %a = math.powf %x, %c2 : f32
  %b = math.powf %x, %ch : f32
  return %a, %b : f32, f32
}

// -----

// An fma of the program becomes a multiply-add that LLVM may contract (no
// fmaf call without FMA hardware).
// CHECK-LABEL: func.func @fma(
// CHECK-SAME: %[[A:.+]]: f32, %[[B:.+]]: f32, %[[C:.+]]: f32
// CHECK: %[[P:.+]] = arith.mulf %[[A]], %[[B]] fastmath<contract> : f32
// CHECK: %[[S:.+]] = arith.addf %[[P]], %[[C]] fastmath<contract> : f32
// CHECK: return %[[S]]
func.func @fma(%a: f32, %b: f32, %c: f32) -> f32 {
  %r = math.fma %a, %b, %c : f32
  return %r : f32
}

// -----

// f32 floor: truncation through i32, minus one where it rounded up, the sign
// of x (for -0), and x itself from 2^23 (0x4B000000) up, for infinities and
// NaN. f64 floor is left to LLVM.
// CHECK-LABEL: func.func @floor(
// CHECK-SAME: %[[X:.+]]: vector<4xf32>, %[[Y:.+]]: f64
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : vector<4xf32>
// CHECK-DAG: %[[BIG:.+]] = arith.constant dense<0x4B000000> : vector<4xf32>
// CHECK: %[[I:.+]] = arith.fptosi %[[X]] : vector<4xf32> to vector<4xi32>
// CHECK: %[[T:.+]] = arith.sitofp %[[I]] : vector<4xi32> to vector<4xf32>
// CHECK: %[[UP:.+]] = arith.cmpf ogt, %[[T]], %[[X]]
// CHECK: %[[M:.+]] = arith.subf %[[T]], %[[ONE]]
// CHECK: %[[F:.+]] = arith.select %[[UP]], %[[M]], %[[T]]
// CHECK: %[[S:.+]] = math.copysign %[[F]], %[[X]]
// CHECK: %[[A:.+]] = math.absf %[[X]]
// CHECK: %[[SMALL:.+]] = arith.cmpf olt, %[[A]], %[[BIG]]
// CHECK: %[[R:.+]] = arith.select %[[SMALL]], %[[S]], %[[X]]
// CHECK: %[[D:.+]] = math.floor %[[Y]] : f64
// CHECK: return %[[R]], %[[D]]
func.func @floor(%x: vector<4xf32>, %y: f64) -> (vector<4xf32>, f64) {
  %r = math.floor %x : vector<4xf32>
  %d = math.floor %y : f64
  return %r, %d : vector<4xf32>, f64
}

"""Conversions between element types, comparisons and i1 values."""

import numpy as np

from e2elib import Case, Run, T, bf16, elementwise_func

rng = np.random.default_rng(5)
CASES = []
SHAPE = (2, 5)

x = np.array([[-2.75, -0.5, 0.5, 1.99, 100.25], [-100.9, 7.5, -7.5, 0.0, 3.0]], np.float32)
CASES.append(Case(
    "types/fptosi_f32_i32.mlir",
    "arith.fptosi f32 -> i32 truncates toward zero.",
    elementwise_func("main", SHAPE, ["f32"], "i32", """
        %0 = arith.fptosi %x0 : f32 to i32
        linalg.yield %0 : i32"""),
    [Run("main", [T(x, "f32")], [T(np.trunc(x), "i32")])]))

i = rng.integers(-(1 << 20), 1 << 20, size=SHAPE)
CASES.append(Case(
    "types/sitofp_i32_f64.mlir",
    "arith.sitofp i32 -> f64, scaled by 0.5.",
    elementwise_func("main", SHAPE, ["i32"], "f64", """
        %h = arith.constant 0.5 : f64
        %0 = arith.sitofp %x0 : i32 to f64
        %1 = arith.mulf %0, %h : f64
        linalg.yield %1 : f64"""),
    [Run("main", [T(i, "i32")], [T(i * 0.5, "f64")])]))

u = np.array([[0, 1, 127, -128, -1], [-56, 100, -100, 5, -5]])
CASES.append(Case(
    "types/uitofp_extui_i8.mlir",
    "Unsigned views of i8: arith.uitofp i8 -> f32 and arith.extui i8 -> i32 (e.g. -1 -> 255).",
    """func.func @main(%x: tensor<2x5xi8>) -> (tensor<2x5xf32>, tensor<2x5xi32>) {
  %e0 = tensor.empty() : tensor<2x5xf32>
  %e1 = tensor.empty() : tensor<2x5xi32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x5xi8>) outs(%e0, %e1 : tensor<2x5xf32>, tensor<2x5xi32>) {
  ^bb0(%v: i8, %o0: f32, %o1: i32):
    %0 = arith.uitofp %v : i8 to f32
    %1 = arith.extui %v : i8 to i32
    linalg.yield %0, %1 : f32, i32
  } -> (tensor<2x5xf32>, tensor<2x5xi32>)
  return %r#0, %r#1 : tensor<2x5xf32>, tensor<2x5xi32>
}""",
    [Run("main", [T(u, "i8")], [T(u.astype(np.uint8).astype(np.float32), "f32"), T(u.astype(np.uint8), "i32")])]))

i = rng.integers(-(1 << 40), 1 << 40, size=SHAPE)
j = rng.integers(-128, 128, size=SHAPE)
CASES.append(Case(
    "types/extsi_trunci.mlir",
    "arith.extsi i8 -> i64 added to an i64, then arith.trunci i64 -> i16 (keeps the low 16 bits).",
    elementwise_func("main", SHAPE, ["i64", "i8"], "i16", """
        %0 = arith.extsi %x1 : i8 to i64
        %1 = arith.addi %x0, %0 : i64
        %2 = arith.trunci %1 : i64 to i16
        linalg.yield %2 : i16"""),
    [Run("main", [T(i, "i64"), T(j, "i8")], [T((i + j).astype(np.int16), "i16")])]))

h = (rng.integers(-400, 400, size=SHAPE) / 16).astype(np.float16)
f = rng.uniform(-100, 100, size=SHAPE).astype(np.float32)
CASES.append(Case(
    "types/extf_truncf_f16.mlir",
    "arith.extf f16 -> f32, add an f32, arith.truncf back to f16 (rounds to nearest).",
    elementwise_func("main", SHAPE, ["f16", "f32"], "f16", """
        %0 = arith.extf %x0 : f16 to f32
        %1 = arith.addf %0, %x1 : f32
        %2 = arith.truncf %1 : f32 to f16
        linalg.yield %2 : f16"""),
    [Run("main", [T(h, "f16"), T(f, "f32")], [T(h.astype(np.float32) + f, "f16")], atol=0, rtol=1e-3)]))

f = rng.uniform(-100, 100, size=SHAPE).astype(np.float32)
CASES.append(Case(
    "types/truncf_extf_bf16.mlir",
    "arith.truncf f32 -> bf16 then arith.extf bf16 -> f64: returns the bf16 rounding of the input as f64.",
    elementwise_func("main", SHAPE, ["f32"], "f64", """
        %0 = arith.truncf %x0 : f32 to bf16
        %1 = arith.extf %0 : bf16 to f64
        linalg.yield %1 : f64"""),
    # Exact: the result is the bf16 value (ties to even), no looser tolerance needed.
    [Run("main", [T(f, "f32")], [T(bf16(f).astype(np.float64), "f64")], atol=0, rtol=0)]))

a = rng.uniform(-1, 1, size=SHAPE).astype(np.float32)
b = rng.uniform(-1, 1, size=SHAPE).astype(np.float32)
b[0, 0] = a[0, 0]
CASES.append(Case(
    "types/cmpf_select_i1.mlir",
    "arith.cmpf olt giving an i1 output, arith.select on it giving min(a, b) (two outputs).",
    """func.func @main(%a: tensor<2x5xf32>, %b: tensor<2x5xf32>) -> (tensor<2x5xi1>, tensor<2x5xf32>) {
  %e0 = tensor.empty() : tensor<2x5xi1>
  %e1 = tensor.empty() : tensor<2x5xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x5xf32>, tensor<2x5xf32>) outs(%e0, %e1 : tensor<2x5xi1>, tensor<2x5xf32>) {
  ^bb0(%x: f32, %y: f32, %o0: i1, %o1: f32):
    %lt = arith.cmpf olt, %x, %y : f32
    %m = arith.select %lt, %x, %y : f32
    linalg.yield %lt, %m : i1, f32
  } -> (tensor<2x5xi1>, tensor<2x5xf32>)
  return %r#0, %r#1 : tensor<2x5xi1>, tensor<2x5xf32>
}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(a < b, "i1"), T(np.minimum(a, b), "f32")])]))

c = rng.integers(0, 2, size=SHAPE).astype(bool)
a = rng.integers(-100, 100, size=SHAPE)
b = rng.integers(-100, 100, size=SHAPE)
CASES.append(Case(
    "types/select_i1_input_i16.mlir",
    "An i1 input used as the condition of arith.select over i16 values.",
    elementwise_func("main", SHAPE, ["i1", "i16", "i16"], "i16", """
        %0 = arith.select %x0, %x1, %x2 : i16
        linalg.yield %0 : i16"""),
    [Run("main", [T(c, "i1"), T(a, "i16"), T(b, "i16")], [T(np.where(c, a, b), "i16")])]))

x = rng.integers(-300, 300, size=SHAPE)
CASES.append(Case(
    "types/cmpi_i64_to_i1.mlir",
    "arith.cmpi sge on i64 against a constant, returned as an i1 tensor.",
    elementwise_func("main", SHAPE, ["i64"], "i1", """
        %c = arith.constant 17 : i64
        %0 = arith.cmpi sge, %x0, %c : i64
        linalg.yield %0 : i1"""),
    [Run("main", [T(x, "i64")], [T(x >= 17, "i1")])]))

# Integer division by zero and INT_MIN / -1: defined results (RISC-V rules,
# kiln-define-integer-division), never a trap: x / 0 = -1, x % 0 = x,
# INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0.
IMIN = np.iinfo(np.int32).min
num = np.array([7, -7, IMIN, IMIN, 9, -9, 0, 5], dtype=np.int64)
den = np.array([0, 0, -1, 0, 2, 4, 0, -3], dtype=np.int64)
def c_div(n, d):
    if d == 0:
        return -1
    if n == IMIN and d == -1:
        return IMIN
    return int(np.trunc(n / d))
def c_rem(n, d):
    if d == 0:
        return n
    if n == IMIN and d == -1:
        return 0
    return n - c_div(n, d) * d
CASES.append(Case(
    "types/divsi_remsi_by_zero_i32.mlir",
    "arith.divsi / remsi by zero and INT_MIN / -1 give defined results (x/0 = -1, x%0 = x, INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0) instead of trapping.",
    """func.func @main(%n: tensor<8xi32>, %d: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {
  %e = tensor.empty() : tensor<8xi32>
  %q, %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%n, %d : tensor<8xi32>, tensor<8xi32>) outs(%e, %e : tensor<8xi32>, tensor<8xi32>) {
  ^bb0(%x: i32, %y: i32, %o0: i32, %o1: i32):
    %0 = arith.divsi %x, %y : i32
    %1 = arith.remsi %x, %y : i32
    linalg.yield %0, %1 : i32, i32
  } -> (tensor<8xi32>, tensor<8xi32>)
  return %q, %r : tensor<8xi32>, tensor<8xi32>
}""",
    [Run("main", [T(num, "i32"), T(den, "i32")],
         [T(np.array([c_div(n, d) for n, d in zip(num, den)]), "i32"),
          T(np.array([c_rem(n, d) for n, d in zip(num, den)]), "i32")])]))

un = np.array([7, 0, 4294967295, 10, 3, 100, 1, 8], dtype=np.int64)
ud = np.array([0, 0, 0, 3, 7, 9, 1, 0], dtype=np.int64)
CASES.append(Case(
    "types/divui_remui_by_zero_i32.mlir",
    "arith.divui / remui by zero give all ones and the dividend instead of trapping.",
    """func.func @main(%n: tensor<8xi32>, %d: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {
  %e = tensor.empty() : tensor<8xi32>
  %q, %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%n, %d : tensor<8xi32>, tensor<8xi32>) outs(%e, %e : tensor<8xi32>, tensor<8xi32>) {
  ^bb0(%x: i32, %y: i32, %o0: i32, %o1: i32):
    %0 = arith.divui %x, %y : i32
    %1 = arith.remui %x, %y : i32
    linalg.yield %0, %1 : i32, i32
  } -> (tensor<8xi32>, tensor<8xi32>)
  return %q, %r : tensor<8xi32>, tensor<8xi32>
}""",
    [Run("main", [T(un.astype(np.uint32).view(np.int32).astype(np.int64), "i32"), T(ud, "i32")],
         [T(np.array([0xFFFFFFFF if d == 0 else n // d for n, d in zip(un, ud)], dtype=np.uint32).view(np.int32), "i32"),
          T(np.array([n if d == 0 else n % d for n, d in zip(un, ud)], dtype=np.uint32).view(np.int32), "i32")])]))

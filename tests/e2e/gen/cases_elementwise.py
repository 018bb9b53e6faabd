"""Elementwise programs: one per element type, math ops, splat and rank-0 values."""

import math

import numpy as np

from e2elib import Case, Run, T, bf16, elementwise_func

rng = np.random.default_rng(1)
SHAPE = (3, 4)
CASES = []


def wrap(x, dtype):
    """Two's complement wrap-around of int64 results to `dtype`."""
    return np.asarray(x, dtype=np.int64).astype(dtype)


def quarters(shape, lo=-16, hi=16):
    """Values k/4: exact in f16 and bf16 and far from rounding ties in products."""
    return rng.integers(lo, hi, size=shape).astype(np.float32) / 4


# i1: boolean logic.
a, b, c = (rng.integers(0, 2, size=(2, 4)).astype(bool) for _ in range(3))
a[0, :] = [0, 0, 1, 1]
b[0, :] = [0, 1, 0, 1]
CASES.append(Case(
    "elementwise/logic_i1.mlir",
    "i1 elementwise: (a and b) xor (c or a).",
    elementwise_func("main", (2, 4), ["i1"] * 3, "i1", """
        %0 = arith.andi %x0, %x1 : i1
        %1 = arith.ori %x2, %x0 : i1
        %2 = arith.xori %0, %1 : i1
        linalg.yield %2 : i1"""),
    [Run("main", [T(a, "i1"), T(b, "i1"), T(c, "i1")], [T((a & b) ^ (c | a), "i1")])]))

# i8: wrap-around on add and mul (values chosen so both overflow).
a = rng.integers(-128, 128, size=SHAPE)
b = rng.integers(-128, 128, size=SHAPE)
a[0, :2], b[0, :2] = [100, -100], [100, -100]
CASES.append(Case(
    "elementwise/wrap_i8.mlir",
    "i8 elementwise with two's complement wrap-around: (a + b) - (a * b).",
    elementwise_func("main", SHAPE, ["i8", "i8"], "i8", """
        %0 = arith.addi %x0, %x1 : i8
        %1 = arith.muli %x0, %x1 : i8
        %2 = arith.subi %0, %1 : i8
        linalg.yield %2 : i8"""),
    [Run("main", [T(a, "i8"), T(b, "i8")],
         [T(wrap(wrap(a + b, np.int8).astype(np.int64) - wrap(a * b, np.int8), np.int8), "i8")])]))

# i16: multiply, arithmetic shift right, xor.
a = rng.integers(-3000, 3000, size=SHAPE)
b = rng.integers(-40, 40, size=SHAPE)
prod = wrap(a * b, np.int16).astype(np.int64)
CASES.append(Case(
    "elementwise/shift_i16.mlir",
    "i16 elementwise: ((a * b) >> 2 arithmetic) xor a, with wrap-around on the product.",
    elementwise_func("main", SHAPE, ["i16", "i16"], "i16", """
        %c2 = arith.constant 2 : i16
        %0 = arith.muli %x0, %x1 : i16
        %1 = arith.shrsi %0, %c2 : i16
        %2 = arith.xori %1, %x0 : i16
        linalg.yield %2 : i16"""),
    [Run("main", [T(a, "i16"), T(b, "i16")], [T(wrap((prod >> 2) ^ a, np.int16), "i16")])]))

# i32: signed division and remainder round toward zero.
a = rng.integers(-100000, 100000, size=SHAPE)
b = rng.integers(1, 500, size=SHAPE) * rng.choice([-1, 1], size=SHAPE)
q = np.trunc(a / b).astype(np.int64)
rem = a - q * b
CASES.append(Case(
    "elementwise/divrem_i32.mlir",
    "i32 elementwise: divsi/remsi (toward zero, mixed signs) combined as q * 1000 + r, then min with a.",
    elementwise_func("main", SHAPE, ["i32", "i32"], "i32", """
        %c1000 = arith.constant 1000 : i32
        %0 = arith.divsi %x0, %x1 : i32
        %1 = arith.remsi %x0, %x1 : i32
        %2 = arith.muli %0, %c1000 : i32
        %3 = arith.addi %2, %1 : i32
        %4 = arith.minsi %3, %x0 : i32
        linalg.yield %4 : i32"""),
    [Run("main", [T(a, "i32"), T(b, "i32")], [T(np.minimum(q * 1000 + rem, a), "i32")])]))

# i64: values beyond 32 bits.
a = rng.integers(-(1 << 40), 1 << 40, size=SHAPE)
b = rng.integers(-30000, 30000, size=SHAPE)
c = rng.integers(-(1 << 50), 1 << 50, size=SHAPE)
CASES.append(Case(
    "elementwise/muladd_i64.mlir",
    "i64 elementwise with values past 2^32: max(a * b + c, c).",
    elementwise_func("main", SHAPE, ["i64"] * 3, "i64", """
        %0 = arith.muli %x0, %x1 : i64
        %1 = arith.addi %0, %x2 : i64
        %2 = arith.maxsi %1, %x2 : i64
        linalg.yield %2 : i64"""),
    [Run("main", [T(a, "i64"), T(b, "i64"), T(c, "i64")], [T(np.maximum(a * b + c, c), "i64")])]))

# f16.
a, b, c = quarters(SHAPE), quarters(SHAPE), quarters(SHAPE)
h = lambda x: x.astype(np.float16)
CASES.append(Case(
    "elementwise/muladd_f16.mlir",
    "f16 elementwise: (a * b + c) / 4 - a.",
    elementwise_func("main", SHAPE, ["f16"] * 3, "f16", """
        %c4 = arith.constant 4.0 : f16
        %0 = arith.mulf %x0, %x1 : f16
        %1 = arith.addf %0, %x2 : f16
        %2 = arith.divf %1, %c4 : f16
        %3 = arith.subf %2, %x0 : f16
        linalg.yield %3 : f16"""),
    [Run("main", [T(a, "f16"), T(b, "f16"), T(c, "f16")],
         [T((h(a) * h(b) + h(c)) / np.float16(4) - h(a), "f16")])]))

# bf16: products of k/4 values with more than 8 significant bits get rounded.
a = quarters(SHAPE, -64, 64)
b = quarters(SHAPE, -64, 64)
c = quarters(SHAPE)
CASES.append(Case(
    "elementwise/mulsub_bf16.mlir",
    "bf16 elementwise: max(a * b - c, a), each op rounded to bf16.",
    elementwise_func("main", SHAPE, ["bf16"] * 3, "bf16", """
        %0 = arith.mulf %x0, %x1 : bf16
        %1 = arith.subf %0, %x2 : bf16
        %2 = arith.maximumf %1, %x0 : bf16
        linalg.yield %2 : bf16"""),
    [Run("main", [T(a, "bf16"), T(b, "bf16"), T(c, "bf16")],
         [T(np.maximum(bf16(bf16(a * b) - c), a), "bf16")])]))

# f32: several arithmetic ops in one body.
a = rng.uniform(-4, 4, size=SHAPE).astype(np.float32)
b = rng.uniform(0.5, 3, size=SHAPE).astype(np.float32) * rng.choice([-1, 1], size=SHAPE)
CASES.append(Case(
    "elementwise/arith_f32.mlir",
    "f32 elementwise: max((a - b) * a / b, -a).",
    elementwise_func("main", SHAPE, ["f32", "f32"], "f32", """
        %0 = arith.subf %x0, %x1 : f32
        %1 = arith.mulf %0, %x0 : f32
        %2 = arith.divf %1, %x1 : f32
        %3 = arith.negf %x0 : f32
        %4 = arith.maximumf %2, %3 : f32
        linalg.yield %4 : f32"""),
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(np.maximum((a - b) * a / b, -a), "f32")])]))

# linalg named elementwise ops.
a = rng.uniform(-4, 4, size=(2, 3)).astype(np.float32)
b = rng.uniform(-4, 4, size=(2, 3)).astype(np.float32)
CASES.append(Case(
    "elementwise/add_named_f32.mlir",
    "linalg.add then linalg.mul (named elementwise ops): (a + b) * b.",
    """func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %s = linalg.add ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %m = linalg.mul ins(%s, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %m : tensor<2x3xf32>
}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T((a + b) * b, "f32")])]))

# f64: the small term is lost in f32, kept in f64.
a = rng.uniform(1, 2, size=SHAPE) * 1e6
b = rng.uniform(-1, 1, size=SHAPE) * 1e-6
c = rng.uniform(0.5, 2, size=SHAPE)
CASES.append(Case(
    "elementwise/precision_f64.mlir",
    "f64 elementwise needing double precision: ((a + b) - a) * c / 3 (b is 1e-12 of a).",
    elementwise_func("main", SHAPE, ["f64"] * 3, "f64", """
        %c3 = arith.constant 3.0 : f64
        %0 = arith.addf %x0, %x1 : f64
        %1 = arith.subf %0, %x0 : f64
        %2 = arith.mulf %1, %x2 : f64
        %3 = arith.divf %2, %c3 : f64
        linalg.yield %3 : f64"""),
    [Run("main", [T(a, "f64"), T(b, "f64"), T(c, "f64")], [T(((a + b) - a) * c / 3, "f64")],
         atol=1e-15, rtol=1e-9)]))

# math ops on f32, one per file so a failure names the op.
x = rng.uniform(-3, 3, size=SHAPE).astype(np.float32)
p = rng.uniform(0.01, 20, size=SHAPE).astype(np.float32)
for op, inp, ref, atol, rtol in [
    ("exp", x, np.exp, 1e-6, 2e-5),
    ("tanh", x, np.tanh, 1e-6, 2e-5),
    ("sqrt", p, np.sqrt, 1e-6, 1e-5),
    ("log", p, np.log, 1e-6, 2e-5),
]:
    CASES.append(Case(
        f"elementwise/math_{op}_f32.mlir",
        f"math.{op} on f32.",
        elementwise_func("main", SHAPE, ["f32"], "f32", f"""
            %0 = math.{op} %x0 : f32
            linalg.yield %0 : f32"""),
        [Run("main", [T(inp, "f32")], [T(ref(inp.astype(np.float64)), "f32")], atol=atol, rtol=rtol)]))

# math in f64 and f16.
x = rng.uniform(0.1, 4, size=SHAPE)
CASES.append(Case(
    "elementwise/math_f64.mlir",
    "math.exp, math.log, math.sqrt on f64: exp(log(x) / 2) + sqrt(x).",
    elementwise_func("main", SHAPE, ["f64"], "f64", """
        %c2 = arith.constant 2.0 : f64
        %0 = math.log %x0 : f64
        %1 = arith.divf %0, %c2 : f64
        %2 = math.exp %1 : f64
        %3 = math.sqrt %x0 : f64
        %4 = arith.addf %2, %3 : f64
        linalg.yield %4 : f64"""),
    # Through libm one value at a time: numpy's f64 exp and log take SIMD
    # paths on CPUs with AVX-512 whose last bits differ from other CPUs',
    # and the generated file must not depend on the machine (gen --check).
    [Run("main", [T(x, "f64")],
         [T(np.vectorize(lambda v: math.exp(math.log(v) / 2) + math.sqrt(v))(x), "f64")],
         atol=1e-12, rtol=1e-10)]))

x = quarters(SHAPE, -8, 8)
CASES.append(Case(
    "elementwise/math_f16.mlir",
    "math.exp and math.tanh on f16: exp(x / 2) * tanh(x).",
    elementwise_func("main", SHAPE, ["f16"], "f16", """
        %c05 = arith.constant 0.5 : f16
        %0 = arith.mulf %x0, %c05 : f16
        %1 = math.exp %0 : f16
        %2 = math.tanh %x0 : f16
        %3 = arith.mulf %1, %2 : f16
        linalg.yield %3 : f16"""),
    [Run("main", [T(x, "f16")], [T(np.exp(x / 2) * np.tanh(x), "f16")], atol=1e-2, rtol=1e-2)]))

# Unary ops.
x = (rng.uniform(-5, 5, size=SHAPE) * 4).round().astype(np.float32) / 4 + 0.125
CASES.append(Case(
    "elementwise/unary_f32.mlir",
    "Unary f32 ops: floor(x) + ceil(|x|) * 2 - (-x).",
    elementwise_func("main", SHAPE, ["f32"], "f32", """
        %c2 = arith.constant 2.0 : f32
        %0 = math.floor %x0 : f32
        %1 = math.absf %x0 : f32
        %2 = math.ceil %1 : f32
        %3 = arith.mulf %2, %c2 : f32
        %4 = arith.addf %0, %3 : f32
        %5 = arith.negf %x0 : f32
        %6 = arith.subf %4, %5 : f32
        linalg.yield %6 : f32"""),
    [Run("main", [T(x, "f32")], [T(np.floor(x) + np.ceil(np.abs(x)) * 2 + x, "f32")])]))

# Splat input syntax.
a = rng.uniform(-2, 2, size=(4, 5)).astype(np.float32)
CASES.append(Case(
    "elementwise/splat_input_f32.mlir",
    "An input given in splat syntax (4x5xf32=1.5 fills the tensor): a * b - b.",
    elementwise_func("main", (4, 5), ["f32", "f32"], "f32", """
        %0 = arith.mulf %x0, %x1 : f32
        %1 = arith.subf %0, %x1 : f32
        linalg.yield %1 : f32"""),
    [Run("main", [T(a, "f32"), T(np.full((4, 5), 1.5), "f32", splat=True)],
         [T(a * 1.5 - 1.5, "f32")])]))

# Rank-0 tensors.
CASES.append(Case(
    "elementwise/rank0_f32.mlir",
    "Rank-0 tensors in and out: a * b + a.",
    """func.func @main(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>],
                       iterator_types = []}
      ins(%a, %b : tensor<f32>, tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %0, %x : f32
    linalg.yield %1 : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}""",
    [Run("main", [T(np.array(2.5), "f32"), T(np.array(-3.25), "f32")], [T(np.array(2.5 * -3.25 + 2.5), "f32")])]))

# f32 exp, log, tanh and erf over their whole range (the host target computes
# them with inline polynomial approximations; docs/compiler.md): random
# values across the range plus extremes (zero, signed zero, denormals, values
# next to overflow and underflow, the largest finite float). Rows of 33 run
# through full vectors and the peeled remainder. Tolerances are a few ulp;
# results below 2^-126 may be flushed to zero (the atol of exp).
range_rng = np.random.default_rng(7)
RANGE_SHAPE = (8, 33)


def with_extremes(values, extremes):
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    flat[:len(extremes)] = extremes
    return flat.reshape(RANGE_SHAPE).astype(np.float32)


F32_TINY = float(np.finfo(np.float32).tiny)
F32_MAX = float(np.finfo(np.float32).max)
n_range = RANGE_SHAPE[0] * RANGE_SHAPE[1]
x_exp = with_extremes(range_rng.uniform(-87, 88.5, n_range),
                      [0.0, -0.0, 1e-40, -1e-40, 1e-7, -1e-7, 88.7, -87.3,
                       -95.0, -103.0, 1.0, -1.0, 0.5, 20.0, -20.0])
x_log = with_extremes(np.exp2(range_rng.uniform(-149, 128, n_range)),
                      [1e-45, 1e-40, 1e-38, F32_TINY, 1.0, 1.0000001,
                       0.99999994, 2.0, 0.5, 10.0, 3e38, F32_MAX])
x_tanh = with_extremes(range_rng.uniform(-12, 12, n_range),
                       [0.0, -0.0, 1e-40, -1e-40, 1e-30, 3e-4, -3e-4, 4e-4,
                        0.5, -0.5, 7.99, -7.99, 8.5, -9.0, 100.0, -3e38])
x_erf = with_extremes(range_rng.uniform(-5, 5, n_range),
                      [0.0, -0.0, 1e-40, 1e-20, 1e-3, -1e-3, 0.8, 2.0, 3.75,
                       3.76, -3.76, 10.0, -3e38])
for op, inp, ref, atol, rtol in [
    ("exp", x_exp, np.exp, 1e-37, 1e-6),
    ("log", x_log, np.log, 1e-7, 1e-6),
    ("tanh", x_tanh, np.tanh, 1e-7, 1e-6),
    ("erf", x_erf, np.vectorize(math.erf), 5e-7, 1e-6),
]:
    CASES.append(Case(
        f"elementwise/math_{op}_f32_range.mlir",
        f"math.{op} on f32 over its whole range, with extremes.",
        elementwise_func("main", RANGE_SHAPE, ["f32"], "f32", f"""
            %0 = math.{op} %x0 : f32
            linalg.yield %0 : f32"""),
        [Run("main", [T(inp, "f32")], [T(ref(inp.astype(np.float64)), "f32")],
             atol=atol, rtol=rtol)]))

# sin and cos of one value (rotary embeddings, FFTs): x86-64 code generation
# merges the two libm calls into one sincos / sincosf call.
x_rot = np.linspace(-6.0, 6.0, 16).reshape(2, 8)
# (f32 only: f64 sin has no GPU lowering yet, and the corpus runs on GPUs.)
for ty, dt, tol in (("f32", np.float32, 2e-6),):
    xv = x_rot.astype(dt)
    CASES.append(Case(
        f"elementwise/math_sin_cos_same_value_{ty}.mlir",
        f"math.sin and math.cos of the same {ty} value in one kernel (compiles to one sincos call on the host).",
        elementwise_func("main", (2, 8), [ty], ty, f"""
        %s = math.sin %x0 : {ty}
        %c = math.cos %x0 : {ty}
        %0 = arith.addf %s, %c : {ty}
        linalg.yield %0 : {ty}"""),
        [Run("main", [T(xv, ty)], [T(np.sin(xv.astype(np.float64)) + np.cos(xv.astype(np.float64)), ty)],
             atol=tol, rtol=tol)]))

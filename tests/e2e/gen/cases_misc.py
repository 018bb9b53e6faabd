"""Whole-program shapes: chained dispatches, constants, several functions, direct
returns, repeated calls, the MLP sample."""

import pathlib

import numpy as np

from e2elib import Case, Run, T

rng = np.random.default_rng(6)
CASES = []
REPO = pathlib.Path(__file__).resolve().parents[3]


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def dense_literal(a, fmt):
    if a.ndim == 1:
        return "[" + ", ".join(fmt(v) for v in a) + "]"
    return "[" + ",\n    ".join(dense_literal(r, fmt) for r in a) + "]"


# ---------------------------------------------------------------- chained dispatches
x, w1, w2 = f32(4, 8), f32(8, 6), f32(6, 3)
h = np.maximum(x.astype(np.float64) @ w1, 0)
s = h.sum(axis=1, keepdims=True)
ref = (h / (s + 1)) @ w2
CASES.append(Case(
    "misc/chained_dispatches_f32.mlir",
    "Several dependent dispatches: matmul + relu -> row-sum reduction -> normalize -> matmul.",
    """#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x6xf32>, %w2: tensor<6x3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e46 = tensor.empty() : tensor<4x6xf32>
  %c46 = linalg.fill ins(%zero : f32) outs(%e46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = linalg.matmul ins(%x, %w1 : tensor<4x8xf32>, tensor<8x6xf32>) outs(%c46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<4x6xf32>) outs(%e46 : tensor<4x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = arith.maximumf %v, %zero : f32
    linalg.yield %0 : f32
  } -> tensor<4x6xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %c4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x6xf32>) outs(%c4 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %0 = arith.addf %v, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %s : tensor<4x6xf32>, tensor<4xf32>) outs(%e46 : tensor<4x6xf32>) {
  ^bb0(%v: f32, %sv: f32, %o: f32):
    %0 = arith.addf %sv, %one : f32
    %1 = arith.divf %v, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x6xf32>
  %e43 = tensor.empty() : tensor<4x3xf32>
  %c43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.matmul ins(%n, %w2 : tensor<4x6xf32>, tensor<6x3xf32>) outs(%c43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}""",
    [Run("main", [T(x, "f32"), T(w1, "f32"), T(w2, "f32")], [T(ref, "f32")])]))

# ---------------------------------------------------------------- large constant weight
W = (rng.integers(-16, 17, size=(64, 64)) / 8).astype(np.float32)
x = f32(2, 64, lo=-1, hi=1)
# MLIR float literals need a decimal point ("1.0", not "1").
fmt_w = lambda v: np.format_float_positional(np.float32(v), unique=True, trim="0")
CASES.append(Case(
    "misc/large_constant_weight_f32.mlir",
    "A 64x64 f32 weight as a dense constant inside the function (16 KiB of rodata): x * W.",
    f"""func.func @main(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {{
  %w = arith.constant dense<{dense_literal(W, fmt_w)}> : tensor<64x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64xf32>) -> tensor<2x64xf32>
  %r = linalg.matmul ins(%x, %w : tensor<2x64xf32>, tensor<64x64xf32>) outs(%c : tensor<2x64xf32>) -> tensor<2x64xf32>
  return %r : tensor<2x64xf32>
}}""",
    [Run("main", [T(x, "f32")], [T(x.astype(np.float64) @ W, "f32")], atol=1e-4, rtol=1e-5)]))

# ---------------------------------------------------------------- small constants
x = f32(3, 4)
k = rng.integers(-4, 5, size=(3, 4)).astype(np.float32) / 2
CASES.append(Case(
    "misc/constant_operands_f32.mlir",
    "A splat constant and a non-splat constant tensor as operands of named elementwise ops: (x + 2.5) * K.",
    f"""func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {{
  %splat = arith.constant dense<2.5> : tensor<3x4xf32>
  %k = arith.constant dense<{dense_literal(k, fmt_w)}> : tensor<3x4xf32>
  %e = tensor.empty() : tensor<3x4xf32>
  %0 = linalg.add ins(%x, %splat : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = linalg.mul ins(%0, %k : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}}""",
    [Run("main", [T(x, "f32")], [T((x + 2.5) * k, "f32")])]))

# ---------------------------------------------------------------- several functions
a, b = f32(2, 3), f32(2, 3)
v = rng.integers(-100, 100, size=(5,))
CASES.append(Case(
    "misc/two_functions.mlir",
    "One module, two public functions with different signatures; each is called.",
    """func.func @add(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.add ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

func.func @triple(%v: tensor<5xi32>) -> tensor<5xi32> {
  %c3 = arith.constant 3 : i32
  %e = tensor.empty() : tensor<5xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%v : tensor<5xi32>) outs(%e : tensor<5xi32>) {
  ^bb0(%x: i32, %o: i32):
    %0 = arith.muli %x, %c3 : i32
    linalg.yield %0 : i32
  } -> tensor<5xi32>
  return %r : tensor<5xi32>
}""",
    [Run("add", [T(a, "f32"), T(b, "f32")], [T(a + b, "f32")]),
     Run("triple", [T(v, "i32")], [T(v * 3, "i32")])]))

a, b = f32(2, 2), f32(3)
CASES.append(Case(
    "misc/repeated_calls.mlir",
    "The same function called three times with different inputs (the recorded program is replayed).",
    """func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%c : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}""",
    [Run("main", [T(p, "f32"), T(q, "f32")], [T(p.astype(np.float64) @ q, "f32")])
     for p, q in [(f32(2, 2), f32(2, 2)) for _ in range(3)]]))

# ---------------------------------------------------------------- direct returns
a, b = f32(2, 3), rng.integers(-9, 9, size=(4,))
CASES.append(Case(
    "misc/return_input.mlir",
    "Functions that return their inputs directly: identity, and a swap of two inputs of different types.",
    """func.func @identity(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %a : tensor<2x3xf32>
}

func.func @swap(%a: tensor<2x3xf32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<2x3xf32>) {
  return %b, %a : tensor<4xi32>, tensor<2x3xf32>
}""",
    [Run("identity", [T(a, "f32")], [T(a, "f32")], atol=0, rtol=0),
     Run("swap", [T(a, "f32"), T(b, "i32")], [T(b, "i32"), T(a, "f32")], atol=0, rtol=0)]))

c = np.array([[1.5, -2.25, 3.0], [0.0, 7.125, -8.5]], np.float32)
CASES.append(Case(
    "misc/return_constant.mlir",
    "Functions without inputs that return constants directly (a dense f32 tensor; a rank-0 i64 scalar).",
    """func.func @weights() -> tensor<2x3xf32> {
  %c = arith.constant dense<[[1.5, -2.25, 3.0], [0.0, 7.125, -8.5]]> : tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}

func.func @answer() -> tensor<i64> {
  %c = arith.constant dense<-42000000000> : tensor<i64>
  return %c : tensor<i64>
}""",
    [Run("weights", [], [T(c, "f32")], atol=0, rtol=0),
     Run("answer", [], [T(np.array(-42000000000), "i64")])]))

a, b = f32(3, 3), f32(3, 3)
CASES.append(Case(
    "misc/unused_input.mlir",
    "A function that ignores its first input (the input still has to be given and checked).",
    """func.func @main(%unused: tensor<5xf32>, %b: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %e = tensor.empty() : tensor<3x3xf32>
  %r = linalg.add ins(%b, %b : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
  return %r : tensor<3x3xf32>
}""",
    [Run("main", [T(f32(5), "f32"), T(b, "f32")], [T(b + b, "f32")])]))

# ---------------------------------------------------------------- tensor-level arith / math
a, b = f32(2, 4), f32(2, 4, lo=0.5, hi=3)
CASES.append(Case(
    "misc/tensor_level_arith_f32.mlir",
    "arith and math ops applied to whole tensors (not inside linalg.generic): exp(a) * b - sqrt(b).",
    """func.func @main(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = math.exp %a : tensor<2x4xf32>
  %1 = arith.mulf %0, %b : tensor<2x4xf32>
  %2 = math.sqrt %b : tensor<2x4xf32>
  %3 = arith.subf %1, %2 : tensor<2x4xf32>
  return %3 : tensor<2x4xf32>
}""",
    [Run("main", [T(a, "f32"), T(b, "f32")],
         [T(np.exp(a.astype(np.float64)) * b - np.sqrt(b.astype(np.float64)), "f32")], atol=1e-6, rtol=2e-5)]))

# ---------------------------------------------------------------- the MLP sample
MLP = REPO / "samples" / "mlp"
mlp_x = np.load(MLP / "input.npy")
mlp_y = np.load(MLP / "expected_output.npy")
CASES.append(Case(
    "samples/mlp.test",
    "samples/mlp/mlp.mlir (@predict: 1x64 -> dense+relu -> dense -> softmax) against numpy, inputs inline.",
    "",
    [Run("predict", [T(mlp_x, "f32")], [T(mlp_y, "f32")], atol=1e-6, rtol=2e-5)],
    source="samples/mlp/mlp.mlir"))
CASES.append(Case(
    "samples/mlp_npy_input.test",
    "samples/mlp/mlp.mlir with its input read from samples/mlp/input.npy (--input=@file.npy).",
    "",
    [Run("predict", [T(mlp_x, "f32")], [T(mlp_y, "f32")], atol=1e-6, rtol=2e-5,
         input_args=["@%kiln_src_root/samples/mlp/input.npy"])],
    source="samples/mlp/mlp.mlir"))

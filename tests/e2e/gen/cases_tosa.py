"""TOSA programs (lowered by Kiln through upstream tosa-to-linalg)."""

import numpy as np

from e2elib import Case, Run, T

rng = np.random.default_rng(4)
CASES = []

SHIFT = '%shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>'
FZP = '%zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>'


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


a, b = f32(2, 3), f32(1, 3)
CASES.append(Case(
    "tosa/add_mul_f32.mlir",
    "tosa.add with rank-equal broadcast (1x3 over 2x3), then tosa.mul: (a + b) * a.",
    f"""func.func @main(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {{
  {SHIFT}
  %0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %1 = tosa.mul %0, %a, %shift : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1xi8>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T((a + b) * a, "f32")])]))

a = rng.integers(-1000, 1000, size=(3, 4))
b = rng.integers(-1000, 1000, size=(3, 4))
CASES.append(Case(
    "tosa/add_mul_sub_i32.mlir",
    "Integer tosa.add, tosa.mul (shift 0), tosa.sub on i32: (a + b) * b - a.",
    f"""func.func @main(%a: tensor<3x4xi32>, %b: tensor<3x4xi32>) -> tensor<3x4xi32> {{
  {SHIFT}
  %0 = tosa.add %a, %b : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
  %1 = tosa.mul %0, %b, %shift : (tensor<3x4xi32>, tensor<3x4xi32>, tensor<1xi8>) -> tensor<3x4xi32>
  %2 = tosa.sub %1, %a : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
  return %2 : tensor<3x4xi32>
}}""",
    [Run("main", [T(a, "i32"), T(b, "i32")], [T((a + b) * b - a, "i32")])]))

a, b = f32(2, 3, 4), f32(2, 4, 5)
CASES.append(Case(
    "tosa/matmul_f32.mlir",
    "tosa.matmul with batch 2: 2x3x4 * 2x4x5.",
    f"""func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {{
  {FZP}
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<2x3x4xf32>, tensor<2x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(a.astype(np.float64) @ b, "f32")])]))

x, w, bias = f32(1, 4, 4, 2), f32(3, 3, 3, 2), f32(3)
xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))).astype(np.float64)
ref = np.zeros((1, 4, 4, 3))
for i in range(4):
    for j in range(4):
        ref[0, i, j, :] = np.einsum("hwc,ohwc->o", xp[0, i:i + 3, j:j + 3, :], w) + bias
CASES.append(Case(
    "tosa/conv2d_f32.mlir",
    "tosa.conv2d (OHWI weights, bias, pad 1, stride 1): 1x4x4x2 * 3x3x3x2 -> 1x4x4x3.",
    f"""func.func @main(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x3x2xf32>, %bias: tensor<3xf32>) -> tensor<1x4x4x3xf32> {{
  {FZP}
  %0 = tosa.conv2d %x, %w, %bias, %zp, %zp {{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}}
      : (tensor<1x4x4x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}}""",
    [Run("main", [T(x, "f32"), T(w, "f32"), T(bias, "f32")], [T(ref, "f32")], atol=1e-4)]))

x = f32(3, 5, lo=-5, hi=5)
CASES.append(Case(
    "tosa/reduce_sum_max_f32.mlir",
    "tosa.reduce_sum along axis 1 and tosa.reduce_max along axis 0 (dims kept as 1).",
    """func.func @main(%x: tensor<3x5xf32>) -> (tensor<3x1xf32>, tensor<1x5xf32>) {
  %0 = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<3x5xf32>) -> tensor<3x1xf32>
  %1 = tosa.reduce_max %x {axis = 0 : i32} : (tensor<3x5xf32>) -> tensor<1x5xf32>
  return %0, %1 : tensor<3x1xf32>, tensor<1x5xf32>
}""",
    [Run("main", [T(x, "f32")], [T(x.sum(axis=1, keepdims=True), "f32"), T(x.max(axis=0, keepdims=True), "f32")])]))

x = f32(4, 4, lo=-3, hi=3)
CASES.append(Case(
    "tosa/clamp_f32.mlir",
    "tosa.clamp to [-1, 1.5].",
    """func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = tosa.clamp %x {min_val = -1.0 : f32, max_val = 1.5 : f32} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}""",
    [Run("main", [T(x, "f32")], [T(np.clip(x, -1, 1.5), "f32")])]))

x = f32(2, 5, lo=-3, hi=3)
xd = x.astype(np.float64)
CASES.append(Case(
    "tosa/activations_f32.mlir",
    "tosa.exp, tosa.tanh, tosa.sigmoid, tosa.reciprocal as four outputs.",
    """func.func @main(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = tosa.exp %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = tosa.tanh %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %2 = tosa.sigmoid %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %3 = tosa.reciprocal %0 : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0, %1, %2, %3 : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>
}""",
    [Run("main", [T(x, "f32")], [T(np.exp(xd), "f32"), T(np.tanh(xd), "f32"), T(sigmoid(xd), "f32"),
                                 T(np.exp(-xd), "f32")], atol=1e-6, rtol=2e-5)]))

x = f32(2, 6)
CASES.append(Case(
    "tosa/reshape_transpose_f32.mlir",
    "tosa.reshape 2x6 -> 3x4 then tosa.transpose -> 4x3.",
    """func.func @main(%x: tensor<2x6xf32>) -> tensor<4x3xf32> {
  %s = tosa.const_shape {values = dense<[3, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.reshape %x, %s : (tensor<2x6xf32>, !tosa.shape<2>) -> tensor<3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}""",
    [Run("main", [T(x, "f32")], [T(x.reshape(3, 4).T, "f32")])]))

x = f32(1, 5, 5, 2, lo=-5, hi=5)
xp = np.pad(x, ((0, 0), (0, 1), (0, 1), (0, 0)), constant_values=-np.inf)
ref = np.zeros((1, 3, 3, 2))
for i in range(3):
    for j in range(3):
        ref[0, i, j] = xp[0, 2 * i:2 * i + 2, 2 * j:2 * j + 2].max(axis=(0, 1))
CASES.append(Case(
    "tosa/max_pool2d_f32.mlir",
    "tosa.max_pool2d 2x2, stride 2, padding bottom/right 1: 1x5x5x2 -> 1x3x3x2.",
    """func.func @main(%x: tensor<1x5x5x2xf32>) -> tensor<1x3x3x2xf32> {
  %0 = tosa.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 1, 0, 1>} : (tensor<1x5x5x2xf32>) -> tensor<1x3x3x2xf32>
  return %0 : tensor<1x3x3x2xf32>
}""",
    [Run("main", [T(x, "f32")], [T(ref, "f32")])]))

x = f32(1, 4, 5, 3)
ref = np.zeros((1, 3, 4, 3))
for i in range(3):
    for j in range(4):
        ref[0, i, j] = x[0, i:i + 2, j:j + 2].astype(np.float64).mean(axis=(0, 1))
CASES.append(Case(
    "tosa/avg_pool2d_f32.mlir",
    "tosa.avg_pool2d 2x2, stride 1, no padding: 1x4x5x3 -> 1x3x4x3.",
    f"""func.func @main(%x: tensor<1x4x5x3xf32>) -> tensor<1x3x4x3xf32> {{
  {FZP}
  %0 = tosa.avg_pool2d %x, %zp, %zp {{acc_type = f32, kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>}}
      : (tensor<1x4x5x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x4x3xf32>
  return %0 : tensor<1x3x4x3xf32>
}}""",
    [Run("main", [T(x, "f32")], [T(ref, "f32")])]))

i = rng.integers(-50, 50, size=(2, 4))
a = f32(2, 4, lo=-50, hi=50)
CASES.append(Case(
    "tosa/cast_greater_select.mlir",
    "tosa.cast i32 -> f32, tosa.greater (i1 result returned too), tosa.select.",
    """func.func @main(%i: tensor<2x4xi32>, %a: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xi1>) {
  %0 = tosa.cast %i : (tensor<2x4xi32>) -> tensor<2x4xf32>
  %1 = tosa.greater %0, %a : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  %2 = tosa.select %1, %0, %a : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2, %1 : tensor<2x4xf32>, tensor<2x4xi1>
}""",
    [Run("main", [T(i, "i32"), T(a, "f32")], [T(np.maximum(i, a), "f32"), T(i > a, "i1")])]))

x = f32(2, 6, lo=-4, hi=4)
xd = x.astype(np.float64)
e = np.exp(xd - xd.max(axis=1, keepdims=True))
CASES.append(Case(
    "tosa/softmax_f32.mlir",
    "Softmax from TOSA ops: reduce_max, sub, exp, reduce_sum, reciprocal, mul.",
    f"""func.func @main(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {{
  {SHIFT}
  %0 = tosa.reduce_max %x {{axis = 1 : i32}} : (tensor<2x6xf32>) -> tensor<2x1xf32>
  %1 = tosa.sub %x, %0 : (tensor<2x6xf32>, tensor<2x1xf32>) -> tensor<2x6xf32>
  %2 = tosa.exp %1 : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %3 = tosa.reduce_sum %2 {{axis = 1 : i32}} : (tensor<2x6xf32>) -> tensor<2x1xf32>
  %4 = tosa.reciprocal %3 : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %5 = tosa.mul %2, %4, %shift : (tensor<2x6xf32>, tensor<2x1xf32>, tensor<1xi8>) -> tensor<2x6xf32>
  return %5 : tensor<2x6xf32>
}}""",
    [Run("main", [T(x, "f32")], [T(e / e.sum(axis=1, keepdims=True), "f32")], atol=1e-6, rtol=2e-5)]))

a, b = f32(2, 3), f32(1, 3)
CASES.append(Case(
    "tosa/slice_concat_f32.mlir",
    "tosa.slice (start [0, 1], size [2, 2]) and tosa.concat along axis 0.",
    """func.func @main(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> (tensor<2x2xf32>, tensor<3x3xf32>) {
  %start = tosa.const_shape {values = dense<[0, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.slice %a, %start, %size : (tensor<2x3xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x2xf32>
  %1 = tosa.concat %a, %b {axis = 0 : i32} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<3x3xf32>
}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(a[:, 1:3], "f32"), T(np.concatenate([a, b]), "f32")])]))

values = f32(2, 5, 3)
idx = np.array([[4, 0, 4], [1, 3, 2]])
CASES.append(Case(
    "gather/tosa_gather_f32.mlir",
    "tosa.gather: values 2x5x3, indices 2x3 (i32) -> 2x3x3.",
    """func.func @main(%v: tensor<2x5x3xf32>, %i: tensor<2x3xi32>) -> tensor<2x3x3xf32> {
  %0 = tosa.gather %v, %i : (tensor<2x5x3xf32>, tensor<2x3xi32>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}""",
    [Run("main", [T(values, "f32"), T(idx, "i32")], [T(np.stack([values[n][idx[n]] for n in range(2)]), "f32")])]))

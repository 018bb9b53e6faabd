"""Broadcasts, reductions, matmuls, convolutions, pooling, transposes, softmax."""

import numpy as np

from e2elib import Case, Run, T

rng = np.random.default_rng(2)
CASES = []
# f32 sums of tens of products, in whatever order and with FMA contraction the
# compiler picks, differ from numpy's float64 reference by a few 1e-6 absolute.
ACC_ATOL = 1e-4


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


# ---------------------------------------------------------------- broadcast
a, b = f32(3, 5), f32(5)
CASES.append(Case(
    "broadcast/row_bias_f32.mlir",
    "Broadcast a 1-D bias along the rows of a 2-D tensor (linalg.generic, projected map).",
    """func.func @main(%a: tensor<3x5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<3x5xf32>, tensor<5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(a + b, "f32")])]))

a, b = f32(4, 3), f32(4, 1)
CASES.append(Case(
    "broadcast/column_mul_f32.mlir",
    "Broadcast a 4x1 column across 4x3 (size-1 dim mapped to constant 0): a * b.",
    """func.func @main(%a: tensor<4x3xf32>, %b: tensor<4x1xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x3xf32>, tensor<4x1xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %0 = arith.mulf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(a * b, "f32")])]))

v = rng.integers(-50, 50, size=(3,))
CASES.append(Case(
    "broadcast/named_broadcast_i32.mlir",
    "linalg.broadcast of a 3-vector to 2x3x4 (dims 0 and 2 added).",
    """func.func @main(%v: tensor<3xi32>) -> tensor<2x3x4xi32> {
  %e = tensor.empty() : tensor<2x3x4xi32>
  %r = linalg.broadcast ins(%v : tensor<3xi32>) outs(%e : tensor<2x3x4xi32>) dimensions = [0, 2]
  return %r : tensor<2x3x4xi32>
}""",
    [Run("main", [T(v, "i32")], [T(np.broadcast_to(v[None, :, None], (2, 3, 4)), "i32")])]))

a = f32(2, 3, 4)
CASES.append(Case(
    "broadcast/scalar_f32.mlir",
    "Broadcast a rank-0 scalar over a 3-D tensor: a * s - s.",
    """func.func @main(%a: tensor<2x3x4xf32>, %s: tensor<f32>) -> tensor<2x3x4xf32> {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> ()>, affine_map<(i, j, k) -> (i, j, k)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %s : tensor<2x3x4xf32>, tensor<f32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.subf %0, %y : f32
    linalg.yield %1 : f32
  } -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}""",
    [Run("main", [T(a, "f32"), T(np.array(-1.75), "f32")], [T(a * -1.75 + 1.75, "f32")])]))

# ---------------------------------------------------------------- reduction
x = f32(4, 6)
CASES.append(Case(
    "reduction/sum_innermost_f32.mlir",
    "linalg.reduce sum along the innermost dim: 4x6 -> 4.",
    """func.func @main(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%x : tensor<4x6xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  return %r : tensor<4xf32>
}""",
    [Run("main", [T(x, "f32")], [T(x.sum(axis=1), "f32")])]))

x = f32(5, 3)
CASES.append(Case(
    "reduction/sum_outer_f32.mlir",
    "Sum along the outer dim with linalg.generic (reduction iterator first): 5x3 -> 3.",
    """func.func @main(%x: tensor<5x3xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(r, j) -> (r, j)>, affine_map<(r, j) -> (j)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<5x3xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}""",
    [Run("main", [T(x, "f32")], [T(x.sum(axis=0), "f32")])]))

x = f32(2, 5, 4, lo=-10, hi=10)
CASES.append(Case(
    "reduction/max_middle_f32.mlir",
    "Max along the middle dim of a 3-D tensor (init -inf): 2x5x4 -> 2x4.",
    """func.func @main(%x: tensor<2x5x4xf32>) -> tensor<2x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = linalg.reduce ins(%x : tensor<2x5x4xf32>) outs(%init : tensor<2x4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  return %r : tensor<2x4xf32>
}""",
    [Run("main", [T(x, "f32")], [T(x.max(axis=1), "f32")])]))

x = f32(3, 4, 5)
CASES.append(Case(
    "reduction/sum_all_f32.mlir",
    "Sum of all elements of a 3x4x5 tensor to a rank-0 result.",
    """func.func @main(%x: tensor<3x4x5xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%x : tensor<3x4x5xf32>) outs(%init : tensor<f32>) dimensions = [0, 1, 2]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  return %r : tensor<f32>
}""",
    [Run("main", [T(x, "f32")], [T(x.astype(np.float64).sum(), "f32")], atol=1e-4)]))

x = rng.integers(-1000, 1000, size=(3, 7))
CASES.append(Case(
    "reduction/sum_min_i32.mlir",
    "i32 reductions along the innermost dim: sum and min as two outputs.",
    """func.func @main(%x: tensor<3x7xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %zero = arith.constant 0 : i32
  %big = arith.constant 2147483647 : i32
  %e = tensor.empty() : tensor<3xi32>
  %i0 = linalg.fill ins(%zero : i32) outs(%e : tensor<3xi32>) -> tensor<3xi32>
  %i1 = linalg.fill ins(%big : i32) outs(%e : tensor<3xi32>) -> tensor<3xi32>
  %sum = linalg.reduce ins(%x : tensor<3x7xi32>) outs(%i0 : tensor<3xi32>) dimensions = [1]
    (%in: i32, %acc: i32) {
      %0 = arith.addi %in, %acc : i32
      linalg.yield %0 : i32
    }
  %min = linalg.reduce ins(%x : tensor<3x7xi32>) outs(%i1 : tensor<3xi32>) dimensions = [1]
    (%in: i32, %acc: i32) {
      %0 = arith.minsi %in, %acc : i32
      linalg.yield %0 : i32
    }
  return %sum, %min : tensor<3xi32>, tensor<3xi32>
}""",
    [Run("main", [T(x, "i32")], [T(x.sum(axis=1), "i32"), T(x.min(axis=1), "i32")])]))

x = f32(4, 8)
CASES.append(Case(
    "reduction/mean_f32.mlir",
    "Mean along the innermost dim: a sum reduction followed by an elementwise divide (fusion candidate).",
    """func.func @main(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %e2 = tensor.empty() : tensor<4xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = arith.divf %v, %n : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  return %m : tensor<4xf32>
}""",
    [Run("main", [T(x, "f32")], [T(x.mean(axis=1), "f32")])]))

# ---------------------------------------------------------------- matmul
a, b = f32(4, 8), f32(8, 5)
CASES.append(Case(
    "matmul/matmul_f32.mlir",
    "linalg.matmul 4x8 * 8x5 with a zero-filled accumulator.",
    """func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(a.astype(np.float64) @ b, "f32")])]))

a, b, c = f32(3, 6), f32(6, 4), f32(3, 4)
CASES.append(Case(
    "matmul/matmul_accumulate_f32.mlir",
    "linalg.matmul accumulating into a function input (C + A * B).",
    """func.func @main(%a: tensor<3x6xf32>, %b: tensor<6x4xf32>, %c: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<3x6xf32>, tensor<6x4xf32>) outs(%c : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}""",
    [Run("main", [T(a, "f32"), T(b, "f32"), T(c, "f32")], [T(c + a.astype(np.float64) @ b, "f32")])]))

a, b = f32(2, 3, 4), f32(2, 4, 5)
CASES.append(Case(
    "matmul/batch_matmul_f32.mlir",
    "linalg.batch_matmul 2x3x4 * 2x4x5.",
    """func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%c : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(a.astype(np.float64) @ b, "f32")])]))

a, w, bias = f32(4, 6), f32(6, 5), f32(5)
CASES.append(Case(
    "matmul/matmul_bias_relu_f32.mlir",
    "Dense layer: relu(x * W + b), the bias add and relu are fusable consumers of the matmul.",
    """func.func @main(%x: tensor<4x6xf32>, %w: tensor<6x5xf32>, %b: tensor<5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x5xf32>, tensor<5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %0 = arith.addf %v, %bv : f32
    %1 = arith.maximumf %0, %zero : f32
    linalg.yield %1 : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}""",
    [Run("main", [T(a, "f32"), T(w, "f32"), T(bias, "f32")], [T(np.maximum(a.astype(np.float64) @ w + bias, 0), "f32")])]))

a = rng.integers(-20, 20, size=(3, 5))
b = rng.integers(-20, 20, size=(5, 4))
CASES.append(Case(
    "matmul/matmul_i32.mlir",
    "linalg.matmul on i32 (exact).",
    """func.func @main(%a: tensor<3x5xi32>, %b: tensor<5x4xi32>) -> tensor<3x4xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<3x4xi32>
  %c = linalg.fill ins(%zero : i32) outs(%e : tensor<3x4xi32>) -> tensor<3x4xi32>
  %r = linalg.matmul ins(%a, %b : tensor<3x5xi32>, tensor<5x4xi32>) outs(%c : tensor<3x4xi32>) -> tensor<3x4xi32>
  return %r : tensor<3x4xi32>
}""",
    [Run("main", [T(a, "i32"), T(b, "i32")], [T(a @ b, "i32")])]))

a = (rng.integers(-8, 8, size=(4, 8)) / 4).astype(np.float16)
b = (rng.integers(-8, 8, size=(8, 3)) / 4).astype(np.float16)
CASES.append(Case(
    "matmul/matmul_f16.mlir",
    "linalg.matmul on f16 (f16 accumulator).",
    """func.func @main(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>) -> tensor<4x3xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4x3xf16>
  %c = linalg.fill ins(%zero : f16) outs(%e : tensor<4x3xf16>) -> tensor<4x3xf16>
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf16>, tensor<8x3xf16>) outs(%c : tensor<4x3xf16>) -> tensor<4x3xf16>
  return %r : tensor<4x3xf16>
}""",
    [Run("main", [T(a, "f16"), T(b, "f16")], [T(a.astype(np.float64) @ b.astype(np.float64), "f16")])]))

a, v = f32(5, 7), f32(7)
CASES.append(Case(
    "matmul/matvec_f32.mlir",
    "linalg.matvec 5x7 * 7.",
    """func.func @main(%a: tensor<5x7xf32>, %v: tensor<7xf32>) -> tensor<5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<5xf32>) -> tensor<5xf32>
  %r = linalg.matvec ins(%a, %v : tensor<5x7xf32>, tensor<7xf32>) outs(%c : tensor<5xf32>) -> tensor<5xf32>
  return %r : tensor<5xf32>
}""",
    [Run("main", [T(a, "f32"), T(v, "f32")], [T(a.astype(np.float64) @ v, "f32")])]))

# ---------------------------------------------------------------- conv
def conv2d_nhwc_hwcf(x, w, stride=1):
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, oh, ow, f), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :].astype(np.float64)
            out[:, i, j, :] = np.einsum("nhwc,hwcf->nf", patch, w.astype(np.float64))
    return out


def conv_prog(name, xs, ws, os, stride, pad=0):
    xt = "tensor<" + "x".join(map(str, xs)) + "xf32>"
    wt = "tensor<" + "x".join(map(str, ws)) + "xf32>"
    ot = "tensor<" + "x".join(map(str, os)) + "xf32>"
    body = ""
    src = "%x"
    if pad:
        ps = (xs[0], xs[1] + 2 * pad, xs[2] + 2 * pad, xs[3])
        pt = "tensor<" + "x".join(map(str, ps)) + "xf32>"
        body = f"""  %pad = tensor.pad %x low[0, {pad}, {pad}, 0] high[0, {pad}, {pad}, 0] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  }} : {xt} to {pt}
"""
        src = "%pad"
        xt_in = pt
    else:
        xt_in = xt
    return f"""func.func @{name}(%x: {xt}, %w: {wt}) -> {ot} {{
  %zero = arith.constant 0.0 : f32
{body}  %e = tensor.empty() : {ot}
  %c = linalg.fill ins(%zero : f32) outs(%e : {ot}) -> {ot}
  %r = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}}
      ins({src}, %w : {xt_in}, {wt}) outs(%c : {ot}) -> {ot}
  return %r : {ot}
}}"""


x, w = f32(1, 5, 5, 2), f32(3, 3, 2, 3)
CASES.append(Case(
    "conv/conv2d_nhwc_hwcf_f32.mlir",
    "linalg.conv_2d_nhwc_hwcf, stride 1, no padding: 1x5x5x2 * 3x3x2x3 -> 1x3x3x3.",
    conv_prog("main", x.shape, w.shape, (1, 3, 3, 3), 1),
    [Run("main", [T(x, "f32"), T(w, "f32")], [T(conv2d_nhwc_hwcf(x, w), "f32")], atol=ACC_ATOL)]))

x, w = f32(2, 7, 7, 2), f32(3, 3, 2, 2)
CASES.append(Case(
    "conv/conv2d_stride2_f32.mlir",
    "linalg.conv_2d_nhwc_hwcf with stride 2 and batch 2: 2x7x7x2 * 3x3x2x2 -> 2x3x3x2.",
    conv_prog("main", x.shape, w.shape, (2, 3, 3, 2), 2),
    [Run("main", [T(x, "f32"), T(w, "f32")], [T(conv2d_nhwc_hwcf(x, w, 2), "f32")], atol=ACC_ATOL)]))

x, w = f32(1, 4, 4, 3), f32(3, 3, 3, 2)
xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
CASES.append(Case(
    "conv/conv2d_same_pad_f32.mlir",
    "'Same' convolution: tensor.pad by 1 then linalg.conv_2d_nhwc_hwcf: 1x4x4x3 * 3x3x3x2 -> 1x4x4x2.",
    conv_prog("main", x.shape, w.shape, (1, 4, 4, 2), 1, pad=1),
    [Run("main", [T(x, "f32"), T(w, "f32")], [T(conv2d_nhwc_hwcf(xp, w), "f32")], atol=ACC_ATOL)]))


# f16 convolutions: dispatch creation turns them into an im2col gather and a
# matmul with an f32 accumulator (on GPUs, the contraction recipe), so sums
# are exact here and round once.
def conv2d_dilated(x, w, stride, dilation):
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    eh, ew = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
    oh, ow = (h - eh) // stride + 1, (wd - ew) // stride + 1
    out = np.zeros((n, oh, ow, f), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + eh:dilation,
                      j * stride:j * stride + ew:dilation, :].astype(np.float64)
            out[:, i, j, :] = np.einsum("nhwc,hwcf->nf", patch, w.astype(np.float64))
    return out


def typed_conv_prog(xs, ws, os, elem, acc, stride, dilation):
    t = lambda shape, e: "tensor<" + "x".join(map(str, shape)) + "x" + e + ">"
    xt, wt, ot = t(xs, elem), t(ws, elem), t(os, acc)
    return f"""func.func @main(%x: {xt}, %w: {wt}) -> {ot} {{
  %zero = arith.constant 0.0 : {acc}
  %e = tensor.empty() : {ot}
  %c = linalg.fill ins(%zero : {acc}) outs(%e : {ot}) -> {ot}
  %r = linalg.conv_2d_nhwc_hwcf {{dilations = dense<{dilation}> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}}
      ins(%x, %w : {xt}, {wt}) outs(%c : {ot}) -> {ot}
  return %r : {ot}
}}"""


conv_rng = np.random.default_rng(16)  # its own stream: later cases keep their data


def quarters16(*shape):
    return (conv_rng.integers(-8, 9, size=shape) / 4).astype(np.float16)


# Exact: products of quarters, sums of 288 of them are exact in f32.
x, w = quarters16(1, 10, 10, 32), quarters16(3, 3, 32, 64)
CASES.append(Case(
    "conv/conv2d_f16_f32acc.mlir",
    "f16 linalg.conv_2d_nhwc_hwcf with an f32 result: 1x10x10x32 * 3x3x32x64 -> 1x8x8x64 (GPU: im2col + a 64x288x64 matmul on the contraction recipe).",
    typed_conv_prog(x.shape, w.shape, (1, 8, 8, 64), "f16", "f32", 1, 1),
    [Run("main", [T(x, "f16"), T(w, "f16")], [T(conv2d_dilated(x, w, 1, 1), "f32")], atol=0, rtol=0)]))

# f16 result, stride 2 and dilation 2; K = 144 is not a multiple of the
# 32-wide K slices (masked on NVIDIA).
x, w = quarters16(1, 21, 21, 16), quarters16(3, 3, 16, 32)
CASES.append(Case(
    "conv/conv2d_f16_stride2_dilation2.mlir",
    "f16 linalg.conv_2d_nhwc_hwcf, f16 result, stride 2, dilation 2: 1x21x21x16 * 3x3x16x32 -> 1x9x9x32.",
    typed_conv_prog(x.shape, w.shape, (1, 9, 9, 32), "f16", "f16", 2, 2),
    [Run("main", [T(x, "f16"), T(w, "f16")], [T(conv2d_dilated(x, w, 2, 2), "f16")], atol=0, rtol=0)]))

# NCHW x FCHW (what kiln.torch emits for nn.Conv2d): the filter is the A
# matrix, the patches (C*KH*KW) x (N*OH*OW) are B, and a batch of 2 needs
# the F x N x OH x OW product transposed.
def nchw_conv_prog(xs, ws, os, elem, acc, stride, dilation):
    t = lambda shape, e: "tensor<" + "x".join(map(str, shape)) + "x" + e + ">"
    xt, wt, ot = t(xs, elem), t(ws, elem), t(os, acc)
    return f"""func.func @main(%x: {xt}, %w: {wt}) -> {ot} {{
  %zero = arith.constant 0.0 : {acc}
  %e = tensor.empty() : {ot}
  %c = linalg.fill ins(%zero : {acc}) outs(%e : {ot}) -> {ot}
  %r = linalg.conv_2d_nchw_fchw {{dilations = dense<{dilation}> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}}
      ins(%x, %w : {xt}, {wt}) outs(%c : {ot}) -> {ot}
  return %r : {ot}
}}"""


x, w = quarters16(2, 16, 10, 10), quarters16(32, 16, 3, 3)
ref_nchw = conv2d_dilated(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), 1, 1).transpose(0, 3, 1, 2)
CASES.append(Case(
    "conv/conv2d_nchw_f16_batch2.mlir",
    "f16 linalg.conv_2d_nchw_fchw, f16 result, batch 2: 2x16x10x10 * 32x16x3x3 -> 2x32x8x8 (a 32x144x128 matmul, then N and F swapped).",
    nchw_conv_prog(x.shape, w.shape, (2, 32, 8, 8), "f16", "f16", 1, 1),
    [Run("main", [T(x, "f16"), T(w, "f16")], [T(ref_nchw, "f16")], atol=0, rtol=0)]))

x, w = quarters16(1, 8, 13, 13), quarters16(64, 8, 3, 3)
ref_nchw = conv2d_dilated(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), 2, 1).transpose(0, 3, 1, 2)
CASES.append(Case(
    "conv/conv2d_nchw_f16_stride2.mlir",
    "f16 linalg.conv_2d_nchw_fchw with an f32 result, stride 2, batch 1: 1x8x13x13 * 64x8x3x3 -> 1x64x6x6.",
    nchw_conv_prog(x.shape, w.shape, (1, 64, 6, 6), "f16", "f32", 2, 1),
    [Run("main", [T(x, "f16"), T(w, "f16")], [T(ref_nchw, "f32")], atol=0, rtol=0)]))

# NCHW f16 convolution, + per-channel bias, ReLU (the block kiln.torch
# emits for Conv2d + ReLU): the bias and the ReLU move onto the product's
# shape and become the contraction's epilogue. Batch 1 and 2.
def nchw_bias_relu_prog(n):
    return f"""#id = affine_map<(a, b, c, d) -> (a, b, c, d)>
#ch = affine_map<(a, b, c, d) -> (b)>
func.func @main(%x: tensor<{n}x16x10x10xf16>, %w: tensor<32x16x3x3xf16>, %bias: tensor<32xf16>) -> tensor<{n}x32x8x8xf16> {{
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<{n}x32x8x8xf16>
  %f = linalg.fill ins(%zero : f16) outs(%e : tensor<{n}x32x8x8xf16>) -> tensor<{n}x32x8x8xf16>
  %c = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
      ins(%x, %w : tensor<{n}x16x10x10xf16>, tensor<32x16x3x3xf16>) outs(%f : tensor<{n}x32x8x8xf16>) -> tensor<{n}x32x8x8xf16>
  %b = linalg.generic {{indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%c, %bias : tensor<{n}x32x8x8xf16>, tensor<32xf16>) outs(%e : tensor<{n}x32x8x8xf16>) {{
  ^bb0(%v: f16, %k: f16, %o: f16):
    %s = arith.addf %v, %k : f16
    linalg.yield %s : f16
  }} -> tensor<{n}x32x8x8xf16>
  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%b : tensor<{n}x32x8x8xf16>) outs(%e : tensor<{n}x32x8x8xf16>) {{
  ^bb0(%v: f16, %o: f16):
    %m = arith.maximumf %v, %zero : f16
    linalg.yield %m : f16
  }} -> tensor<{n}x32x8x8xf16>
  return %r : tensor<{n}x32x8x8xf16>
}}"""


for n in (1, 2):
    x, w = quarters16(n, 16, 10, 10), quarters16(32, 16, 3, 3)
    bias = quarters16(32)
    conv = conv2d_dilated(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), 1, 1).transpose(0, 3, 1, 2)
    # The f16 rounding of the sum before the bias, as the program computes it.
    rounded = conv.astype(np.float16).astype(np.float64)
    ref_nchw = np.maximum((rounded + bias[None, :, None, None]).astype(np.float16), 0)
    CASES.append(Case(
        f"conv/conv2d_nchw_f16_bias_relu_n{n}.mlir",
        f"f16 linalg.conv_2d_nchw_fchw + per-channel bias + ReLU, batch {n}: {n}x16x10x10 * 32x16x3x3 (the bias and ReLU run as the matmul's epilogue).",
        nchw_bias_relu_prog(n),
        [Run("main", [T(x, "f16"), T(w, "f16"), T(bias, "f16")], [T(ref_nchw, "f16")], atol=0, rtol=0)]))

# relu -> pad -> NCHW convolution (f32): the usual CNN block; the pad is its
# own kernel (a pad with a fused producer did not compile for GPUs).
x, w = conv_rng.uniform(-2, 2, size=(2, 4, 8, 8)).astype(np.float32), \
    conv_rng.uniform(-2, 2, size=(8, 4, 3, 3)).astype(np.float32)
xp = np.pad(np.maximum(x, 0), ((0, 0), (0, 0), (1, 1), (1, 1)))
ref_nchw = conv2d_dilated(xp.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), 1, 1).transpose(0, 3, 1, 2)
CASES.append(Case(
    "conv/relu_pad_conv_f32.mlir",
    "relu, tensor.pad by 1, then linalg.conv_2d_nchw_fchw: 2x4x8x8 * 8x4x3x3 -> 2x8x8x8.",
    """func.func @main(%x: tensor<2x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x4x8x8xf32>) outs(%e : tensor<2x4x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x4x8x8xf32>
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x4x8x8xf32> to tensor<2x4x10x10xf32>
  %e2 = tensor.empty() : tensor<2x8x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<2x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %c : tensor<2x8x8x8xf32>
}""",
    [Run("main", [T(x, "f32"), T(w, "f32")], [T(ref_nchw, "f32")], atol=ACC_ATOL)]))

x, w = f32(1, 5, 5, 3), f32(3, 3, 3)
ref = np.zeros((1, 3, 3, 3))
for i in range(3):
    for j in range(3):
        ref[0, i, j, :] = (x[0, i:i + 3, j:j + 3, :].astype(np.float64) * w).sum(axis=(0, 1))
CASES.append(Case(
    "conv/depthwise_conv2d_f32.mlir",
    "linalg.depthwise_conv_2d_nhwc_hwc: 1x5x5x3 * 3x3x3 -> 1x3x3x3.",
    """func.func @main(%x: tensor<1x5x5x3xf32>, %w: tensor<3x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x3xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x5x5x3xf32>, tensor<3x3x3xf32>) outs(%c : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %r : tensor<1x3x3x3xf32>
}""",
    [Run("main", [T(x, "f32"), T(w, "f32")], [T(ref, "f32")])]))

# ---------------------------------------------------------------- pooling
def pool(x, k, s, fn):
    n, h, w, c = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.zeros((n, oh, ow, c), np.float64)
    for i in range(oh):
        for j in range(ow):
            out[:, i, j, :] = fn(x[:, i * s:i * s + k, j * s:j * s + k, :].astype(np.float64), axis=(1, 2))
    return out


x = f32(1, 4, 6, 2, lo=-5, hi=5)
CASES.append(Case(
    "pooling/max_pool_f32.mlir",
    "linalg.pooling_nhwc_max 2x2 window, stride 2 (init -inf): 1x4x6x2 -> 1x2x3x2.",
    """func.func @main(%x: tensor<1x4x6x2xf32>) -> tensor<1x2x3x2xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %win = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2x3x2xf32>
  %c = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x4x6x2xf32>, tensor<2x2xf32>) outs(%c : tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32>
  return %r : tensor<1x2x3x2xf32>
}""",
    [Run("main", [T(x, "f32")], [T(pool(x, 2, 2, np.max), "f32")])]))

x = f32(2, 5, 5, 3)
CASES.append(Case(
    "pooling/sum_pool_f32.mlir",
    "linalg.pooling_nhwc_sum 3x3 window, stride 1: 2x5x5x3 -> 2x3x3x3.",
    """func.func @main(%x: tensor<2x5x5x3xf32>) -> tensor<2x3x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<2x3x3x3xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %r = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %win : tensor<2x5x5x3xf32>, tensor<3x3xf32>) outs(%c : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  return %r : tensor<2x3x3x3xf32>
}""",
    [Run("main", [T(x, "f32")], [T(pool(x, 3, 1, np.sum), "f32")])]))

x = rng.integers(-100, 100, size=(1, 4, 4, 2))
CASES.append(Case(
    "pooling/max_pool_i32.mlir",
    "linalg.pooling_nhwc_max on i32, 2x2 window, stride 2: 1x4x4x2 -> 1x2x2x2.",
    """func.func @main(%x: tensor<1x4x4x2xi32>) -> tensor<1x2x2x2xi32> {
  %min = arith.constant -2147483648 : i32
  %win = tensor.empty() : tensor<2x2xi32>
  %e = tensor.empty() : tensor<1x2x2x2xi32>
  %c = linalg.fill ins(%min : i32) outs(%e : tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x4x4x2xi32>, tensor<2x2xi32>) outs(%c : tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
  return %r : tensor<1x2x2x2xi32>
}""",
    [Run("main", [T(x, "i32")], [T(pool(x, 2, 2, np.max), "i32")])]))

# ---------------------------------------------------------------- transpose
x = f32(3, 5)
CASES.append(Case(
    "transpose/transpose_2d_f32.mlir",
    "linalg.transpose 3x5 -> 5x3.",
    """func.func @main(%x: tensor<3x5xf32>) -> tensor<5x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  %r = linalg.transpose ins(%x : tensor<3x5xf32>) outs(%e : tensor<5x3xf32>) permutation = [1, 0]
  return %r : tensor<5x3xf32>
}""",
    [Run("main", [T(x, "f32")], [T(x.T, "f32")])]))

x = rng.integers(-1000, 1000, size=(2, 3, 4))
CASES.append(Case(
    "transpose/transpose_3d_i32.mlir",
    "linalg.transpose 2x3x4 -> 4x2x3 (permutation [2, 0, 1]) on i32.",
    """func.func @main(%x: tensor<2x3x4xi32>) -> tensor<4x2x3xi32> {
  %e = tensor.empty() : tensor<4x2x3xi32>
  %r = linalg.transpose ins(%x : tensor<2x3x4xi32>) outs(%e : tensor<4x2x3xi32>) permutation = [2, 0, 1]
  return %r : tensor<4x2x3xi32>
}""",
    [Run("main", [T(x, "i32")], [T(np.transpose(x, (2, 0, 1)), "i32")])]))

x = f32(4, 3)
CASES.append(Case(
    "transpose/transpose_generic_add_f32.mlir",
    "Transposed read in linalg.generic fused with an add: out[j, i] = x[i, j] + y[j, i].",
    """func.func @main(%x: tensor<4x3xf32>, %y: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (j, i)>, affine_map<(j, i) -> (j, i)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x3xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}""",
    [Run("main", [T(x, "f32"), T(y := f32(3, 4), "f32")], [T(x.T + y, "f32")])]))

# ---------------------------------------------------------------- softmax
def softmax(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


x = f32(3, 8, lo=-4, hi=4)
CASES.append(Case(
    "softmax/softmax_generic_f32.mlir",
    "Softmax along the innermost dim written out: max reduce, exp(x - max), sum reduce, divide.",
    """#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @main(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<3xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x8xf32>) outs(%m0 : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<3xf32>
  %e2 = tensor.empty() : tensor<3x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<3x8xf32>, tensor<3xf32>) outs(%e2 : tensor<3x8xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<3x8xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<3x8xf32>) outs(%s0 : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<3x8xf32>, tensor<3xf32>) outs(%e2 : tensor<3x8xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %0 = arith.divf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}""",
    [Run("main", [T(x, "f32")], [T(softmax(x), "f32")], atol=1e-6, rtol=2e-5)]))

x = f32(2, 4, 5, lo=-4, hi=4)
CASES.append(Case(
    "softmax/softmax_named_f32.mlir",
    "linalg.softmax along dim 1 of a 2x4x5 tensor.",
    """func.func @main(%x: tensor<2x4x5xf32>) -> tensor<2x4x5xf32> {
  %e = tensor.empty() : tensor<2x4x5xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<2x4x5xf32>) outs(%e : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %r : tensor<2x4x5xf32>
}""",
    [Run("main", [T(x, "f32")], [T(softmax(x, axis=1), "f32")], atol=1e-6, rtol=2e-5)]))

"""Matmuls that take the GPU contraction strategy (kiln-gpu-lower-contraction:
shared-memory tiles and mma.sync on cuda sm_80+): f16/bf16 inputs, an f32
accumulator, M, N multiples of 64 and K a multiple of 32, with the epilogues the
recipe fuses (truncation, bias + relu, none, accumulation into an input). On
the host they run the ordinary host strategies; on GPUs (build_tools/e2e_device.py)
they check the contraction kernels. Values are small multiples of 1/4 so every
product and sum is exact in f32 and each layout mistake shows."""

import numpy as np

from e2elib import Case, Run, T, bf16, modular_matrix

rng = np.random.default_rng(12)
CASES = []

M, N, K = 128, 64, 64  # two 64x64 workgroup tiles, two K steps of 32


def quarters(*shape, dtype=np.float32):
    return (rng.integers(-8, 9, size=shape) / 4).astype(dtype)


def matmul_program(elem, out, epilogue, extra_args="", extra_ins=""):
    fill = "" if epilogue == "accumulate" else f"""  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{M}x{N}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
"""
    init = "%c" if epilogue == "accumulate" else "%f"
    head = f"""func.func @main(%a: tensor<{M}x{K}x{elem}>, %b: tensor<{K}x{N}x{elem}>{extra_args}) -> tensor<{M}x{N}x{out}> {{
{fill}  %m = linalg.matmul ins(%a, %b : tensor<{M}x{K}x{elem}>, tensor<{K}x{N}x{elem}>) outs({init} : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
"""
    if epilogue in ("none", "accumulate"):
        return head + f"  return %m : tensor<{M}x{N}xf32>\n}}"
    if epilogue == "truncf":
        body = f"""    %y = arith.truncf %x : f32 to {out}
    linalg.yield %y : {out}"""
        maps, ins, args = "[#id, #id]", f"ins(%m : tensor<{M}x{N}xf32>)", f"%x: f32, %o: {out}"
    else:  # bias_relu
        body = """    %s = arith.addf %x, %bias : f32
    %zero2 = arith.constant 0.0 : f32
    %y = arith.maximumf %s, %zero2 : f32
    linalg.yield %y : f32"""
        maps = "[#id, #row, #id]"
        ins = f"ins(%m, %bias_v : tensor<{M}x{N}xf32>, tensor<{N}xf32>)"
        args = "%x: f32, %bias: f32, %o: f32"
    return ("#id = affine_map<(i, j) -> (i, j)>\n#row = affine_map<(i, j) -> (j)>\n" + head +
            f"""  %e2 = tensor.empty() : tensor<{M}x{N}x{out}>
  %r = linalg.generic {{indexing_maps = {maps}, iterator_types = ["parallel", "parallel"]}}
      {ins} outs(%e2 : tensor<{M}x{N}x{out}>) {{
  ^bb0({args}):
{body}
  }} -> tensor<{M}x{N}x{out}>
  return %r : tensor<{M}x{N}x{out}>
}}""")


def ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


a, b = quarters(M, K, dtype=np.float16), quarters(K, N, dtype=np.float16)
CASES.append(Case(
    "matmul/contraction_f16_truncf.mlir",
    f"f16 {M}x{K} * {K}x{N} with an f32 accumulator truncated to f16 (contraction strategy on GPUs).",
    matmul_program("f16", "f16", "truncf"),
    [Run("main", [T(a, "f16"), T(b, "f16")], [T(ref(a, b), "f16")], atol=0, rtol=0)]))

a, b = bf16(quarters(M, K)), bf16(quarters(K, N))
CASES.append(Case(
    "matmul/contraction_bf16_f32.mlir",
    f"bf16 {M}x{K} * {K}x{N} -> f32 with no epilogue (contraction strategy on GPUs).",
    matmul_program("bf16", "f32", "none"),
    [Run("main", [T(a, "bf16"), T(b, "bf16")], [T(ref(a, b), "f32")], atol=0, rtol=0)]))

a, b, bias = quarters(M, K, dtype=np.float16), quarters(K, N, dtype=np.float16), quarters(N)
CASES.append(Case(
    "matmul/contraction_f16_bias_relu.mlir",
    f"f16 {M}x{K} * {K}x{N} + bias, relu, in f32: the epilogue runs on the accumulators (contraction strategy on GPUs).",
    matmul_program("f16", "f32", "bias_relu", extra_args=f", %bias_v: tensor<{N}xf32>"),
    [Run("main", [T(a, "f16"), T(b, "f16"), T(bias, "f32")],
         [T(np.maximum(ref(a, b) + bias, 0), "f32")], atol=0, rtol=0)]))

a, b, c = quarters(M, K, dtype=np.float16), quarters(K, N, dtype=np.float16), quarters(M, N)
CASES.append(Case(
    "matmul/contraction_f16_accumulate.mlir",
    f"C += A * B with f16 A, B and an f32 C given as an input (accumulators start from C; contraction strategy on GPUs).",
    matmul_program("f16", "f32", "accumulate", extra_args=f", %c: tensor<{M}x{N}xf32>"),
    [Run("main", [T(a, "f16"), T(b, "f16"), T(c, "f32")], [T(ref(a, b) + c, "f32")], atol=0, rtol=0)]))

# f32 inputs: the SIMT form of the recipe (16x16 threads, 4x4 FMAs each on
# 64x64 tiles, K slices of 16).
a, b = quarters(M, K), quarters(K, N)
CASES.append(Case(
    "matmul/contraction_f32_simt.mlir",
    f"f32 {M}x{K} * {K}x{N} (contraction strategy, SIMT form, on GPUs).",
    matmul_program("f32", "f32", "none"),
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(ref(a, b), "f32")], atol=0, rtol=0)]))

a, b, bias = quarters(M, K), quarters(K, N), quarters(N)
CASES.append(Case(
    "matmul/contraction_f32_simt_bias_relu.mlir",
    f"f32 {M}x{K} * {K}x{N} + bias, relu: the SIMT form with its epilogue on the accumulators (GPUs).",
    matmul_program("f32", "f32", "bias_relu", extra_args=f", %bias_v: tensor<{N}xf32>"),
    [Run("main", [T(a, "f32"), T(b, "f32"), T(bias, "f32")],
         [T(np.maximum(ref(a, b) + bias, 0), "f32")], atol=0, rtol=0)]))

# 8-bit integers with i32 accumulators (signed): mma.sync m16n8k32 on NVIDIA
# (fragments by the layout table), MFMA/WMMA i8 on AMD. The full i8 range;
# results are exact. Its own random stream, so the cases above keep their
# data.
i8_rng = np.random.default_rng(8)
a = i8_rng.integers(-128, 128, size=(M, K)).astype(np.int8)
b = i8_rng.integers(-128, 128, size=(K, N)).astype(np.int8)
CASES.append(Case(
    "matmul/contraction_i8_i32.mlir",
    f"i8 {M}x{K} * {K}x{N} -> i32 (contraction strategy on GPUs: mma.sync s8, MFMA/WMMA i8).",
    f"""func.func @main(%a: tensor<{M}x{K}xi8>, %b: tensor<{K}x{N}xi8>) -> tensor<{M}x{N}xi32> {{
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<{M}x{N}xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<{M}x{N}xi32>) -> tensor<{M}x{N}xi32>
  %m = linalg.matmul ins(%a, %b : tensor<{M}x{K}xi8>, tensor<{K}x{N}xi8>) outs(%f : tensor<{M}x{N}xi32>) -> tensor<{M}x{N}xi32>
  return %m : tensor<{M}x{N}xi32>
}}""",
    [Run("main", [T(a, "i8"), T(b, "i8")],
         [T(a.astype(np.int64) @ b.astype(np.int64), "i32")])]))

# An i32 bias added on the accumulators, B given as N x K (transposed).
a = i8_rng.integers(-128, 128, size=(M, K)).astype(np.int8)
bt = i8_rng.integers(-128, 128, size=(N, K)).astype(np.int8)
bias = i8_rng.integers(-1000, 1000, size=(N,)).astype(np.int32)
CASES.append(Case(
    "matmul/contraction_i8_transposed_b_bias.mlir",
    f"i8 {M}x{K} * ({N}x{K})^T + i32 bias -> i32: the epilogue on the accumulators (contraction strategy on GPUs).",
    f"""#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @main(%a: tensor<{M}x{K}xi8>, %b: tensor<{N}x{K}xi8>, %bias: tensor<{N}xi32>) -> tensor<{M}x{N}xi32> {{
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<{M}x{N}xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<{M}x{N}xi32>) -> tensor<{M}x{N}xi32>
  %m = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>]
      ins(%a, %b : tensor<{M}x{K}xi8>, tensor<{N}x{K}xi8>) outs(%f : tensor<{M}x{N}xi32>) -> tensor<{M}x{N}xi32>
  %e2 = tensor.empty() : tensor<{M}x{N}xi32>
  %r = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%m, %bias : tensor<{M}x{N}xi32>, tensor<{N}xi32>) outs(%e2 : tensor<{M}x{N}xi32>) {{
  ^bb0(%x: i32, %y: i32, %o: i32):
    %s = arith.addi %x, %y : i32
    linalg.yield %s : i32
  }} -> tensor<{M}x{N}xi32>
  return %r : tensor<{M}x{N}xi32>
}}""",
    [Run("main", [T(a, "i8"), T(bt, "i8"), T(bias, "i32")],
         [T(a.astype(np.int64) @ bt.astype(np.int64).T + bias, "i32")])]))

# N = 64 with enough rows for 128-row tiles (12300 = 96 x 128 + 12: the last
# tile masks 116 rows): on sm_90a two m64n64k16 warpgroups per 128x64 tile,
# the width kiln-gpu-select-strategy takes when wider tiles would mask most
# of their columns (a 3x3x64 -> 64 convolution as a matmul). A and B are
# made in the program (A in {-1, 0, 1}, B quarters in [-1, 1]) and the
# 12300 x 64 product is checked through its column sums weighted by
# (i mod 3) - 1 (a row stored in the wrong row moves them): every value is a
# multiple of 1/4 below 2^22, exact in f32 in any order.
rows_n64, k_n64, n_n64 = 12300, 576, 64
gen_a, a_n64 = modular_matrix("a", rows_n64, k_n64, "f16", 3, 1, 3, 1)
gen_b, b_n64 = modular_matrix("b", k_n64, n_n64, "f16", 7, 13, 9, 4, 0.25)
weights_n64 = (np.arange(rows_n64) % 3 - 1).astype(np.float64)
CASES.append(Case(
    "matmul/contraction_n64_f16_12300x576.mlir",
    "f16 12300x576 * 576x64 -> f32 made in the program (128x64 warpgroup tiles on sm_90a, a masked last row tile), checked by weighted column sums.",
    f"""#k = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#w = affine_map<(i, j) -> (i)>
func.func @main() -> tensor<{n_n64}xf32> {{
  %zero = arith.constant 0.0 : f32
{gen_a}{gen_b}  %e = tensor.empty() : tensor<{rows_n64}x{n_n64}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{rows_n64}x{n_n64}xf32>) -> tensor<{rows_n64}x{n_n64}xf32>
  %p = linalg.matmul ins(%a, %b : tensor<{rows_n64}x{k_n64}xf16>, tensor<{k_n64}x{n_n64}xf16>) outs(%f : tensor<{rows_n64}x{n_n64}xf32>) -> tensor<{rows_n64}x{n_n64}xf32>
  %es = tensor.empty() : tensor<{n_n64}xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%es : tensor<{n_n64}xf32>) -> tensor<{n_n64}xf32>
  %s = linalg.generic {{indexing_maps = [#k, #col], iterator_types = ["reduction", "parallel"]}}
      ins(%p : tensor<{rows_n64}x{n_n64}xf32>) outs(%s0 : tensor<{n_n64}xf32>) {{
  ^bb0(%x: f32, %acc: f32):
    %r = linalg.index 0 : index
    %c3 = arith.constant 3 : index
    %m = arith.remui %r, %c3 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %one = arith.constant 1.0 : f32
    %wt = arith.subf %mf, %one : f32
    %y = arith.mulf %x, %wt : f32
    %z = arith.addf %y, %acc : f32
    linalg.yield %z : f32
  }} -> tensor<{n_n64}xf32>
  return %s : tensor<{n_n64}xf32>
}}""",
    [Run("main", [], [T(weights_n64 @ (a_n64 @ b_n64), "f32")], atol=0, rtol=0)]))

"""Matmul-like ops beyond linalg.matmul that take the GPU contraction
strategy: batch_matmul (one batch per workgroup), a generic contracting the
last dim of both operands (B stored N x K, as attention's Q K^T: ldmatrix
without .trans), and K of 128 (4 slices of 32 through the 3-stage cp.async
pipeline's steady loop). Also a transpose producing a matmul operand, which
dispatch creation keeps out of the contraction's kernel. Values are small
multiples of 1/4 so every product and sum is exact in f32."""

import numpy as np

from e2elib import Case, Run, T, bf16

rng = np.random.default_rng(31)
CASES = []


def quarters(*shape, dtype=np.float32):
    return (rng.integers(-8, 9, size=shape) / 4).astype(dtype)


def f64(x):
    return x.astype(np.float64)


def index_pattern(name, rows, cols, row_factor, col_factor, period):
    """MLIR lines of a rows x cols f16 tensor `name` whose element (r, c) is
    ((r * row_factor + c * col_factor) % period - period // 2) / 2."""
    t = f"tensor<{rows}x{cols}xf16>"
    return f"""  %e{name[1:]} = tensor.empty() : {t}
  {name} = linalg.generic {{indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}} outs(%e{name[1:]} : {t}) {{
  ^bb0(%o: f16):
    %r = linalg.index 0 : index
    %c = linalg.index 1 : index
    %rf = arith.constant {row_factor} : index
    %cf = arith.constant {col_factor} : index
    %p = arith.constant {period} : index
    %h = arith.constant {period // 2} : index
    %rs = arith.muli %r, %rf : index
    %cs = arith.muli %c, %cf : index
    %s = arith.addi %rs, %cs : index
    %m = arith.remui %s, %p : index
    %d = arith.subi %m, %h : index
    %n = arith.index_cast %d : index to i32
    %f = arith.sitofp %n : i32 to f16
    %half = arith.constant 0.5 : f16
    %v = arith.mulf %f, %half : f16
    linalg.yield %v : f16
  }} -> {t}"""


def qk_transpose(B, M, N, K):
    """MLIR lines of %s (f32 BxMxN) = %q (bf16 BxMxK) times the transpose of
    %k (bf16 BxNxK) from the zero fill %f: a generic contracting the last
    dim of both operands, widening in its body."""
    return f"""  %s = linalg.generic {{indexing_maps = [affine_map<(b, i, j, l) -> (b, i, l)>, affine_map<(b, i, j, l) -> (b, j, l)>, affine_map<(b, i, j, l) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%q, %k : tensor<{B}x{M}x{K}xbf16>, tensor<{B}x{N}x{K}xbf16>) outs(%f : tensor<{B}x{M}x{N}xf32>) {{
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }} -> tensor<{B}x{M}x{N}xf32>"""


def truncate(result, source, shape, dtype):
    """MLIR lines of `result` = `source` (f32, `shape` as "BxMxN") truncated
    to `dtype`; needs #id over three dims."""
    return f"""  %e2 = tensor.empty() : tensor<{shape}x{dtype}>
  {result} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins({source} : tensor<{shape}xf32>) outs(%e2 : tensor<{shape}x{dtype}>) {{
  ^bb0(%x: f32, %o: {dtype}):
    %y = arith.truncf %x : f32 to {dtype}
    linalg.yield %y : {dtype}
  }} -> tensor<{shape}x{dtype}>"""


FILL = """  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{shape}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{shape}xf32>) -> tensor<{shape}xf32>
"""

# batch_matmul f16 with a truncating consumer over batch x M x N; K = 256.
B, M, N, K = 2, 64, 64, 128
a, b = quarters(B, M, K, dtype=np.float16), quarters(B, K, N, dtype=np.float16)
CASES.append(Case(
    "matmul/contraction_batch_f16_truncf.mlir",
    f"batch_matmul f16 {B}x{M}x{K} * {B}x{K}x{N}, f32 accumulator truncated to f16 (contraction strategy on GPUs: one batch per workgroup, 4 K slices).",
    f"""#id = affine_map<(b, i, j) -> (b, i, j)>
func.func @main(%a: tensor<{B}x{M}x{K}xf16>, %b: tensor<{B}x{K}x{N}xf16>) -> tensor<{B}x{M}x{N}xf16> {{
{FILL.format(shape=f"{B}x{M}x{N}")}  %m = linalg.batch_matmul ins(%a, %b : tensor<{B}x{M}x{K}xf16>, tensor<{B}x{K}x{N}xf16>) outs(%f : tensor<{B}x{M}x{N}xf32>) -> tensor<{B}x{M}x{N}xf32>
{truncate("%r", "%m", f"{B}x{M}x{N}", "f16")}
  return %r : tensor<{B}x{M}x{N}xf16>
}}""",
    [Run("main", [T(a, "f16"), T(b, "f16")], [T(f64(a) @ f64(b), "f16")], atol=0, rtol=0)]))

# Q K^T: a generic contracting the last dim of both operands, bf16 widened
# to f32 in the body.
B, M, N, K = 2, 64, 128, 64
q, k = quarters(B, M, K, dtype=np.float32), quarters(B, N, K, dtype=np.float32)
q, k = bf16(q), bf16(k)
CASES.append(Case(
    "matmul/contraction_transposed_b_bf16.mlir",
    f"bf16 {B}x{M}x{K} times the transpose of {B}x{N}x{K} into f32, as a generic with widening casts (contraction strategy with B stored N x K on GPUs).",
    f"""func.func @main(%q: tensor<{B}x{M}x{K}xbf16>, %k: tensor<{B}x{N}x{K}xbf16>) -> tensor<{B}x{M}x{N}xf32> {{
{FILL.format(shape=f"{B}x{M}x{N}")}{qk_transpose(B, M, N, K)}
  return %s : tensor<{B}x{M}x{N}xf32>
}}""",
    [Run("main", [T(q, "bf16"), T(k, "bf16")], [T(f64(q) @ f64(k).transpose(0, 2, 1), "f32")], atol=0, rtol=0)]))

# A transpose producing the matmul's A operand: its own kernel, then the
# contraction (f16, K = 128, no epilogue).
M, N, K = 64, 64, 128
x, b = quarters(K, M, dtype=np.float16), quarters(K, N, dtype=np.float16)
CASES.append(Case(
    "matmul/contraction_transposed_producer_f16.mlir",
    f"f16 transpose({K}x{M}) * {K}x{N} -> f32: the transpose is a kernel of its own, the matmul takes the contraction strategy on GPUs.",
    f"""func.func @main(%x: tensor<{K}x{M}xf16>, %b: tensor<{K}x{N}xf16>) -> tensor<{M}x{N}xf32> {{
  %et = tensor.empty() : tensor<{M}x{K}xf16>
  %t = linalg.transpose ins(%x : tensor<{K}x{M}xf16>) outs(%et : tensor<{M}x{K}xf16>) permutation = [1, 0]
{FILL.format(shape=f"{M}x{N}")}  %m = linalg.matmul ins(%t, %b : tensor<{M}x{K}xf16>, tensor<{K}x{N}xf16>) outs(%f : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  return %m : tensor<{M}x{N}xf32>
}}""",
    [Run("main", [T(x, "f16"), T(b, "f16")], [T(f64(x).T @ f64(b), "f32")], atol=0, rtol=0)]))

# batch_matmul f32: the SIMT form per batch.
B, M, N, K = 3, 64, 64, 32
a, b = quarters(B, M, K), quarters(B, K, N)
CASES.append(Case(
    "matmul/contraction_batch_f32_simt.mlir",
    f"batch_matmul f32 {B}x{M}x{K} * {B}x{K}x{N} (contraction strategy, SIMT form, one batch per workgroup on GPUs).",
    f"""func.func @main(%a: tensor<{B}x{M}x{K}xf32>, %b: tensor<{B}x{K}x{N}xf32>) -> tensor<{B}x{M}x{N}xf32> {{
{FILL.format(shape=f"{B}x{M}x{N}")}  %m = linalg.batch_matmul ins(%a, %b : tensor<{B}x{M}x{K}xf32>, tensor<{B}x{K}x{N}xf32>) outs(%f : tensor<{B}x{M}x{N}xf32>) -> tensor<{B}x{M}x{N}xf32>
  return %m : tensor<{B}x{M}x{N}xf32>
}}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(f64(a) @ f64(b), "f32")], atol=0, rtol=0)]))

def generated_matmul_row_sums(path, note, M, N, K, w, a_factors, b_factors):
    """A Case: f16 A (M x K) and B (K x N) generated in the program from
    their indices (index_pattern with (row, col, period) factors), their
    product in f32, then one weighted sum per row with the input w (N), which
    any misplaced or missing element changes. Exact in f32."""
    (ar, ac, ap), (br, bc, bp) = a_factors, b_factors
    i, k, j = np.arange(M)[:, None], np.arange(K)[None, :], np.arange(N)[None, :]
    a_gen = (((i * ar + k * ac) % ap) - ap // 2) / 2
    b_gen = (((np.arange(K)[:, None] * br + j * bc) % bp) - bp // 2) / 2
    return Case(
        path,
        f"f16 {M}x{K} * {K}x{N} -> f32 generated from indices, then one weighted sum per row ({note}).",
        f"""#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @main(%w: tensor<{N}xf32>) -> tensor<{M}xf32> {{
{index_pattern("%a", M, K, ar, ac, ap)}
{index_pattern("%b", K, N, br, bc, bp)}
{FILL.format(shape=f"{M}x{N}")}  %c = linalg.matmul ins(%a, %b : tensor<{M}x{K}xf16>, tensor<{K}x{N}xf16>) outs(%f : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %z = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<{M}xf32>
  %fs = linalg.fill ins(%z : f32) outs(%es : tensor<{M}xf32>) -> tensor<{M}xf32>
  %s = linalg.generic {{indexing_maps = [#id, #col, #row], iterator_types = ["parallel", "reduction"]}} ins(%c, %w : tensor<{M}x{N}xf32>, tensor<{N}xf32>) outs(%fs : tensor<{M}xf32>) {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }} -> tensor<{M}xf32>
  return %s : tensor<{M}xf32>
}}""",
        [Run("main", [T(w, "f32")], [T((a_gen @ b_gen) @ w.astype(np.float64), "f32")], atol=0, rtol=0)])


# Enough 128x128 tiles (12 x 8) for the large tiling: four 16 KiB cp.async
# stages in dynamic shared memory on NVIDIA (the driver opts the kernel in
# and passes the size at launch).
N = 1024
CASES.append(generated_matmul_row_sums(
    "matmul/contraction_large_tiles_f16.mlir",
    "GPUs: 128x128 tiles, 4 shared stages in dynamic shared memory",
    1536, N, 128, rng.integers(-3, 4, size=N).astype(np.float32),
    (7, 3, 5), (5, 11, 3)))

# 25 x 4 tiles of 128x128 (sm_90's mma.sync and sm_90a's wgmma alike):
# workgroups take their tiles in groups of 8 tile rows (L2 reuse), the last
# group one row.
N = 512
CASES.append(generated_matmul_row_sums(
    "matmul/contraction_grouped_tiles_f16.mlir",
    "GPUs: 25 x 4 tiles of 128x128, taken in groups of 8 tile rows",
    3200, N, 64,
    np.random.default_rng(11).integers(-3, 4, size=N).astype(np.float32),
    (3, 5, 5), (7, 3, 3)))

# Sizes that are not multiples of the tiles (K and N multiples of 8): the
# cp.async form masks its partial tiles (zero-filled copies past M, N and
# K, no stores past M and N).
M, N, K = 100, 72, 40
a, b = quarters(M, K, dtype=np.float16), quarters(K, N, dtype=np.float16)
CASES.append(Case(
    "matmul/contraction_partial_tiles_f16.mlir",
    f"f16 {M}x{K} * {K}x{N} -> f32: partial tiles in M, N and K (masked contraction strategy on GPUs).",
    f"""func.func @main(%a: tensor<{M}x{K}xf16>, %b: tensor<{K}x{N}xf16>) -> tensor<{M}x{N}xf32> {{
{FILL.format(shape=f"{M}x{N}")}  %m = linalg.matmul ins(%a, %b : tensor<{M}x{K}xf16>, tensor<{K}x{N}xf16>) outs(%f : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  return %m : tensor<{M}x{N}xf32>
}}""",
    [Run("main", [T(a, "f16"), T(b, "f16")], [T(f64(a) @ f64(b), "f32")], atol=0, rtol=0)]))

B, M, N, K = 2, 70, 72, 24
q, k = bf16(quarters(B, M, K)), bf16(quarters(B, N, K))
CASES.append(Case(
    "matmul/contraction_partial_tiles_transposed_b_bf16.mlir",
    f"bf16 {B}x{M}x{K} times the transpose of {B}x{N}x{K}, truncated to bf16: batches of partial tiles with B stored N x K (masked contraction strategy on GPUs).",
    f"""#id = affine_map<(b, i, j) -> (b, i, j)>
func.func @main(%q: tensor<{B}x{M}x{K}xbf16>, %k: tensor<{B}x{N}x{K}xbf16>) -> tensor<{B}x{M}x{N}xbf16> {{
{FILL.format(shape=f"{B}x{M}x{N}")}{qk_transpose(B, M, N, K)}
{truncate("%t", "%s", f"{B}x{M}x{N}", "bf16")}
  return %t : tensor<{B}x{M}x{N}xbf16>
}}""",
    [Run("main", [T(q, "bf16"), T(k, "bf16")], [T(f64(q) @ f64(k).transpose(0, 2, 1), "bf16")], atol=0, rtol=0)]))

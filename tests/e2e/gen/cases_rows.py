"""Row-fused kernels: softmax, log-softmax, layernorm, RMSnorm written out in
linalg (one dispatch each through row fusion), at row lengths that are and
are not multiples of a GPU workgroup, and a chain whose reduction is also a
result (not fused; still correct)."""

import numpy as np

from e2elib import Case, Run, T, modular_matrix

rng = np.random.default_rng(13)
CASES = []


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


ID = "#id = affine_map<(i, j) -> (i, j)>\n#row = affine_map<(i, j) -> (i)>\n#col = affine_map<(i, j) -> (j)>"


def softmax(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_program(rows, cols, ty="f32"):
    """Softmax over rows; f16 rows are widened to f32 for the reductions and
    the exponentials and rounded back once."""
    t = f"tensor<{rows}x{cols}x{ty}>"
    tf = f"tensor<{rows}x{cols}xf32>"
    r = f"tensor<{rows}xf32>"
    widen = "\n    %v = arith.extf %in : f16 to f32" if ty == "f16" else ""
    v = "%v" if ty == "f16" else "%in"
    narrow = ("\n    %1 = arith.truncf %0 : f32 to f16\n    linalg.yield %1 : f16"
              if ty == "f16" else "\n    linalg.yield %0 : f32")
    return f"""{ID}
func.func @main(%x: {t}) -> {t} {{
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : {r}
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : {r}) -> {r}
  %max = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%x : {t}) outs(%m0 : {r}) {{
  ^bb0(%in: {ty}, %acc: f32):{widen}
    %0 = arith.maximumf {v}, %acc : f32
    linalg.yield %0 : f32
  }} -> {r}
  %e2 = tensor.empty() : {tf}
  %exp = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %max : {t}, {r}) outs(%e2 : {tf}) {{
  ^bb0(%in: {ty}, %m: f32, %o: f32):{widen}
    %0 = arith.subf {v}, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }} -> {tf}
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : {r}) -> {r}
  %sum = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%exp : {tf}) outs(%s0 : {r}) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }} -> {r}
  %e3 = tensor.empty() : {t}
  %out = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%exp, %sum : {tf}, {r}) outs(%e3 : {t}) {{
  ^bb0(%in: f32, %s: f32, %o: {ty}):
    %0 = arith.divf %in, %s : f32{narrow}
  }} -> {t}
  return %out : {t}
}}"""


def layernorm_program(rows, cols):
    return f"""{ID}
func.func @main(%x: tensor<{rows}x{cols}xf32>, %g: tensor<{cols}xf32>, %b: tensor<{cols}xf32>) -> tensor<{rows}x{cols}xf32> {{
  %zero = arith.constant 0.0 : f32
  %n = arith.constant {cols}.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<{rows}xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<{rows}xf32>) -> tensor<{rows}xf32>
  %sum = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%x : tensor<{rows}x{cols}xf32>) outs(%s0 : tensor<{rows}xf32>) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }} -> tensor<{rows}xf32>
  %mean = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}}
      ins(%sum : tensor<{rows}xf32>) outs(%e1 : tensor<{rows}xf32>) {{
  ^bb0(%s: f32, %o: f32):
    %0 = arith.divf %s, %n : f32
    linalg.yield %0 : f32
  }} -> tensor<{rows}xf32>
  %e2 = tensor.empty() : tensor<{rows}x{cols}xf32>
  %xc = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %mean : tensor<{rows}x{cols}xf32>, tensor<{rows}xf32>) outs(%e2 : tensor<{rows}x{cols}xf32>) {{
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    linalg.yield %0 : f32
  }} -> tensor<{rows}x{cols}xf32>
  %v0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<{rows}xf32>) -> tensor<{rows}xf32>
  %ssq = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%xc : tensor<{rows}x{cols}xf32>) outs(%v0 : tensor<{rows}xf32>) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %acc : f32
    linalg.yield %1 : f32
  }} -> tensor<{rows}xf32>
  %out = linalg.generic {{indexing_maps = [#id, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%xc, %ssq, %g, %b : tensor<{rows}x{cols}xf32>, tensor<{rows}xf32>, tensor<{cols}xf32>, tensor<{cols}xf32>) outs(%e2 : tensor<{rows}x{cols}xf32>) {{
  ^bb0(%c: f32, %q: f32, %gi: f32, %bi: f32, %o: f32):
    %0 = arith.divf %q, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.mulf %c, %2 : f32
    %4 = arith.mulf %3, %gi : f32
    %5 = arith.addf %4, %bi : f32
    linalg.yield %5 : f32
  }} -> tensor<{rows}x{cols}xf32>
  return %out : tensor<{rows}x{cols}xf32>
}}"""


def layernorm_case(rows, cols, lo=-3, hi=5):
    x, g, b = f32(rows, cols, lo=lo, hi=hi), f32(cols), f32(cols)
    xd = x.astype(np.float64)
    mean = xd.mean(-1, keepdims=True)
    var = ((xd - mean) ** 2).mean(-1, keepdims=True)
    ln = (xd - mean) / np.sqrt(var + 1e-5) * g + b
    return x, g, b, ln


for rows, cols in [(5, 300), (3, 1000), (9, 16), (2, 4096)]:
    x = f32(rows, cols, lo=-6, hi=6)
    CASES.append(Case(
        f"softmax/row_softmax_f32_{rows}x{cols}.mlir",
        f"Softmax over rows of {cols} written out (max, exp(x - max), sum, divide): one row-fused dispatch.",
        softmax_program(rows, cols),
        [Run("main", [T(x, "f32")], [T(softmax(x), "f32")], atol=1e-6, rtol=2e-5)]))

x16 = f32(4, 520, lo=-6, hi=6).astype(np.float16)
CASES.append(Case(
    "softmax/row_softmax_f16_4x520.mlir",
    "Softmax over f16 rows of 520, reduced and exponentiated in f32, rounded to f16 once.",
    softmax_program(4, 520, "f16"),
    [Run("main", [T(x16, "f16")], [T(softmax(x16.astype(np.float32)), "f16")],
         atol=2e-3, rtol=1e-2)]))

x = f32(4, 257, lo=-5, hi=5)
xd = x.astype(np.float64)
lse = np.log(np.exp(xd - xd.max(-1, keepdims=True)).sum(-1, keepdims=True)) + xd.max(-1, keepdims=True)
CASES.append(Case(
    "softmax/log_softmax_f32_4x257.mlir",
    "Log-softmax over rows of 257: max, sum of exp(x - max), x - max - log(sum): one dispatch.",
    f"""{ID}
func.func @main(%x: tensor<4x257xf32>) -> tensor<4x257xf32> {{
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%x : tensor<4x257xf32>) outs(%m0 : tensor<4xf32>) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  }} -> tensor<4xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {{indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%x, %max : tensor<4x257xf32>, tensor<4xf32>) outs(%s0 : tensor<4xf32>) {{
  ^bb0(%in: f32, %m: f32, %acc: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %1, %acc : f32
    linalg.yield %2 : f32
  }} -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x257xf32>
  %out = linalg.generic {{indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %max, %sum : tensor<4x257xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4x257xf32>) {{
  ^bb0(%in: f32, %m: f32, %s: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.log %s : f32
    %2 = arith.subf %0, %1 : f32
    linalg.yield %2 : f32
  }} -> tensor<4x257xf32>
  return %out : tensor<4x257xf32>
}}""",
    [Run("main", [T(x, "f32")], [T(xd - lse, "f32")], atol=1e-5, rtol=2e-5)]))

x, g, b, ln = layernorm_case(6, 200)
CASES.append(Case(
    "softmax/layernorm_f32_6x200.mlir",
    "Layernorm over rows of 200 with scale and shift: mean, x - mean, variance, normalize: one dispatch.",
    layernorm_program(6, 200),
    [Run("main", [T(x, "f32"), T(g, "f32"), T(b, "f32")], [T(ln, "f32")], atol=1e-5, rtol=1e-4)]))

x, w = f32(3, 384), f32(384)
xd = x.astype(np.float64)
rms = xd / np.sqrt((xd ** 2).mean(-1, keepdims=True) + 1e-6) * w
CASES.append(Case(
    "softmax/rmsnorm_f32_3x384.mlir",
    "RMSnorm over rows of 384: sum of squares, scale by rsqrt(mean + eps) and a weight: one dispatch.",
    f"""{ID}
func.func @main(%x: tensor<3x384xf32>, %w: tensor<384xf32>) -> tensor<3x384xf32> {{
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 384.0 : f32
  %eps = arith.constant 1.0e-6 : f32
  %e1 = tensor.empty() : tensor<3xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %ssq = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%x : tensor<3x384xf32>) outs(%s0 : tensor<3xf32>) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %acc : f32
    linalg.yield %1 : f32
  }} -> tensor<3xf32>
  %e2 = tensor.empty() : tensor<3x384xf32>
  %out = linalg.generic {{indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %ssq, %w : tensor<3x384xf32>, tensor<3xf32>, tensor<384xf32>) outs(%e2 : tensor<3x384xf32>) {{
  ^bb0(%in: f32, %q: f32, %wi: f32, %o: f32):
    %0 = arith.divf %q, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.mulf %in, %2 : f32
    %4 = arith.mulf %3, %wi : f32
    linalg.yield %4 : f32
  }} -> tensor<3x384xf32>
  return %out : tensor<3x384xf32>
}}""",
    [Run("main", [T(x, "f32"), T(w, "f32")], [T(rms, "f32")], atol=1e-5, rtol=1e-4)]))

x = f32(4, 300, lo=-6, hi=6)
CASES.append(Case(
    "softmax/softmax_and_row_max_f32_4x300.mlir",
    "Softmax whose row max is a second result: the chain is not row-fused (two results), and both are right.",
    f"""{ID}
func.func @main(%x: tensor<4x300xf32>) -> (tensor<4x300xf32>, tensor<4xf32>) {{
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%x : tensor<4x300xf32>) outs(%m0 : tensor<4xf32>) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  }} -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x300xf32>
  %exp = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %max : tensor<4x300xf32>, tensor<4xf32>) outs(%e2 : tensor<4x300xf32>) {{
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }} -> tensor<4x300xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%exp : tensor<4x300xf32>) outs(%s0 : tensor<4xf32>) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }} -> tensor<4xf32>
  %out = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%exp, %sum : tensor<4x300xf32>, tensor<4xf32>) outs(%e2 : tensor<4x300xf32>) {{
  ^bb0(%in: f32, %s: f32, %o: f32):
    %0 = arith.divf %in, %s : f32
    linalg.yield %0 : f32
  }} -> tensor<4x300xf32>
  return %out, %max : tensor<4x300xf32>, tensor<4xf32>
}}""",
    [Run("main", [T(x, "f32")], [T(softmax(x), "f32"), T(x.max(-1), "f32")],
         atol=1e-6, rtol=2e-5)]))

# Enough short rows for the GPU's one-row-per-subgroup form (16384 rows of
# 32): the rows are computed in the program from a 32-element input (row i
# scales it by (i mod 13) - 6), and the softmax is checked through its
# column sums, which keep the expected output small. The sums are a named
# linalg.reduce: a generic consumer would take the division into its own
# kernel and leave the chain two results.
c = f32(32, lo=-1.5, hi=1.5)
rows = 16384
scale = ((np.arange(rows) % 13) - 6).astype(np.float64)
xs = scale[:, None] * c.astype(np.float64)[None, :]
checksum = softmax(xs).sum(axis=0)
CASES.append(Case(
    "softmax/many_rows_softmax_f32_16384x32.mlir",
    "Softmax over 16384 rows of 32 built in the program (one dispatch), checked by its column sums (linalg.reduce).",
    f"""{ID}
#colin = affine_map<(i, j) -> (j)>
func.func @main(%c: tensor<32xf32>) -> tensor<32xf32> {{
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<{rows}x32xf32>
  %x = linalg.generic {{indexing_maps = [#colin, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%c : tensor<32xf32>) outs(%ex : tensor<{rows}x32xf32>) {{
  ^bb0(%cj: f32, %o: f32):
    %i = linalg.index 0 : index
    %c13 = arith.constant 13 : index
    %c6 = arith.constant 6.0 : f32
    %m = arith.remui %i, %c13 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %s = arith.subf %mf, %c6 : f32
    %v = arith.mulf %s, %cj : f32
    linalg.yield %v : f32
  }} -> tensor<{rows}x32xf32>
  %e1 = tensor.empty() : tensor<{rows}xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<{rows}xf32>) -> tensor<{rows}xf32>
  %max = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%x : tensor<{rows}x32xf32>) outs(%m0 : tensor<{rows}xf32>) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  }} -> tensor<{rows}xf32>
  %exp = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %max : tensor<{rows}x32xf32>, tensor<{rows}xf32>) outs(%ex : tensor<{rows}x32xf32>) {{
  ^bb0(%in: f32, %mx: f32, %o: f32):
    %0 = arith.subf %in, %mx : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }} -> tensor<{rows}x32xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<{rows}xf32>) -> tensor<{rows}xf32>
  %sum = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%exp : tensor<{rows}x32xf32>) outs(%s0 : tensor<{rows}xf32>) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }} -> tensor<{rows}xf32>
  %sm = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%exp, %sum : tensor<{rows}x32xf32>, tensor<{rows}xf32>) outs(%ex : tensor<{rows}x32xf32>) {{
  ^bb0(%in: f32, %s: f32, %o: f32):
    %0 = arith.divf %in, %s : f32
    linalg.yield %0 : f32
  }} -> tensor<{rows}x32xf32>
  %ec = tensor.empty() : tensor<32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ec : tensor<32xf32>) -> tensor<32xf32>
  %cs = linalg.reduce ins(%sm : tensor<{rows}x32xf32>) outs(%z : tensor<32xf32>) dimensions = [0]
    (%p: f32, %acc: f32) {{
      %0 = arith.addf %p, %acc : f32
      linalg.yield %0 : f32
    }}
  return %cs : tensor<32xf32>
}}""",
    [Run("main", [T(c, "f32")], [T(checksum, "f32")], atol=1e-3, rtol=1e-4)]))

# Softmax over long rows read from memory, made by a matmul in the program
# (K = 16 of small integers times quarters: exact in f16 and f32 in any
# order), so no input travels; the softmax is checked through
# y = softmax(x) w (a named matvec, its own dispatch), values in
# [0.11, 0.89] against float64 with the softmax rounded to the row type as
# the kernel does. Exponentials off by 6e-6 relative move y by under 3e-5;
# a value read from a neighbouring slot or chunk, or another row, moves it
# by 0.1 to 0.8.
# - 1024 rows of 32768 f16: on sm_90 GPUs the rows are staged in shared
#   memory (kiln-gpu-lower-rows), a form only rows this long take.
# - 4096 rows of 16384 f32: enough rows to fill a GPU with 128-thread
#   workgroups, whose share of a row (128 f32) would not be held between
#   the ops; kiln-gpu-select-strategy widens them to 256 threads (64 f32
#   held in registers).
def matmul_softmax_case(rows, cols, ty, title):
    depth = 16
    j = np.arange(cols)
    gen_a, a = modular_matrix("a", rows, depth, "f16", 3, 1, 5, 2)
    gen_b, b = modular_matrix("b", depth, cols, "f16", 7, 13, 9, 4, 0.25)
    w = ((13 * j + 3) % 9) * 0.125  # in phase with b's columns: y moves with any misplaced value
    program = f"""{ID}
#k = affine_map<(i, j) -> (i, j)>
#v = affine_map<(j) -> (j)>
func.func @main() -> tensor<{rows}xf32> {{
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %zh = arith.constant 0.0 : f16
{gen_a}{gen_b}
  %ex = tensor.empty() : tensor<{rows}x{cols}xf16>
  %x0 = linalg.fill ins(%zh : f16) outs(%ex : tensor<{rows}x{cols}xf16>) -> tensor<{rows}x{cols}xf16>
  %x = linalg.matmul ins(%a, %b : tensor<{rows}x{depth}xf16>, tensor<{depth}x{cols}xf16>) outs(%x0 : tensor<{rows}x{cols}xf16>) -> tensor<{rows}x{cols}xf16>
  %e1 = tensor.empty() : tensor<{rows}xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<{rows}xf32>) -> tensor<{rows}xf32>
  %max = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%x : tensor<{rows}x{cols}xf16>) outs(%m0 : tensor<{rows}xf32>) {{
  ^bb0(%in: f16, %acc: f32):
    %v = arith.extf %in : f16 to f32
    %0 = arith.maximumf %v, %acc : f32
    linalg.yield %0 : f32
  }} -> tensor<{rows}xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<{rows}xf32>) -> tensor<{rows}xf32>
  %sum = linalg.generic {{indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%x, %max : tensor<{rows}x{cols}xf16>, tensor<{rows}xf32>) outs(%s0 : tensor<{rows}xf32>) {{
  ^bb0(%in: f16, %mx: f32, %acc: f32):
    %v = arith.extf %in : f16 to f32
    %0 = arith.subf %v, %mx : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %1, %acc : f32
    linalg.yield %2 : f32
  }} -> tensor<{rows}xf32>
  %sm = linalg.generic {{indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %max, %sum : tensor<{rows}x{cols}xf16>, tensor<{rows}xf32>, tensor<{rows}xf32>) outs(%ex : tensor<{rows}x{cols}xf16>) {{
  ^bb0(%in: f16, %mx: f32, %s: f32, %o: f16):
    %v = arith.extf %in : f16 to f32
    %0 = arith.subf %v, %mx : f32
    %1 = math.exp %0 : f32
    %2 = arith.divf %1, %s : f32
    %3 = arith.truncf %2 : f32 to f16
    linalg.yield %3 : f16
  }} -> tensor<{rows}x{cols}xf16>
  %ew = tensor.empty() : tensor<{cols}xf16>
  %w = linalg.generic {{indexing_maps = [#v], iterator_types = ["parallel"]}} outs(%ew : tensor<{cols}xf16>) {{
  ^bb0(%o: f16):
    %c = linalg.index 0 : index
    %c13 = arith.constant 13 : index
    %c3 = arith.constant 3 : index
    %c9 = arith.constant 9 : index
    %t = arith.muli %c, %c13 : index
    %t3 = arith.addi %t, %c3 : index
    %m = arith.remui %t3, %c9 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %e = arith.constant 0.125 : f32
    %v = arith.mulf %mf, %e : f32
    %h = arith.truncf %v : f32 to f16
    linalg.yield %h : f16
  }} -> tensor<{cols}xf16>
  %y0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<{rows}xf32>) -> tensor<{rows}xf32>
  %y = linalg.matvec ins(%sm, %w : tensor<{rows}x{cols}xf16>, tensor<{cols}xf16>) outs(%y0 : tensor<{rows}xf32>) -> tensor<{rows}xf32>
  return %y : tensor<{rows}xf32>
}}"""
    if ty == "f32":
        # The same program on f32 rows: no widening or narrowing.
        for old, new in (("    %h = arith.truncf %v : f32 to f16\n", ""),
                         ("linalg.yield %h : f16", "linalg.yield %v : f32"),
                         ("    %v = arith.extf %in : f16 to f32\n", ""),
                         ("arith.maximumf %v, %acc", "arith.maximumf %in, %acc"),
                         ("arith.subf %v, %mx", "arith.subf %in, %mx"),
                         ("    %3 = arith.truncf %2 : f32 to f16\n", ""),
                         ("linalg.yield %3 : f16", "linalg.yield %2 : f32"),
                         ("f16", "f32")):
            program = program.replace(old, new)
    sm = softmax(a @ b).astype({"f16": np.float16, "f32": np.float32}[ty])
    CASES.append(Case(
        f"softmax/{'staged' if ty == 'f16' else 'wide'}_softmax_{ty}_{rows}x{cols}.mlir",
        title, program,
        [Run("main", [], [T(sm.astype(np.float64) @ w, "f32")], atol=1e-4, rtol=1e-4)]))


matmul_softmax_case(
    1024, 32768, "f16",
    "Softmax over 1024 rows of 32768 f16 made by a matmul (GPUs stage such rows in shared memory), checked through softmax(x) w.")
matmul_softmax_case(
    4096, 16384, "f32",
    "Softmax over 4096 rows of 16384 f32 made by a matmul (GPU workgroups widened to hold the rows), checked through softmax(x) w.")

# Rows of 4096 split evenly into the threads' 128-bit chunks: on GPUs the
# row and x - mean are held from op to op (in registers; in shared memory
# with --gpu-stage-rows=always).
x, g, b, ln = layernorm_case(2, 4096)
CASES.append(Case(
    "softmax/layernorm_f32_2x4096.mlir",
    "Layernorm over rows of 4096 (rows held between the ops on GPUs): one dispatch.",
    layernorm_program(2, 4096),
    [Run("main", [T(x, "f32"), T(g, "f32"), T(b, "f32")], [T(ln, "f32")], atol=1e-5, rtol=1e-4)]))

x16 = f32(2, 8192, lo=-8, hi=8).astype(np.float16)
CASES.append(Case(
    "softmax/row_softmax_f16_2x8192.mlir",
    "Softmax over f16 rows of 8192 (rows held between the ops on GPUs), reduced and exponentiated in f32, rounded to f16 once.",
    softmax_program(2, 8192, "f16"),
    [Run("main", [T(x16, "f16")], [T(softmax(x16.astype(np.float32)), "f16")],
         atol=2e-5, rtol=1e-2)]))

"""Reductions with few results over many elements (a sum over all elements,
column sums and maxima over a short row of columns, a few very long rows):
kiln-split-reductions splits them into a partial and a final dispatch on
every target. The inputs are computed in the program from their indices (a
large tensor from a small test file); fused into the reduction, they make
the split op rewrite the loop index its body reads. Exact patterns (multiples
of 0.25 that every partial sum holds exactly) check that each element is
counted once; pseudo-random values over 2^20 elements check the summation
error against a float64 reference, within the log2(n) roundings of a tree
order."""

import numpy as np

from e2elib import Case, Run, T

CASES = []


def pattern(rows, cols, a, b, period):
    """((r * a + c * b) % period - period // 2) / 4: multiples of 0.25."""
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    return (((r * a + c * b) % period) - period // 2) * 0.25


def hashed(rows, cols, offset=0.5):
    """((linear index * 40503) % 65536) / 65536 - offset: pseudo-random values
    in [-offset, 1 - offset), exact in f32."""
    i = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    return ((i * 40503) % 65536) / 65536.0 - offset


def generator(name, rows, cols, ty, value_lines):
    """MLIR lines of a rows x cols tensor `name` of `ty` whose element (r, c)
    is computed by `value_lines` (from %r, %c: index) into %v: f32."""
    t = f"tensor<{rows}x{cols}x{ty}>"
    narrow = (f"\n    %n = arith.truncf %v : f32 to {ty}\n    linalg.yield %n : {ty}"
              if ty != "f32" else "\n    linalg.yield %v : f32")
    return f"""  %e{name[1:]} = tensor.empty() : {t}
  {name} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}} outs(%e{name[1:]} : {t}) {{
  ^bb0(%o: {ty}):
    %r = linalg.index 0 : index
    %c = linalg.index 1 : index
{value_lines}{narrow}
  }} -> {t}"""


def pattern_lines(a, b, period):
    return f"""    %ca = arith.constant {a} : index
    %cb = arith.constant {b} : index
    %cp = arith.constant {period} : index
    %ch = arith.constant {period // 2} : index
    %ra = arith.muli %r, %ca : index
    %cbv = arith.muli %c, %cb : index
    %s = arith.addi %ra, %cbv : index
    %m = arith.remui %s, %cp : index
    %d = arith.subi %m, %ch : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %q = arith.constant 0.25 : f32
    %v = arith.mulf %df, %q : f32"""


def hashed_lines(cols, offset=0.5):
    return f"""    %cc = arith.constant {cols} : index
    %rc = arith.muli %r, %cc : index
    %i = arith.addi %rc, %c : index
    %k = arith.constant 40503 : index
    %ik = arith.muli %i, %k : index
    %p = arith.constant 65536 : index
    %m = arith.remui %ik, %p : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %sc = arith.constant 1.52587890625e-05 : f32
    %u = arith.mulf %mf, %sc : f32
    %h = arith.constant {offset} : f32
    %v = arith.subf %u, %h : f32"""


def reduce_program(rows, cols, ty, value_lines, dims, combiner, init, out_shape):
    """The generated input reduced over `dims` with `combiner`, accumulating in
    f32 (narrow inputs widened in the body)."""
    t = f"tensor<{rows}x{cols}x{ty}>"
    r = f"tensor<{'x'.join(map(str, out_shape))}{'x' if out_shape else ''}f32>"
    widen = "\n      %w = arith.extf %a : " + ty + " to f32" if ty != "f32" else ""
    a = "%w" if ty != "f32" else "%a"
    return f"""func.func @main() -> {r} {{
{generator("%x", rows, cols, ty, value_lines)}
  %init = arith.constant {init} : f32
  %er = tensor.empty() : {r}
  %f = linalg.fill ins(%init : f32) outs(%er : {r}) -> {r}
  %red = linalg.reduce ins(%x : {t}) outs(%f : {r}) dimensions = {dims}
    (%a: {ty}, %acc: f32) {{{widen}
      %y = {combiner} {a}, %acc : f32
      linalg.yield %y : f32
    }}
  return %red : {r}
}}"""


def exact_case(path, description, rows, cols, ty, abp, dims, combiner, init,
               out_shape, reduce):
    """A reduction over the exact pattern(rows, cols, *abp), checked with no
    tolerance against `reduce` of it."""
    x = pattern(rows, cols, *abp)
    CASES.append(Case(
        path, description,
        reduce_program(rows, cols, ty, pattern_lines(*abp), dims, combiner,
                       init, out_shape),
        [Run("main", [], [T(np.array(reduce(x)), "f32")], atol=0, rtol=0)]))


# A sum over all 2^24 elements: 512 partial rows, then one.
exact_case(
    "reduction/split_sum_all_f32_4096x4096.mlir",
    "Sum over all 4096x4096 f32 elements, split into 512 partials and a final sum; exact.",
    4096, 4096, "f32", (7, 3, 11), "[0, 1]", "arith.addf", "0.0", [],
    lambda x: x.sum())

# A column max over 4096 rows of 2048 columns: 2^18 partials of 32 rows.
exact_case(
    "reduction/split_column_max_f32_4096x2048.mlir",
    "Column max over 4096x2048 f32, split into partial maxima of 32 rows; exact.",
    4096, 2048, "f32", (5, 13, 97), "[0]", "arith.maxnumf", "0xFF800000",
    [2048], lambda x: x.max(axis=0))

# A column sum of bf16 values over 8192 rows of 512, accumulated in f32:
# 128 slices of 64 rows (each thread sums at least 32).
exact_case(
    "reduction/split_column_sum_bf16_8192x512.mlir",
    "Column sum over 8192x512 bf16 in f32, split into partial sums of 64 rows; exact.",
    8192, 512, "bf16", (3, 7, 9), "[0]", "arith.addf", "0.0", [512],
    lambda x: x.sum(axis=0))

# Four rows of 65536: 16 slices of 4096 per row (slices keep at least 4096
# elements).
exact_case(
    "reduction/split_row_sum_f32_4x65536.mlir",
    "Row sums over 4 rows of 65536 f32, split into 16 slices per row; exact.",
    4, 65536, "f32", (1, 5, 23), "[1]", "arith.addf", "0.0", [4],
    lambda x: x.sum(axis=1))


def tree_tolerance(x):
    """Error bound of an f32 sum of x in an order of depth about log2(n)
    (plus the serial runs within a thread), against the float64 sum."""
    n = x.size
    return float(np.abs(x).sum() * (np.log2(n) + 8) * 2.0 ** -24)


# 2^20 pseudo-random f32 values summed: the float64 reference, within the
# roundings of a tree order.
x = hashed(1, 1 << 20)
CASES.append(Case(
    "reduction/split_sum_1m_f32.mlir",
    "Sum of 2^20 pseudo-random f32 values in [-0.5, 0.5) against a float64 reference, within (log2 n + 8) roundings.",
    reduce_program(1, 1 << 20, "f32", hashed_lines(1 << 20), "[0, 1]",
                   "arith.addf", "0.0", []),
    [Run("main", [], [T(np.array(x.sum()), "f32")], atol=tree_tolerance(x), rtol=0)]))

# Row sums of 32768 positive values on 256 rows (too many results to be
# split): each row's sum in a tree order within every thread too. Summed
# serially, the rows were off by up to 73 roundings (of the sum); the bound
# here allows 23.
x = hashed(256, 32768, offset=0.0)
CASES.append(Case(
    "reduction/row_sums_f32_256x32768_positive.mlir",
    "Row sums over 256 rows of 32768 pseudo-random f32 values in [0, 1) against float64, within (log2 n + 8) roundings.",
    reduce_program(256, 32768, "f32", hashed_lines(32768, offset=0.0), "[1]",
                   "arith.addf", "0.0", [256]),
    [Run("main", [], [T(x.sum(axis=1), "f32")],
         atol=max(tree_tolerance(row) for row in x), rtol=0)]))

# The same values rounded to f16, summed in f32.
x = hashed(1, 1 << 20).astype(np.float16).astype(np.float64)
CASES.append(Case(
    "reduction/split_sum_1m_f16.mlir",
    "Sum of 2^20 pseudo-random f16 values accumulated in f32 against a float64 reference, within (log2 n + 8) roundings.",
    reduce_program(1, 1 << 20, "f16", hashed_lines(1 << 20), "[0, 1]",
                   "arith.addf", "0.0", []),
    [Run("main", [], [T(np.array(x.sum()), "f32")], atol=tree_tolerance(x), rtol=0)]))

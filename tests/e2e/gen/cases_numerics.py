"""Reduction numerics: long f16 and bf16 sums accumulate in f32 and round
once (kiln-widen-reduction-accumulators), checked against float64 sums of
the same (rounded) inputs. A sum accumulated in the narrow type itself
stops growing once the running sum's spacing exceeds the addend (4096
copies of f16 0.001 gave 4.0) and fails these."""

import numpy as np

from e2elib import Case, Run, T, bf16

rng = np.random.default_rng(29)
CASES = []


def reduce_program(shape, ty):
    """Sum over the last dimension of `shape` with linalg.reduce."""
    dims = "x".join(str(d) for d in shape)
    out = shape[:-1]
    out_t = f"tensor<{'x'.join(str(d) for d in out)}x{ty}>" if out else f"tensor<{ty}>"
    return f"""func.func @main(%x: tensor<{dims}x{ty}>) -> {out_t} {{
  %zero = arith.constant 0.0 : {ty}
  %e = tensor.empty() : {out_t}
  %f = linalg.fill ins(%zero : {ty}) outs(%e : {out_t}) -> {out_t}
  %r = linalg.reduce ins(%x : tensor<{dims}x{ty}>) outs(%f : {out_t}) dimensions = [{len(shape) - 1}]
    (%a: {ty}, %acc: {ty}) {{
      %s = arith.addf %a, %acc : {ty}
      linalg.yield %s : {ty}
    }}
  return %r : {out_t}
}}"""


# f16 0.001 is 0.0010004043579...; 4096 of them sum to 4.0977 (f16).
x = np.full(4096, 0.001, dtype=np.float16)
CASES.append(Case(
    "reduction/sum_f16_4096_small_addends.mlir",
    "4096 copies of f16 0.001 sum to 4.098 (accumulated in f32), not 4.0 (f16 accumulation).",
    reduce_program([4096], "f16"),
    [Run("main", [T(x, "f16", splat=True)],
         [T(np.float16(x.astype(np.float64).sum()), "f16")], atol=0, rtol=1e-3)]))

x = rng.uniform(0.0, 1.0, size=4096).astype(np.float16)
CASES.append(Case(
    "reduction/sum_f16_4096_random.mlir",
    "A sum of 4096 random f16 values in [0, 1) against the float64 sum, one f16 rounding.",
    reduce_program([4096], "f16"),
    [Run("main", [T(x, "f16")], [T(np.float16(x.astype(np.float64).sum()), "f16")],
         atol=0, rtol=1e-3)]))

# bf16 0.01 is 0.010009765625: 32768 of them per row sum to 327.99 -> 328.
x = bf16(np.full((2, 32768), 0.01, dtype=np.float32))
CASES.append(Case(
    "reduction/row_sum_bf16_2x32768.mlir",
    "Rows of 32768 bf16 0.01 sum to 328 (accumulated in f32); bf16 accumulation stalls near 2.",
    reduce_program([2, 32768], "bf16"),
    [Run("main", [T(x, "bf16", splat=True)],
         [T(x.astype(np.float64).sum(axis=1), "bf16")], atol=0, rtol=8e-3)]))

a = bf16(rng.uniform(-1.0, 1.0, size=(1, 1024)).astype(np.float32))
b = bf16(rng.uniform(-1.0, 1.0, size=(1, 1024)).astype(np.float32))
CASES.append(Case(
    "reduction/dot_bf16_1024.mlir",
    "A bf16 dot product of 1024 elements: products and sum in f32, one bf16 rounding.",
    """#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @main(%a: tensor<1x1024xbf16>, %b: tensor<1x1024xbf16>) -> tensor<1xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<1xbf16>
  %f = linalg.fill ins(%zero : bf16) outs(%e : tensor<1xbf16>) -> tensor<1xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a, %b : tensor<1x1024xbf16>, tensor<1x1024xbf16>) outs(%f : tensor<1xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %p, %acc : bf16
    linalg.yield %s : bf16
  } -> tensor<1xbf16>
  return %r : tensor<1xbf16>
}""",
    [Run("main", [T(a, "bf16"), T(b, "bf16")],
         [T((a.astype(np.float64) * b.astype(np.float64)).sum(axis=1), "bf16")],
         atol=0.02, rtol=8e-3)]))

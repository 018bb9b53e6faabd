#!/usr/bin/env python3
"""Inputs and the reference output of an attention test (tests/e2e/attention):
q [B,M,D], k [B,N,D], v [B,N,D] in the element type, and
out = trunc((trunc(P) v) / rowsum(P)) with P = exp((q k^T - rowmax) * scale),
the chain the tests spell out in linalg, computed in float64 with the
probabilities rounded to the element type as the program rounds them.

  attention_data.py DIR --batch=B --m=M --n=N --d=D --dtype=f16|bf16
                    [--scale=C] [--seed=S] [--causal]

With --causal, scores of keys after the query (n > m) are -inf.

writes DIR/q.npy, k.npy, v.npy and out.npy (bf16 as npy's '<V2', which
kiln-run reads as bf16)."""

import argparse
import os

import numpy as np


def round_bf16(values):
    """float32 values rounded to bf16 (nearest, ties to even), as float32."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    bits = bits.astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def rounded(values, dtype):
    if dtype == "f16":
        return values.astype(np.float16).astype(np.float64)
    return round_bf16(values.astype(np.float32)).astype(np.float64)


def save(path, values, dtype):
    if dtype == "f16":
        np.save(path, values.astype(np.float16))
        return
    bits = round_bf16(values.astype(np.float32)).view(np.uint32) >> 16
    np.save(path, bits.astype(np.uint16).view("V2"))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("dir")
    for name in ("batch", "m", "n", "d"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--dtype", choices=("f16", "bf16"), required=True)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--causal", action="store_true")
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    q, k, v = (rounded(rng.standard_normal((a.batch, rows, a.d)), a.dtype)
               for rows in (a.m, a.n, a.n))
    s = q @ k.transpose(0, 2, 1)
    if a.causal:
        s[:, np.arange(a.m)[:, None] < np.arange(a.n)[None, :]] = -np.inf
    # The program's f32 scale constant.
    scale = float(np.float32(a.scale))
    probabilities = np.exp((s - s.max(axis=2, keepdims=True)) * scale)
    o = rounded(probabilities, a.dtype) @ v
    out = o / probabilities.sum(axis=2, keepdims=True)
    for name, values in (("q", q), ("k", k), ("v", v), ("out", out)):
        save(os.path.join(a.dir, name + ".npy"), values, a.dtype)


if __name__ == "__main__":
    main()

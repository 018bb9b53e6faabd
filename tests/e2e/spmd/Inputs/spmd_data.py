#!/usr/bin/env python3
"""Per-rank inputs and numpy reference outputs of the SPMD e2e tests.

usage: spmd_data.py CASE OUTDIR

Writes OUTDIR/in<i>_<rank>.npy (input i of that rank) and
OUTDIR/out<i>_<rank>.npy (expected output i of that rank), which the tests
pass to kiln-run as --input=@OUTDIR/in<i>_%r.npy and
--expected-output=@OUTDIR/out<i>_%r.npy. Ranks are numbered row-major over
the grid, as kiln-run numbers them. Data is seeded, so files are the same on
every run.
"""
import os
import sys

import numpy as np


def data(rng, shape, dtype=np.float32):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-20, 20, size=shape).astype(dtype)
    return rng.uniform(-2.0, 2.0, size=shape).astype(dtype)


def all_reduce_sum_2(rng):
    # grid 2, all_reduce sum over axis 0 of 4x3xf32.
    xs = [data(rng, (4, 3)) for _ in range(2)]
    total = sum(xs)
    return [[x] for x in xs], [[total] for _ in range(2)]


def all_reduce_2x2(rng):
    # grid 2x2 (4 ranks): sum over both axes, and max over axis 1 only
    # (ranks {0,1} and {2,3} are the groups).
    xs = [data(rng, (8,)) for _ in range(4)]
    total = sum(xs)
    row_max = [np.maximum(xs[0], xs[1]), np.maximum(xs[2], xs[3])]
    return [[x] for x in xs], [[total, row_max[r // 2]] for r in range(4)]


def all_gather_inner(rng):
    # grid 2, all_gather of 4x3xf32 along dimension 1 -> 4x6xf32.
    xs = [data(rng, (4, 3)) for _ in range(2)]
    gathered = np.concatenate(xs, axis=1)
    return [[x] for x in xs], [[gathered] for _ in range(2)]


def reduce_scatter_inner(rng):
    # grid 2, reduce_scatter sum of 4x6xi32 along dimension 1 -> 4x3xi32.
    xs = [data(rng, (4, 6), np.int32) for _ in range(2)]
    total = sum(xs)
    return [[x] for x in xs], [[total[:, 3 * r:3 * r + 3]] for r in range(2)]


def all_to_all(rng):
    # grid 2, all_to_all of 4x6xf32, split_axis 0, concat_axis 1 -> 2x12.
    xs = [data(rng, (4, 6)) for _ in range(2)]
    outs = []
    for r in range(2):
        chunks = [x[2 * r:2 * r + 2, :] for x in xs]  # chunk r of every rank
        outs.append([np.concatenate(chunks, axis=1)])
    return [[x] for x in xs], outs


def broadcast_2x2(rng):
    # grid 2x2, broadcast over axis 1 from root [1]: within each row
    # (ranks {0,1}, {2,3}) the second rank's 5xf32 goes to both.
    xs = [data(rng, (5,)) for _ in range(4)]
    return [[x] for x in xs], [[xs[2 * (r // 2) + 1]] for r in range(4)]


def dp_mlp_step(rng):
    # Data-parallel SGD step of a linear layer with MSE loss on 2 ranks: each
    # rank holds 4 of the 8 samples and the same weights; the gradient is
    # averaged with all_reduce, so every rank ends with the same weights.
    w = data(rng, (3, 2))
    xs = [data(rng, (4, 3)) for _ in range(2)]
    ys = [data(rng, (4, 2)) for _ in range(2)]
    grads = [x.T @ (x @ w - y) * (2.0 / 4.0) for x, y in zip(xs, ys)]
    new_w = (w - np.float32(0.1) * (grads[0] + grads[1]) / 2).astype(np.float32)
    return [[xs[r], ys[r], w] for r in range(2)], [[new_w] for _ in range(2)]


def tp_mlp(rng):
    # Tensor-parallel two-layer MLP on 2 ranks: rank r holds columns r of W1
    # and rows r of W2. h_r = relu(x @ W1_r); the first output is h gathered
    # along dimension 1; the second is (h_r @ W2_r) reduce-scattered along
    # dimension 0 (rank r gets rows 2r, 2r+1 of relu(x @ W1) @ W2).
    x = data(rng, (4, 5))
    w1 = data(rng, (5, 6))
    w2 = data(rng, (6, 3))
    h = np.maximum(x @ w1, 0)
    z = h @ w2
    ins = [[x, w1[:, 3 * r:3 * r + 3], w2[3 * r:3 * r + 3, :]] for r in range(2)]
    outs = [[h, z[2 * r:2 * r + 2, :]] for r in range(2)]
    return ins, outs


def sharded_matmul(rng):
    # The partitioned global-view matmul: A (4x8) split along columns, B (8x6)
    # along rows over 2 ranks; every rank gets the full product.
    a = data(rng, (4, 8))
    b = data(rng, (8, 6))
    ins = [[a[:, 4 * r:4 * r + 4], b[4 * r:4 * r + 4, :]] for r in range(2)]
    return ins, [[a @ b] for _ in range(2)]


CASES = {f.__name__: f for f in [all_reduce_sum_2, all_reduce_2x2,
                                 all_gather_inner, reduce_scatter_inner,
                                 all_to_all, broadcast_2x2, dp_mlp_step,
                                 tp_mlp, sharded_matmul]}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in CASES:
        sys.exit("usage: spmd_data.py {%s} OUTDIR" % "|".join(CASES))
    name, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    ins, outs = CASES[name](np.random.default_rng(1234))
    for rank, (rank_ins, rank_outs) in enumerate(zip(ins, outs)):
        for i, value in enumerate(rank_ins):
            np.save(os.path.join(outdir, f"in{i}_{rank}.npy"), value)
        for i, value in enumerate(rank_outs):
            np.save(os.path.join(outdir, f"out{i}_{rank}.npy"), value)


if __name__ == "__main__":
    main()

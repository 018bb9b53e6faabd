#!/usr/bin/env python3
"""Per-rank inputs and numpy references of one collective of the SPMD matrix.

usage: spmd_matrix_data.py OP TYPE OUTDIR --grid=SHAPE --axes=A[,B] --shape=S
           [--reduction=R] [--axis=A] [--split-axis=A --concat-axis=B]
           [--root=I[,J]]

OP is all_reduce, reduce_scatter, all_gather, all_to_all or broadcast, with
the attributes of the shard op as options (--axis is scatter_axis or
gather_axis); --shape is the per-rank input shape (3x5). Writes
OUTDIR/in_<rank>.npy and OUTDIR/out_<rank>.npy, the input and the expected
output of each rank, for kiln-run's --input=@OUTDIR/in_%r.npy
--expected-output=@OUTDIR/out_%r.npy. Ranks are row-major over the grid, as
kiln-run numbers them; a collective runs within each group of ranks that
differ only along --axes, and ranks are ordered within a group row-major over
--axes in the order given.

Inputs are chosen so that every reduction but average is exact in any order:
floats are integers scaled by a power of two, small enough that every partial
sum or product is representable, and integers never overflow. A reduction
order the runtime picks (or NCCL's on a GPU) cannot change the answer, so
those tests compare exactly. Average divides by the group size and is compared
with a tolerance. Data is seeded by the arguments: the same case writes the
same files on every run.
"""
import argparse
import os
import zlib

import numpy as np

INTEGER_TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}
# Bits of significand: integers up to 2**bits are exact.
FLOAT_BITS = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}
FLOAT_TYPES = {"f16": np.float16, "bf16": np.float32, "f32": np.float32,
               "f64": np.float64}


def to_bf16_bits(values):
    """Rounds float32 values to bf16 (nearest, ties to even); the 16-bit
    patterns as npy's 2-byte void type, which kiln-run reads as bf16."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16).view(np.dtype("V2"))


def integer_root(limit, n):
    """The largest b with b**n <= limit."""
    b = int(round(limit ** (1.0 / n)))
    while b ** n > limit:
        b -= 1
    while (b + 1) ** n <= limit:
        b += 1
    return b


def nonzero_integers(rng, bound, shape):
    """Integers in [-bound, bound] without 0 (a product of zeros shows
    little)."""
    magnitude = rng.integers(1, bound + 1, size=shape)
    return magnitude * rng.choice([-1, 1], size=shape)


def rank_data(rng, ty, reduction, ranks, shape):
    """One rank's input as float64 or int64 (exact values of type ty)."""
    if ty == "i1":
        return rng.integers(0, 2, size=shape).astype(bool)
    if ty in INTEGER_TYPES:
        limit = int(np.iinfo(INTEGER_TYPES[ty]).max)
        if reduction == "product":
            return nonzero_integers(rng, integer_root(limit, ranks), shape)
        if reduction and reduction.startswith("bitwise"):
            # Any bits, the sign bit included.
            return rng.integers(-limit - 1, limit + 1, size=shape,
                                dtype=np.int64)
        # Sums of `ranks` values stay in range.
        return rng.integers(-(limit // ranks), limit // ranks + 1, size=shape,
                            dtype=np.int64)
    exact = 2 ** FLOAT_BITS[ty]
    if reduction == "product":
        # Halves of integers whose product stays below 2**bits.
        return nonzero_integers(rng, integer_root(exact, ranks), shape) / 2.0
    if reduction == "average":
        # Quarters in [-4, 4]: the quotient rounds, so keep values small
        # and compare with a tolerance.
        return rng.integers(-16, 17, size=shape) / 4.0
    # Quarters of integers whose sum over the group stays below 2**bits.
    bound = exact // ranks
    return rng.integers(-bound, bound + 1, size=shape, dtype=np.int64) / 4.0


def reduce(values, reduction):
    """Elementwise reduction of the group's inputs (exact in int64/float64
    for the data above)."""
    stacked = np.stack(values)
    if stacked.dtype == bool:
        # i1 is logical: sum and max are or, product and min are and.
        if reduction in ("sum", "max"):
            return stacked.any(axis=0)
        if reduction in ("product", "min"):
            return stacked.all(axis=0)
    if reduction == "bitwise_and":
        return np.bitwise_and.reduce(stacked, axis=0)
    if reduction == "bitwise_or":
        return np.bitwise_or.reduce(stacked, axis=0)
    if reduction == "bitwise_xor":
        return np.bitwise_xor.reduce(stacked, axis=0)
    if reduction == "sum":
        return stacked.sum(axis=0)
    if reduction == "product":
        return stacked.prod(axis=0)
    if reduction == "min":
        return stacked.min(axis=0)
    if reduction == "max":
        return stacked.max(axis=0)
    if reduction == "average":
        return stacked.sum(axis=0) / len(values)
    raise ValueError("unknown reduction " + reduction)


def groups(grid, axes):
    """For each rank: (its group's ranks in group order, its index in it)."""
    result = []
    for rank in range(int(np.prod(grid))):
        coords = list(np.unravel_index(rank, grid))
        members = []
        for index in range(int(np.prod([grid[a] for a in axes]))):
            member = list(coords)
            for a, c in zip(axes, np.unravel_index(index, [grid[a] for a in axes])):
                member[a] = c
            members.append(int(np.ravel_multi_index(member, grid)))
        result.append((members, members.index(rank)))
    return result


def expected_outputs(args, inputs):
    """The shard op's result on every rank, from every rank's input."""
    outputs = []
    for members, index in groups(args.grid, args.axes):
        group = [inputs[m] for m in members]
        n = len(group)
        if args.op == "all_reduce":
            out = reduce(group, args.reduction)
        elif args.op == "reduce_scatter":
            out = np.split(reduce(group, args.reduction), n, axis=args.axis)[index]
        elif args.op == "all_gather":
            out = np.concatenate(group, axis=args.axis)
        elif args.op == "all_to_all":
            out = np.concatenate([np.split(x, n, axis=args.split_axis)[index]
                                  for x in group], axis=args.concat_axis)
        else:  # broadcast: the root's input, root a multi-index over axes.
            extents = [args.grid[a] for a in args.axes]
            root = int(np.ravel_multi_index(args.root, extents))
            out = group[root]
        outputs.append(out)
    return outputs


def to_npy_value(values, ty):
    """float64/int64/bool values as the array kiln-run reads as type ty."""
    if ty == "bf16":
        return to_bf16_bits(values)
    if ty == "i1":
        return np.asarray(values, bool)
    dtype = INTEGER_TYPES.get(ty) or FLOAT_TYPES[ty]
    return np.asarray(values).astype(dtype)


def int_list(text):
    return [int(v) for v in text.replace("x", ",").split(",")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("op", choices=["all_reduce", "reduce_scatter",
                                       "all_gather", "all_to_all", "broadcast"])
    parser.add_argument("type", choices=["i1", *INTEGER_TYPES, *FLOAT_TYPES])
    parser.add_argument("outdir")
    parser.add_argument("--grid", type=int_list, required=True)
    parser.add_argument("--axes", type=int_list, required=True)
    parser.add_argument("--shape", type=int_list, required=True)
    parser.add_argument("--reduction")
    parser.add_argument("--axis", type=int)
    parser.add_argument("--split-axis", type=int)
    parser.add_argument("--concat-axis", type=int)
    parser.add_argument("--root", type=int_list)
    args = parser.parse_args()

    case = sorted((k, v) for k, v in vars(args).items() if k != "outdir")
    seed = zlib.crc32(repr(case).encode())
    rng = np.random.default_rng(seed)
    group_size = int(np.prod([args.grid[a] for a in args.axes]))
    ranks = int(np.prod(args.grid))
    inputs = [rank_data(rng, args.type, args.reduction, group_size, args.shape)
              for _ in range(ranks)]
    # Every input value is exact in its element type (see rank_data), so the
    # references are computed from the values and rounded once at the end.
    outputs = expected_outputs(args, inputs)

    os.makedirs(args.outdir, exist_ok=True)
    for rank in range(ranks):
        np.save(os.path.join(args.outdir, f"in_{rank}.npy"),
                to_npy_value(inputs[rank], args.type))
        np.save(os.path.join(args.outdir, f"out_{rank}.npy"),
                to_npy_value(outputs[rank], args.type))


if __name__ == "__main__":
    main()

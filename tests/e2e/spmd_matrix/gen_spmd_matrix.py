#!/usr/bin/env python3
"""Writes the collective correctness matrix: one SPMD lit test per case in
this folder (tests/e2e/spmd_matrix/*.mlir).

  gen_spmd_matrix.py            rewrite the tests (and remove stale ones)
  gen_spmd_matrix.py --check    exit 1 if a test differs from its case

Each test compiles one shard collective with kiln-compile and runs it on
every rank with kiln-run; the per-rank inputs and the numpy references are
written at test time by Inputs/spmd_matrix_data.py from the same attributes
the program carries. The matrix:

- on 2 ranks: every collective x every reduction (sum, product, min, max;
  average for floats only, as the compiler requires) x every element type
  (i8, i16, i32, i64, f16, bf16, f32, f64; i1 too for all_gather, all_to_all
  and broadcast, which do not reduce);
- on 3, 4 and 8 ranks: the same for f32 and i32;
- on a 2x2 grid: each collective over one grid axis;
- on a 2x4 grid: each collective over one axis or over both (groups of 2,
  4 and 8 ranks, in the grid's order and in the reverse order).

all_reduce, all_gather and broadcast take element counts that the rank count
does not divide (3x5 on 2, 4 and 8 ranks, 7 on 3); reduce_scatter and
all_to_all split a dimension of 2N.

On the host target all_reduce, all_gather and reduce_scatter of these sizes
are compiled collective kernels; the `_library` cases run them as the local
driver's library collectives, the `_wgN` cases over N workgroups, the
`_twoshot` cases as two-shot all_reduces, and the bitwise and i1 reductions
(which only kernels run) on several rank counts.
"""
import argparse
import os
import sys
from dataclasses import dataclass
from typing import Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))

INTEGER_TYPES = ["i8", "i16", "i32", "i64"]
FLOAT_TYPES = ["f16", "bf16", "f32", "f64"]
ALL_TYPES = INTEGER_TYPES + FLOAT_TYPES
REDUCTIONS = ["sum", "product", "min", "max", "average"]

# kiln-run tolerances of average, the only inexact reduction: the quotient
# rounds, and NCCL may scale each input before summing. Every other case
# compares exactly: its inputs make the result exact in any reduction order.
AVERAGE_TOLERANCE = {"f16": ("1e-2", "1e-2"), "bf16": ("3e-2", "2e-2"),
                     "f32": ("1e-5", "1e-5"), "f64": ("1e-12", "1e-12")}


@dataclass(frozen=True)
class Case:
    op: str
    type: str
    grid: Tuple[int, ...]
    axes: Tuple[int, ...]
    shape: Tuple[int, ...]           # per-rank input shape
    reduction: Optional[str] = None  # all_reduce, reduce_scatter
    axis: Optional[int] = None       # scatter_axis / gather_axis
    split_axis: Optional[int] = None
    concat_axis: Optional[int] = None
    root: Optional[Tuple[int, ...]] = None
    # A name suffix for cases that differ only in shape or compile flags.
    variant: Optional[str] = None
    # kiln-compile flags beyond --target (e.g. the library path).
    flags: str = ""

    @property
    def group_size(self):
        size = 1
        for a in self.axes:
            size *= self.grid[a]
        return size

    @property
    def result_shape(self):
        shape = list(self.shape)
        n = self.group_size
        if self.op == "reduce_scatter":
            shape[self.axis] //= n
        elif self.op == "all_gather":
            shape[self.axis] *= n
        elif self.op == "all_to_all":
            shape[self.split_axis] //= n
            shape[self.concat_axis] *= n
        return tuple(shape)

    @property
    def name(self):
        parts = [self.op, self.reduction, self.type,
                 "g" + "x".join(map(str, self.grid))]
        if len(self.grid) > 1:
            parts.append("axes" + "".join(map(str, self.axes)))
        if self.root is not None and any(self.root):
            parts.append("root" + "".join(map(str, self.root)))
        parts.append(self.variant)
        return "_".join(p for p in parts if p)


def tensor(shape, ty):
    return "tensor<%sx%s>" % ("x".join(map(str, shape)), ty)


def joined(values):
    return ",".join(map(str, values))


def shard_op(case):
    """The collective, as `%0 = shard.... : type`."""
    src, dst = tensor(case.shape, case.type), tensor(case.result_shape, case.type)
    head = "%%0 = shard.%s %%x on @grid grid_axes = [%s]" % (
        case.op, ", ".join(map(str, case.axes)))
    if case.op == "all_reduce":
        return "%s reduction = %s : %s -> %s" % (head, case.reduction, src, dst)
    if case.op == "reduce_scatter":
        return "%s reduction = %s scatter_axis = %d : %s -> %s" % (
            head, case.reduction, case.axis, src, dst)
    if case.op == "all_gather":
        return "%s gather_axis = %d : %s -> %s" % (head, case.axis, src, dst)
    if case.op == "all_to_all":
        return "%s split_axis = %d concat_axis = %d : %s -> %s" % (
            head, case.split_axis, case.concat_axis, src, dst)
    return "%s root = [%s] : (%s) -> %s" % (
        head, ", ".join(map(str, case.root)), src, dst)


def data_args(case):
    """Arguments of Inputs/spmd_matrix_data.py for this case."""
    args = [case.op, case.type, "%t", "--grid=" + "x".join(map(str, case.grid)),
            "--axes=" + joined(case.axes), "--shape=" + "x".join(map(str, case.shape))]
    if case.reduction:
        args.append("--reduction=" + case.reduction)
    if case.axis is not None:
        args.append("--axis=%d" % case.axis)
    if case.split_axis is not None:
        args += ["--split-axis=%d" % case.split_axis,
                 "--concat-axis=%d" % case.concat_axis]
    if case.root is not None:
        args.append("--root=" + joined(case.root))
    return " ".join(args)


def summary(case):
    what = "%s %s" % (case.op, case.reduction) if case.reduction else case.op
    if len(case.grid) == 1:
        where = "%d ranks" % case.group_size
    else:
        where = "axis %s of a %s grid (groups of %d ranks)" % (
            joined(case.axes), "x".join(map(str, case.grid)), case.group_size)
    text = "%s of %s on %s" % (what, tensor(case.shape, case.type), where)
    if case.op == "broadcast":
        text += " from root [%s]" % joined(case.root)
    return text + "."


def tolerance_flags(case):
    if case.type not in FLOAT_TYPES:
        return ""  # integers and i1 always compare exactly
    atol, rtol = AVERAGE_TOLERANCE[case.type] if case.reduction == "average" \
        else ("0", "0")
    return " --atol=%s --rtol=%s" % (atol, rtol)


def gpu_unsupported(case):
    """The marker build_tools/e2e_device.py reads: NCCL/RCCL have no 16-bit
    integer reductions, so with collective kernels off (the `_library`
    cases) kiln-compile rejects i16 reductions for rocm and cuda. With
    kernels on (the default) they, and the bitwise and i1 reductions, are
    compiled collectives on every target."""
    if case.reduction and case.type == "i16" and LIBRARY in case.flags:
        return ("// UNSUPPORTED-TARGETS: rocm, cuda (NCCL/RCCL cannot reduce "
                "i16, and collective kernels are off here)\n")
    return ""


def render(case):
    grid = "x".join(map(str, case.grid))
    src, dst = tensor(case.shape, case.type), tensor(case.result_shape, case.type)
    return f"""\
// Generated by tests/e2e/spmd_matrix/gen_spmd_matrix.py; edit the generator, not this file.
// {summary(case)}
{gpu_unsupported(case)}// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/spmd_matrix_data.py {data_args(case)}
// RUN: kiln-compile %s --target=host{case.flags} -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --device=local --function=main --input=@%t/in_%%r.npy \\
// RUN:   --expected-output=@%t/out_%%r.npy{tolerance_flags(case)}

shard.grid @grid(shape = {grid})
func.func @main(%x: {src}) -> {dst} {{
  {shard_op(case)}
  return %0 : {dst}
}}
"""


def reductions(ty):
    return [r for r in REDUCTIONS if r != "average" or ty in FLOAT_TYPES]


def cases_on_ranks(n, types):
    """Every collective x reduction x type in |types| on a 1-D grid of n."""
    grid, axes = (n,), (0,)
    # A count no rank count divides: 3x5 (odd) on 2, 4 and 8 ranks, 7 on 3.
    odd = (7,) if n == 3 else (3, 5)
    for ty in types:
        for reduction in reductions(ty):
            yield Case("all_reduce", ty, grid, axes, odd, reduction=reduction)
        for reduction in reductions(ty):
            yield Case("reduce_scatter", ty, grid, axes, (2 * n, 5),
                       reduction=reduction, axis=0)
    for ty in (["i1"] if n == 2 else []) + types:
        # Gather along the inner dimension of 3x5 (a transpose lays out the
        # chunks), and along the only dimension of 7 (none).
        yield Case("all_gather", ty, grid, axes, odd, axis=len(odd) - 1)
        yield Case("all_to_all", ty, grid, axes, (2 * n, 3), split_axis=0,
                   concat_axis=1)
        yield Case("broadcast", ty, grid, axes, odd, root=(0,))
        yield Case("broadcast", ty, grid, axes, odd, root=(n - 1,))


def cases_on_2x2():
    """Each collective over one axis of a 2x2 grid: two groups of 2."""
    grid = (2, 2)
    yield Case("all_reduce", "f32", grid, (1,), (3, 5), reduction="sum")
    yield Case("all_reduce", "i16", grid, (0,), (7,), reduction="max")
    yield Case("reduce_scatter", "i32", grid, (0,), (3, 4), reduction="min", axis=1)
    yield Case("reduce_scatter", "f16", grid, (1,), (4, 3), reduction="product", axis=0)
    yield Case("all_gather", "bf16", grid, (0,), (3, 5), axis=0)
    yield Case("all_gather", "i64", grid, (1,), (3, 5), axis=1)
    yield Case("all_to_all", "f64", grid, (1,), (4, 6), split_axis=1, concat_axis=0)
    yield Case("all_to_all", "i8", grid, (0,), (4, 3), split_axis=0, concat_axis=1)
    yield Case("broadcast", "f32", grid, (0,), (3, 5), root=(1,))
    yield Case("broadcast", "i1", grid, (1,), (7,), root=(1,))


def cases_on_2x4():
    """Collectives over one axis of a 2x4 grid (4 groups of 2, or 2 groups
    of 4) and over both (one group of 8, ranks ordered by the axes given)."""
    grid = (2, 4)
    yield Case("all_reduce", "f32", grid, (1,), (3, 5), reduction="sum")
    yield Case("all_reduce", "i32", grid, (0, 1), (7,), reduction="max")
    yield Case("all_reduce", "f32", grid, (1, 0), (3, 5), reduction="average")
    yield Case("reduce_scatter", "f32", grid, (1,), (8, 3), reduction="sum", axis=0)
    yield Case("reduce_scatter", "i32", grid, (1, 0), (3, 16), reduction="min", axis=1)
    yield Case("all_gather", "i32", grid, (0,), (3, 5), axis=1)
    yield Case("all_gather", "f32", grid, (0, 1), (3, 5), axis=0)
    yield Case("all_to_all", "f32", grid, (1,), (4, 8), split_axis=1, concat_axis=0)
    yield Case("all_to_all", "i32", grid, (0, 1), (16, 3), split_axis=0, concat_axis=1)
    yield Case("broadcast", "f32", grid, (1,), (3, 5), root=(3,))
    yield Case("broadcast", "i32", grid, (0, 1), (7,), root=(1, 2))


# Library path: all_reduce, all_gather and reduce_scatter of the sizes
# above are compiled collective kernels on the host target
# (kiln-compile-collectives); these run the same collectives as library
# calls of the local driver.
LIBRARY = " --collective-kernel-max-bytes=0"
# Two-shot all_reduce kernels at any size (over more than 2 ranks; off by
# default).
TWO_SHOT = " --collective-two-shot-min-bytes=1"


def cases_on_library_path():
    for ty in ALL_TYPES:
        yield Case("all_reduce", ty, (2,), (0,), (3, 5), reduction="sum",
                   variant="library", flags=LIBRARY)
        yield Case("all_gather", ty, (2,), (0,), (3, 5), axis=1,
                   variant="library", flags=LIBRARY)
        yield Case("reduce_scatter", ty, (2,), (0,), (4, 5), reduction="max",
                   axis=0, variant="library", flags=LIBRARY)
    yield Case("all_reduce", "f32", (4,), (0,), (7,), reduction="max",
               variant="library", flags=LIBRARY)
    yield Case("reduce_scatter", "f32", (4,), (0,), (8, 3), reduction="sum",
               axis=0, variant="library", flags=LIBRARY)


def cases_two_shot():
    """All_reduces as two-shot kernels: a reduce_scatter into parts of
    ceil(count / N) rounded up to 16 bytes (the last parts shorter or
    empty), then an all_gather of the reduced parts."""
    for ty in ALL_TYPES:
        yield Case("all_reduce", ty, (3,), (0,), (3, 5), reduction="sum",
                   variant="twoshot", flags=TWO_SHOT)
    yield Case("all_reduce", "f32", (3,), (0,), (7,), reduction="max",
               variant="twoshot", flags=TWO_SHOT)
    yield Case("all_reduce", "f16", (4,), (0,), (3, 5), reduction="average",
               variant="twoshot", flags=TWO_SHOT)
    yield Case("all_reduce", "i32", (8,), (0,), (3, 5), reduction="product",
               variant="twoshot", flags=TWO_SHOT)
    yield Case("all_reduce", "i64", (2, 4), (1, 0), (7,), reduction="min",
               variant="twoshot", flags=TWO_SHOT)
    yield Case("all_reduce", "i32", (4,), (0,), (7,),
               reduction="bitwise_xor", variant="twoshot", flags=TWO_SHOT)
    yield Case("all_reduce", "i1", (3,), (0,), (17,), reduction="sum",
               variant="twoshot", flags=TWO_SHOT)
    # At a 256 KiB threshold: two-shot over 64 workgroups, the last part
    # shorter.
    threshold = " --collective-two-shot-min-bytes=262144"
    yield Case("all_reduce", "f32", (3,), (0,), (65537,), reduction="sum",
               variant="twoshot_wg64", flags=threshold)
    yield Case("all_reduce", "bf16", (8,), (0,), (131075,),
               reduction="max", variant="twoshot_wg64", flags=threshold)


def cases_with_several_workgroups():
    """Compiled collectives whose kernels split the data over workgroups of
    4 KiB (the last one partial), and the largest size that gets a kernel
    by default (1 MiB per rank, 64 workgroups)."""
    yield Case("all_reduce", "f32", (4,), (0,), (20001,), reduction="sum",
               variant="wg20")
    yield Case("all_reduce", "f16", (3,), (0,), (8193, 3), reduction="average",
               variant="wg13")
    yield Case("all_reduce", "i16", (2,), (0,), (65536,), reduction="min",
               variant="wg32")
    yield Case("all_gather", "i64", (3,), (0,), (6000, 3), axis=0,
               variant="wg36")
    yield Case("all_reduce", "f32", (2,), (0,), (262144,), reduction="product",
               variant="wg64")
    yield Case("reduce_scatter", "f32", (4,), (0,), (4, 5001),
               reduction="sum", axis=0, variant="wg20")
    yield Case("reduce_scatter", "f16", (3,), (0,), (3, 4097, 2),
               reduction="average", axis=0, variant="wg13")
    yield Case("reduce_scatter", "i32", (2,), (0,), (3, 32768),
               reduction="max", axis=1, variant="wg64")


def cases_compiled_only():
    """Reductions no collective library runs, so compiled collective
    kernels at any size: bitwise and/or/xor of integers, logical i1."""
    for reduction in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        for ty in INTEGER_TYPES:
            yield Case("all_reduce", ty, (2,), (0,), (3, 5), reduction=reduction)
        yield Case("all_reduce", "i32", (3,), (0,), (7,), reduction=reduction)
    yield Case("all_reduce", "i64", (2, 4), (1,), (3, 5), reduction="bitwise_xor")
    for reduction in ("sum", "product", "min", "max"):
        yield Case("all_reduce", "i1", (2,), (0,), (3, 5), reduction=reduction)
    yield Case("all_reduce", "i1", (4,), (0,), (17,), reduction="sum")
    for reduction in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        yield Case("reduce_scatter", "i32", (3,), (0,), (6, 5),
                   reduction=reduction, axis=0)
    yield Case("reduce_scatter", "i8", (2, 4), (1,), (3, 8),
               reduction="bitwise_or", axis=1)
    for reduction in ("sum", "min"):
        yield Case("reduce_scatter", "i1", (2,), (0,), (4, 5),
                   reduction=reduction, axis=0)
    # 2 MiB of i8 per rank: above the default threshold, compiled anyway.
    yield Case("all_reduce", "i8", (2,), (0,), (2097152,),
               reduction="bitwise_or", variant="large")


def all_cases():
    cases = list(cases_on_ranks(2, ALL_TYPES))
    cases += cases_on_ranks(3, ["i32", "f32"])
    cases += cases_on_ranks(4, ["i32", "f32"])
    cases += cases_on_ranks(8, ["i32", "f32"])
    cases += cases_on_2x2()
    cases += cases_on_2x4()
    cases += cases_on_library_path()
    cases += cases_with_several_workgroups()
    cases += cases_two_shot()
    cases += cases_compiled_only()
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "two cases share a test name"
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="only check that the tests are up to date")
    args = parser.parse_args()

    wanted = {c.name + ".mlir": render(c) for c in all_cases()}
    present = {f for f in os.listdir(HERE) if f.endswith(".mlir")}
    stale = sorted(present - set(wanted))
    changed = []
    for name, text in sorted(wanted.items()):
        path = os.path.join(HERE, name)
        old = open(path).read() if name in present else None
        if old != text:
            changed.append(name)
            if not args.check:
                with open(path, "w") as f:
                    f.write(text)
    if not args.check:
        for name in stale:
            os.remove(os.path.join(HERE, name))
        print("gen_spmd_matrix: %d tests, %d written, %d removed"
              % (len(wanted), len(changed), len(stale)))
        return 0
    for name in changed:
        print("stale: %s differs from its case (run %s)" % (name, sys.argv[0]))
    for name in stale:
        print("stale: %s has no case (run %s)" % (name, sys.argv[0]))
    return 1 if changed or stale else 0


if __name__ == "__main__":
    sys.exit(main())

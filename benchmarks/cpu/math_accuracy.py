#!/usr/bin/env python3
"""Measures the accuracy of the host target's f32 math functions.

Compiles one kernel per function (an elementwise linalg.generic over a 1-D
f32 tensor) with kiln-compile --target=host, runs it with kiln-run on the
`local` device over a sweep of f32 bit patterns (every STRIDE-th pattern of
each sign, so every binade is covered, plus special values) and compares
with a float64 reference (numpy; math.erf for erf). Prints, per function,
the largest error in ulp of the correctly rounded f32 result over inputs
whose result is a normal f32, the largest absolute error, and whether the
special values (0, -0, denormals, +-inf, NaN, overflow and underflow)
match the reference's class (denormal results may be flushed to zero).

usage: benchmarks/cpu/math_accuracy.py [--build-dir DIR] [--host-cpu CPU]
           [--stride N] [--only NAME,...]
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    sys.exit("error: numpy is not importable by %s; install python3-numpy "
             "(apt) and run with /usr/bin/python3" % sys.executable)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

F32_MIN_NORMAL = np.finfo(np.float32).tiny

SPECIALS = np.array(
    [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40,
     -1e-40, F32_MIN_NORMAL, -F32_MIN_NORMAL, np.finfo(np.float32).max,
     -np.finfo(np.float32).max, 88.72, 88.73, -87.3, -87.4, -103.9, -104.0,
     7.9, 8.0, -9.0, 3.75, 3.76, 1e-4, -1e-4, 1e-30, 0.5, 2.0],
    dtype=np.float32)


def reference(name, x):
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if name == "erf":
            return np.array([math.erf(v) if not math.isnan(v) else math.nan
                             for v in x64])
        return {"exp": np.exp, "expm1": np.expm1, "log": np.log,
                "log2": np.log2, "log1p": np.log1p,
                "tanh": np.tanh}[name](x64)


# Default domain of each sweep: where the function is not constant in f32.
DOMAINS = {"exp": (-110.0, 90.0), "expm1": (-20.0, 90.0), "log": None,
           "log2": None, "log1p": (-1.0, None), "tanh": (-10.0, 10.0),
           "erf": (-5.0, 5.0)}


def sweep(stride):
    """Every `stride`-th f32 bit pattern of both signs (finite values)."""
    bits = np.arange(0, 0x7f800000, stride, dtype=np.uint32)
    pos = bits.view(np.float32)
    return np.concatenate([pos, -pos])


def inputs_for(name, stride):
    x = sweep(stride)
    lo_hi = DOMAINS[name]
    if lo_hi is not None:
        lo, hi = lo_hi
        keep = np.ones(x.shape, dtype=bool)
        if lo is not None:
            keep &= x >= lo
        if hi is not None:
            keep &= x <= hi
        x = x[keep]
    if name == "erf":
        x = x[:: max(1, len(x) // 400000)]  # math.erf is a Python loop
    x = np.concatenate([x, SPECIALS])
    pad = (-len(x)) % 64
    return np.concatenate([x, np.ones(pad, dtype=np.float32)])


def run_kiln(bin_dir, name, x, host_cpu, work):
    n = len(x)
    t = f"tensor<{n}xf32>"
    source = f"""
func.func @main(%x: {t}) -> {t} {{
  %e = tensor.empty() : {t}
  %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}}
      ins(%x : {t}) outs(%e : {t}) {{
  ^bb0(%a: f32, %o: f32):
    %y = math.{name} %a : f32
    linalg.yield %y : f32
  }} -> {t}
  return %r : {t}
}}
"""
    mlir = os.path.join(work, name + ".mlir")
    vmfb = os.path.join(work, name + ".vmfb")
    inp = os.path.join(work, name + "_in.npy")
    out = os.path.join(work, name + "_out.npy")
    with open(mlir, "w") as f:
        f.write(source)
    np.save(inp, x)
    subprocess.run([os.path.join(bin_dir, "kiln-compile"), mlir,
                    "--target=host", f"--host-cpu={host_cpu}", "-o", vmfb],
                   check=True)
    subprocess.run([os.path.join(bin_dir, "kiln-run"), vmfb, "--function=main",
                    "--device=local", f"--input=@{inp}", f"--output=@{out}"],
                   check=True, stdout=subprocess.DEVNULL)
    return np.load(out)


def ulp_of(values):
    """The f32 ulp at each (f32-rounded) value."""
    a = np.abs(values.astype(np.float32))
    return np.spacing(a).astype(np.float64)


def measure(name, x, got):
    ref = reference(name, x)
    with np.errstate(over="ignore"):
        ref32 = ref.astype(np.float32)
    got64 = got.astype(np.float64)
    with np.errstate(all="ignore"):
        normal = np.isfinite(ref32) & (np.abs(ref32) >= F32_MIN_NORMAL)
        err = np.abs(got64 - ref)
        ulps = err[normal] / ulp_of(ref32[normal])
    worst = int(np.argmax(ulps))
    worst_x = x[normal][worst]

    # Special values: same class (NaN, +-inf, zero), denormals may flush.
    bad = []
    for xi, gi, ri in zip(x[-len(SPECIALS) - 64:], got[-len(SPECIALS) - 64:],
                          ref32[-len(SPECIALS) - 64:]):
        if np.isnan(ri):
            ok = np.isnan(gi)
        elif np.isinf(ri):
            ok = gi == ri
        elif ri == 0 or abs(ri) < F32_MIN_NORMAL:
            ok = abs(gi) < F32_MIN_NORMAL and np.sign(gi) * np.sign(ri) >= 0
        else:
            ok = abs(float(gi) - float(ri)) <= 8 * float(np.spacing(abs(ri)))
        if not ok:
            bad.append(f"{name}({xi!r}) = {gi!r}, expected {ri!r}")
    denormal = (np.abs(ref32) < F32_MIN_NORMAL) & (ref32 != 0)
    flushed = int(np.count_nonzero(denormal & (got == 0)))
    return {
        "inputs": len(x),
        "max_ulp": float(ulps[worst]),
        "worst_x": float(worst_x),
        "max_abs": float(np.max(err[np.isfinite(ref32)])),
        "flushed": f"{flushed}/{int(np.count_nonzero(denormal))}",
        "special_mismatches": bad,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                        help="CMake build directory with bin/kiln-compile "
                             "and bin/kiln-run (default: %(default)s)")
    parser.add_argument("--host-cpu", default="native",
                        help="kiln-compile --host-cpu (default: native)")
    parser.add_argument("--stride", type=int, default=257,
                        help="bit-pattern stride of the sweep (default: "
                             "%(default)s, about 8M inputs per sign)")
    parser.add_argument("--only", default="",
                        help="comma-separated function names")
    args = parser.parse_args()

    bin_dir = os.path.join(args.build_dir, "bin")
    names = list(DOMAINS)
    if args.only:
        names = [n for n in names if n in args.only.split(",")]

    print("| function | inputs | max ulp (normal results) | at x | max abs error "
          "| denormal results flushed | special values |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    failed = False
    with tempfile.TemporaryDirectory(prefix="kiln-math-") as work:
        for name in names:
            x = inputs_for(name, args.stride)
            got = run_kiln(bin_dir, name, x, args.host_cpu, work)
            m = measure(name, x, got)
            special = ("ok" if not m["special_mismatches"]
                       else "; ".join(m["special_mismatches"]))
            failed |= bool(m["special_mismatches"])
            print(f"| {name} | {m['inputs']} | {m['max_ulp']:.2f} "
                  f"| {m['worst_x']:.6g} | {m['max_abs']:.3g} "
                  f"| {m['flushed']} | {special} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

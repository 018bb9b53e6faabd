#!/usr/bin/env python3
"""Accuracy of the f32 exp that Kiln's GPU kernels compute, against numpy's
float64 exp, over 2^24 inputs on a GPU machine (the NVVM expansion in
kiln-gpu-lower-math uses ex2.approx, which only the GPU has).

  here (compiler):  build_tools/gpu_exp_accuracy.py pack --kiln-compile=build/bin/kiln-compile \\
                        [--out carry/exp_accuracy] [--cuda-chip sm_90]
  GPU machine:      build_tools/gpu_exp_accuracy.py run --pack carry/exp_accuracy \\
                        --kiln-run carry/hip/bin/kiln-run --plugin carry/hip/lib/libkiln_hal_hip.so

It runs on `local` too (pack a host build of the same program), which
checks the host target's exp the same way.

Kernels whose every buffer holds f16 or bf16 get a shorter exp (one
ex2.approx of the unreduced argument): pack also compiles exp over every
f16 and every bf16 (f32 inside, rounded back), and run compares those with
float64 exp rounded to the type: every finite result within 1 ulp of the
type, the correctly rounded one in all but a few near-ties (--max-half-miss,
default 0.1%), NaN, infinities and zeros where exp has them.

run evaluates exp on 2^24 - 64 evenly spaced inputs in [-110, 95] plus special
values (NaN, +-inf, +-0, the overflow and underflow edges), compares with
float64 exp rounded to f32, and prints the largest error in ulps of the
result over normal results, the largest absolute error over subnormal results
in units of 2^-149, and whether NaN, infinities and zeros are where they should
be. Exits 1 if the normal-range error exceeds --max-ulp (default 3) or a
special value is wrong.
"""
import argparse
import os
import subprocess
import sys

N = 1 << 24
PROGRAM = """func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %e = tensor.empty() : tensor<{n}xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}} ins(%x : tensor<{n}xf32>) outs(%e : tensor<{n}xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  }} -> tensor<{n}xf32>
  return %r : tensor<{n}xf32>
}}
"""
SPECIAL = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e-45, -1e-45,
           88.72283, 88.72284, 89.0, -87.33654, -103.27893, -103.97208, -104.0,
           -104.5, 1.0, -1.0, 0.5, 2.0, 10.0, -10.0, 50.0, -50.0, -86.0, -90.0,
           -95.0, -100.0, -102.0, 87.0, 88.0, 88.5, 88.7, 1e30, -1e30]


HALF_PROGRAM = """func.func @main(%x: tensor<65536x{t}>) -> tensor<65536x{t}> {{
  %e = tensor.empty() : tensor<65536x{t}>
  %r = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}} ins(%x : tensor<65536x{t}>) outs(%e : tensor<65536x{t}>) {{
  ^bb0(%a: {t}, %o: {t}):
    %w = arith.extf %a : {t} to f32
    %v = math.exp %w : f32
    %n = arith.truncf %v : f32 to {t}
    linalg.yield %n : {t}
  }} -> tensor<65536x{t}>
  return %r : tensor<65536x{t}>
}}
"""
HALF_TYPES = ("f16", "bf16")


def pack(args):
    os.makedirs(args.out, exist_ok=True)
    for name, text in [("exp", PROGRAM.format(n=N))] + [
            ("exp_" + t, HALF_PROGRAM.format(t=t)) for t in HALF_TYPES]:
        source = os.path.join(args.out, name + ".mlir")
        with open(source, "w") as f:
            f.write(text)
        subprocess.run([args.kiln_compile, source, "--target=cuda",
                        f"--cuda-chip={args.cuda_chip}", "-o",
                        os.path.join(args.out, name + ".vmfb")], check=True)
    print(f"packed {args.out}/exp.vmfb, exp_f16.vmfb, exp_bf16.vmfb "
          f"(cuda:{args.cuda_chip})")


def special_value_errors(np, y, expected, finite):
    """What differs between results |y| and |expected| (exp rounded to the
    result type) in NaN, infinities and zeros; |finite|: where |expected|
    is finite."""
    errors = []
    if not np.array_equal(np.isnan(y), np.isnan(expected)):
        errors.append("NaN results differ")
    infinite = ~finite & ~np.isnan(expected)
    if not np.array_equal(y[infinite], expected[infinite]) or \
            np.isinf(y[finite]).any():
        errors.append("infinities differ")
    if not np.array_equal(y[finite] == 0, expected[finite] == 0):
        errors.append(f"zeros differ ({int(np.sum(y[finite] == 0))} vs "
                      f"{int(np.sum(expected[finite] == 0))})")
    return errors


def run_half(args, np, ty):
    """exp over every value of f16 or bf16; a list of what is wrong."""
    bits = np.arange(65536, dtype=np.uint16)
    work = args.work or args.pack
    inputs, outputs = (os.path.join(work, f"x_{ty}.npy"),
                       os.path.join(work, f"y_{ty}.npy"))
    with np.errstate(invalid="ignore"):
        if ty == "f16":
            x = bits.view(np.float16).astype(np.float64)
            np.save(inputs, bits.view(np.float16))
        else:
            x = (bits.astype(np.uint32) << 16).view(np.float32).astype(
                np.float64)
            np.save(inputs, bits.view(np.dtype("<V2")))
    command = [args.kiln_run, os.path.join(args.pack, f"exp_{ty}.vmfb"),
               "--device=" + args.device, f"--input=@{inputs}",
               f"--output=@{outputs}"]
    if args.plugin:
        command.append("--plugin=" + args.plugin)
    subprocess.run(command, check=True)
    out_bits = np.load(outputs).view(np.uint16)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = np.exp(x)
        if ty == "f16":
            y = out_bits.view(np.float16).astype(np.float64)
            rounded = ref.astype(np.float16).astype(np.float64)
            spacing = np.spacing(np.abs(rounded.astype(np.float16))).astype(
                np.float64)
        else:
            y = (out_bits.astype(np.uint32) << 16).view(np.float32).astype(
                np.float64)
            # Round to nearest even at bit 16 of the f32 bits (the f32 value
            # of exp is exact enough here: ties within 2^-24 are counted as
            # misses at most).
            f = ref.astype(np.float32).view(np.uint32)
            f = ((f + 0x7FFF + ((f >> 16) & 1)) >> 16 << 16).astype(np.uint32)
            rounded = f.view(np.float32).astype(np.float64)
            # bf16 keeps 8 significant bits down to 2^-126, then steps of
            # 2^-133.
            exponent = np.floor(np.log2(np.maximum(np.abs(rounded),
                                                   2.0 ** -126)))
            spacing = 2.0 ** (exponent - 7)
        spacing = np.maximum(spacing, np.finfo(np.float64).tiny)
    finite = np.isfinite(rounded)
    wrong = special_value_errors(np, y, rounded, finite)
    nonzero = finite & (rounded != 0) & (y != 0)
    error = np.abs(y[nonzero] - ref[nonzero]) / spacing[nonzero]
    misses = int(np.sum(y[finite] != rounded[finite]))
    print(f"exp {ty} (f32 inside) on {args.device}: {misses} of "
          f"{int(finite.sum())} finite results not the correctly rounded "
          f"one, max error {error.max():.3f} {ty} ulp; "
          f"{'; '.join(wrong) if wrong else 'NaN, infinities and zeros as exp'}")
    if error.max() > 1.0:
        wrong.append(f"{ty} error above 1 ulp")
    if misses > args.max_half_miss * finite.sum():
        wrong.append(f"{ty}: too many results not correctly rounded")
    return wrong


def run(args):
    import numpy as np
    x = np.concatenate([np.linspace(-110.0, 95.0, N - 64).astype(np.float32),
                        np.array(SPECIAL + [0.0] * (64 - len(SPECIAL)),
                                 dtype=np.float32)])
    work = args.work or args.pack
    inputs, outputs = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    np.save(inputs, x)
    command = [args.kiln_run, os.path.join(args.pack, "exp.vmfb"),
               "--device=" + args.device, f"--input=@{inputs}",
               f"--output=@{outputs}"]
    if args.plugin:
        command.append("--plugin=" + args.plugin)
    subprocess.run(command, check=True)
    y = np.load(outputs)
    with np.errstate(over="ignore"):
        ref = np.exp(x.astype(np.float64))
        ref32 = ref.astype(np.float32)
    finite = np.isfinite(ref32)
    tiny = np.finfo(np.float32).tiny
    normal = finite & (ref32 >= tiny)
    subnormal = finite & (ref32 < tiny)
    with np.errstate(invalid="ignore"):
        spacing = np.maximum(np.spacing(np.abs(ref32)).astype(np.float64),
                             2.0 ** -149)
        error = np.abs(y.astype(np.float64) - ref) / spacing
    worst = int(np.argmax(np.where(normal, error, 0)))
    bad = special_value_errors(np, y, ref32, finite)
    print(f"exp f32 on {args.device}: max {error[normal].max():.3f} ulp over "
          f"normal results (x = {x[worst]!r}), mean {error[normal].mean():.4f}; "
          f"max {error[subnormal].max():.3f} x 2^-149 over subnormal results; "
          f"{'; '.join(bad) if bad else 'NaN, infinities and zeros as exp'}")
    half = []
    for ty in HALF_TYPES:
        if os.path.exists(os.path.join(args.pack, f"exp_{ty}.vmfb")):
            half += run_half(args, np, ty)
    if bad or half or error[normal].max() > args.max_ulp:
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--kiln-compile", required=True)
    p.add_argument("--out", default="carry/exp_accuracy")
    p.add_argument("--cuda-chip", default="sm_90")
    p.set_defaults(func=pack)
    r = sub.add_parser("run")
    r.add_argument("--pack", default="carry/exp_accuracy")
    r.add_argument("--kiln-run", required=True)
    r.add_argument("--plugin", default="")
    r.add_argument("--device", default="hip")
    r.add_argument("--work", default="", help="folder for x.npy, y.npy (default: the pack)")
    r.add_argument("--max-ulp", type=float, default=3.0)
    r.add_argument("--max-half-miss", type=float, default=0.001,
                   help="largest share of f16/bf16 results allowed to miss "
                        "the correctly rounded value (within 1 ulp)")
    r.set_defaults(func=run)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()

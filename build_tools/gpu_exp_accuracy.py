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


def pack(args):
    os.makedirs(args.out, exist_ok=True)
    source = os.path.join(args.out, "exp.mlir")
    with open(source, "w") as f:
        f.write(PROGRAM.format(n=N))
    subprocess.run([args.kiln_compile, source, "--target=cuda",
                    f"--cuda-chip={args.cuda_chip}", "-o",
                    os.path.join(args.out, "exp.vmfb")], check=True)
    print(f"packed {args.out}/exp.vmfb (cuda:{args.cuda_chip})")


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
    bad = []
    if not np.array_equal(np.isnan(y), np.isnan(ref32)):
        bad.append("NaN results differ")
    if not np.array_equal(y[~finite & ~np.isnan(ref32)],
                          ref32[~finite & ~np.isnan(ref32)]) or \
            np.isinf(y[finite]).any():
        bad.append("infinities differ")
    if not np.array_equal(y[finite] == 0, ref32[finite] == 0):
        bad.append(f"zeros differ ({int(np.sum(y[finite] == 0))} vs "
                   f"{int(np.sum(ref32[finite] == 0))})")
    print(f"exp f32 on {args.device}: max {error[normal].max():.3f} ulp over "
          f"normal results (x = {x[worst]!r}), mean {error[normal].mean():.4f}; "
          f"max {error[subnormal].max():.3f} x 2^-149 over subnormal results; "
          f"{'; '.join(bad) if bad else 'NaN, infinities and zeros as exp'}")
    if bad or error[normal].max() > args.max_ulp:
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
    r.set_defaults(func=run)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()

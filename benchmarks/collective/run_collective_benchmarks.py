#!/usr/bin/env python3
"""Collective bandwidth of Kiln next to a reference, in one run.

  gpu:  kiln-benchmark collective on the hip driver with N GPUs, and
        torch.distributed (NCCL, torch_collective.py) with the same op and
        sizes; per size: kiln busbw, torch busbw, kiln / torch.
  cpu:  kiln-benchmark collective on the local driver with 2 and 4 ranks,
        with host memcpy bandwidth of the same size as the reference
        (kiln-benchmark --reference=memcpy); per size: busbw of each rank
        count and busbw / memcpy.

Both run from build outputs: a folder with bin/kiln-benchmark and lib/
(libkiln_runtime.so*, and libkiln_hal_hip.so for gpu), e.g. a build
directory or a carried copy (--pack makes one). Every command runs under
`timeout`; NCCL_NVLS_ENABLE=0 is exported (NVLink multicast stays off).

  benchmarks/collective/run_collective_benchmarks.py --pack BUILD_DIR
      # -> carry/collective
  benchmarks/collective/run_collective_benchmarks.py gpu carry/collective \
      --gpus=2 --op=all_reduce --max-bytes=1G
  benchmarks/collective/run_collective_benchmarks.py cpu build-drv \
      --max-bytes=64M
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(command, timeout_s, env):
    """Runs |command| under `timeout`; returns stdout or exits on failure."""
    full = ["timeout", str(timeout_s)] + command
    print("$ " + " ".join(full), file=sys.stderr, flush=True)
    result = subprocess.run(full, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        what = "timed out" if result.returncode == 124 else \
            f"failed with exit code {result.returncode}"
        sys.exit(f"error: {' '.join(command[:2])} {what}")
    return result.stdout


def rows(output):
    """{size: (count, time_us, algbw, busbw[, extra columns])} of the rows."""
    table = {}
    for line in output.splitlines():
        fields = line.split()
        if not fields or line.startswith("#"):
            continue
        values = [float(f) for f in fields[3:]]
        table[int(fields[0])] = (int(fields[1]),) + tuple(values)
    return table


def kiln_env(build):
    env = dict(os.environ)
    lib = os.path.join(build, "lib")
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"]
                                    if env.get("LD_LIBRARY_PATH") else "")
    env["NCCL_NVLS_ENABLE"] = "0"
    return env


def sweep_flags(args):
    return [f"--op={args.op}", f"--dtype={args.dtype}",
            f"--min-bytes={args.min_bytes}", f"--max-bytes={args.max_bytes}",
            f"--step-factor={args.step_factor}", f"--iters={args.iters}",
            f"--warmup={args.warmup}", f"--repeat={args.repeat}"]


def kiln_gpu_rows(args, build, env):
    """kiln-benchmark's rows on the GPUs: one process with a thread per GPU,
    or with --multi-process one process per GPU meeting through a file
    rendezvous (rank 0 prints the rows)."""
    plugin = os.path.join(build, "lib", "libkiln_hal_hip.so")
    command = [os.path.join(build, "bin", "kiln-benchmark"), "collective",
               f"--plugin={plugin}"] + sweep_flags(args) + \
        (["--check"] if args.check else [])
    if not args.multi_process:
        return rows(run(command + ["--device=hip", f"--ranks={args.gpus}"],
                        args.timeout, env))
    rendezvous = tempfile.mkdtemp(prefix="kiln-bench-rdv-")
    commands = [["timeout", str(args.timeout)] + command +
                [f"--device=hip://{r}", f"--rank={r}",
                 f"--world-size={args.gpus}", f"--rendezvous=file:{rendezvous}"]
                for r in range(args.gpus)]
    print("$ " + " ".join(commands[0]) + "  (and ranks 1..%d)" % (args.gpus - 1),
          file=sys.stderr, flush=True)
    procs = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for c in commands]
    outputs = [p.communicate() for p in procs]
    shutil.rmtree(rendezvous, ignore_errors=True)
    failed = [r for r, p in enumerate(procs) if p.returncode != 0]
    if failed:
        for r in failed:
            sys.stderr.write(f"rank {r} (exit {procs[r].returncode}):\n"
                             + outputs[r][0] + outputs[r][1])
        sys.exit(f"error: kiln-benchmark failed on rank(s) {failed}")
    return rows(outputs[0][0])


def gpu(args, build):
    env = kiln_env(build)
    kiln = kiln_gpu_rows(args, build, env)
    torch = rows(run([sys.executable, os.path.join(HERE, "torch_collective.py"),
                      f"--ranks={args.gpus}"] + sweep_flags(args),
                     args.timeout, env))
    print(f"{args.op} {args.dtype}, {args.gpus} GPUs, busbw GB/s "
          f"(nccl-tests factors), iters {args.iters}, median of {args.repeat}; "
          f"kiln ({'one process per GPU' if args.multi_process else 'one process, a thread per GPU'}): host time to the "
          f"semaphore; torch: CUDA events, and host time to synchronize()")
    print("| size (B) | kiln busbw | torch busbw (events) | kiln / torch "
          "| torch busbw (host) | kiln / torch (host) |")
    print("|---:|---:|---:|---:|---:|---:|")

    def ratio(a, b):
        return f"{a / b:.2f}" if b > 0 else "-"

    for size in sorted(set(kiln) & set(torch)):
        k, t = kiln[size][3], torch[size][3]
        th = torch[size][5]
        print(f"| {size} | {k:.3f} | {t:.3f} | {ratio(k, t)} | {th:.3f} "
              f"| {ratio(k, th)} |")


def cpu(args, build):
    env = kiln_env(build)
    by_ranks = {}
    for ranks in (2, 4):
        by_ranks[ranks] = rows(run(
            [os.path.join(build, "bin", "kiln-benchmark"), "collective",
             "--device=local", f"--ranks={ranks}", "--reference=memcpy"] +
            sweep_flags(args) + (["--check"] if args.check else []),
            args.timeout, env))
    print(f"{args.op} {args.dtype} on local devices, busbw GB/s (nccl-tests "
          f"factors) vs host memcpy GB/s of the same size, iters {args.iters}")
    print("| size (B) | 2 ranks | 4 ranks | memcpy | 2 ranks / memcpy "
          "| 4 ranks / memcpy |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size in sorted(set(by_ranks[2]) & set(by_ranks[4])):
        b2, b4 = by_ranks[2][size][3], by_ranks[4][size][3]
        memcpy = by_ranks[2][size][-1]
        print(f"| {size} | {b2:.3f} | {b4:.3f} | {memcpy:.3f} | "
              f"{b2 / memcpy:.2f} | {b4 / memcpy:.2f} |")


def pack(build):
    out = os.path.join(ROOT, "carry", "collective")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "bin"))
    os.makedirs(os.path.join(out, "lib"))
    shutil.copy2(os.path.join(build, "bin", "kiln-benchmark"),
                 os.path.join(out, "bin"))
    libs = glob.glob(os.path.join(build, "lib", "libkiln_runtime.so*")) + \
        glob.glob(os.path.join(build, "lib", "libkiln_hal_hip.so"))
    for lib in libs:
        shutil.copy2(lib, os.path.join(out, "lib"), follow_symlinks=False)
    print(f"packed into {out}")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["gpu", "cpu"], nargs="?")
    parser.add_argument("build", nargs="?",
                        help="folder with bin/kiln-benchmark and lib/")
    parser.add_argument("--pack", metavar="BUILD_DIR",
                        help="copy the build outputs to carry/collective")
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--op", default="all_reduce")
    parser.add_argument("--dtype", default="f32")
    parser.add_argument("--min-bytes", default="8")
    parser.add_argument("--max-bytes", default=None,
                        help="default: 1G on gpu, 64M on cpu")
    parser.add_argument("--step-factor", default="2")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--multi-process", action="store_true",
                        help="gpu: run Kiln as one process per GPU (as "
                             "torch runs), not one process with a thread "
                             "per GPU")
    parser.add_argument("--repeat", type=int, default=5,
                        help="timings per size (both tools); rows show the "
                             "median")
    parser.add_argument("--check", action="store_true",
                        help="kiln-benchmark verifies each size once")
    parser.add_argument("--timeout", type=int, default=540,
                        help="seconds per command")
    args = parser.parse_args()
    if args.pack:
        return pack(os.path.abspath(args.pack))
    if not args.mode or not args.build:
        parser.error("give a mode (gpu or cpu) and the build outputs folder")
    build = os.path.abspath(args.build)
    if not os.path.isfile(os.path.join(build, "bin", "kiln-benchmark")):
        parser.error(f"{build}/bin/kiln-benchmark does not exist")
    if args.max_bytes is None:
        args.max_bytes = "1G" if args.mode == "gpu" else "64M"
    (gpu if args.mode == "gpu" else cpu)(args, build)


if __name__ == "__main__":
    main()

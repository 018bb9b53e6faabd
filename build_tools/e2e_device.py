#!/usr/bin/env python3
"""Runs the tests/e2e corpus on a device other than `local`, where the
compiler is not available (the GPU machines have no LLVM 22).

  pack: here, compile every positive e2e test for the given targets and write
        the modules, the input files they read and a manifest of kiln-run
        invocations into a folder that travels to the device machine.
  run:  there, run every manifest entry with kiln-run on the given device and
        print one line per failure and a summary line; exit 1 on any failure.

  build_tools/e2e_device.py pack --kiln-compile=build/bin/kiln-compile \\
      --targets=cuda,host --out=carry/e2e
  build_tools/e2e_device.py run --kiln-run=carry/hip/bin/kiln-run \\
      --device=hip --pack=carry/e2e [--plugin=...]

pack --only=REGEX takes only the tests whose path matches; --compile-flag=F
(repeatable) adds F to every compile, e.g. --compile-flag=--cuda-layout-
fragments to run the matmul tests through the AMD forms' data path.

A test is taken when its RUN lines are `kiln-compile %s ...` followed by
plain `kiln-run %t.vmfb ...` lines (negative tests with `not`, pipes or
FileCheck stay on the lit suite). The kiln-run lines are used unchanged but
for --device, so the expected outputs and tolerances are the lit suite's.

SPMD tests (tests/e2e/spmd: `rm -rf %t && mkdir -p %t`, then
`%python %S/Inputs/<gen>.py ... %t` writing per-rank data, then
`kiln-compile %s ... -o %t/m.vmfb` and `kiln-run %t/m.vmfb ...` with `%%r`
file names) are packed too: the data is generated here, and each run knows
its rank count (the product of the module's `shard.grid` shape). On the
device machine an SPMD run takes one device per rank, `--device=D://0 ..
D://N-1` in one process; with --multi-process each rank also runs in its own
process (--rank/--world-size, file rendezvous). Runs needing more devices
than --devices are reported as not run. --jobs=J runs J tests at a time,
each on devices no other run holds (--device=D://i for the indices it was
given), so 4 GPUs run four single-device tests or two 2-rank tests side by
side. A run on the hip driver takes 2-3.5 s on H200s (process start, device
and NCCL set-up); the whole corpus at --jobs=2 did not finish in 9.5 minutes
on 4 GPUs, so give a GPU machine one job per GPU or split it with --only.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
E2E = os.path.join(ROOT, "tests", "e2e")


def run_lines(path):
    """The test's RUN commands with continuation lines joined."""
    commands, current = [], ""
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*//\s*RUN:\s?(.*)$", line)
            if not m:
                continue
            text = m.group(1).rstrip()
            if text.endswith("\\"):
                current += text[:-1] + " "
                continue
            commands.append((current + text).strip())
            current = ""
    return commands


def parse_test(path):
    """(compile args, [kiln-run args], [data generation commands]) or None
    when the test is not plain."""
    compile_args, runs, generate = None, [], []
    module = "%t.vmfb"
    for command in run_lines(path):
        if command in ("rm -rf %t && mkdir -p %t", "rm -f %t.vmfb"):
            continue
        words = shlex.split(command)
        if words[:2] == ["rm", "-f"]:
            continue
        if any(w in ("|", "||", "&&", ";", ">", "2>&1") for w in words):
            return None
        if words[:1] == ["%python"] and compile_args is None:
            generate.append(words[1:])
        elif words[:2] == ["kiln-compile", "%s"] and compile_args is None:
            compile_args = words[2:]
            if "-o" in compile_args:
                module = compile_args[compile_args.index("-o") + 1]
        elif words[:2] == ["kiln-run", module] and compile_args is not None:
            runs.append(words[2:])
        else:
            return None
    if compile_args is None or not runs:
        return None
    return compile_args, runs, generate


def unsupported_targets(path):
    """Targets the test declares it cannot be compiled for
    (`// UNSUPPORTED-TARGETS: rocm, cuda (why)`): compiling for them must
    fail with a diagnostic."""
    with open(path) as f:
        m = re.search(r"//\s*UNSUPPORTED-TARGETS:\s*([a-z, ]+)", f.read())
    return {t.strip() for t in m.group(1).split(",") if t.strip()} if m else set()


def grid_ranks(path):
    """Ranks an SPMD program runs on (product of its shard.grid shape); 1
    for other programs."""
    with open(path) as f:
        m = re.search(r"shard\.grid\s+@\w+\s*\(\s*shape\s*=\s*([0-9x]+)",
                      f.read())
    if not m:
        return 1
    ranks = 1
    for extent in m.group(1).split("x"):
        ranks *= int(extent)
    return ranks


def pack(args):
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "modules"))
    os.makedirs(os.path.join(out, "data"))
    manifest, skipped, failed, refused = [], 0, [], []
    for dirpath, dirnames, filenames in os.walk(E2E):
        dirnames[:] = sorted(d for d in dirnames if d not in ("gen", "Inputs"))
        for name in sorted(filenames):
            if not name.endswith(".mlir"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, E2E)
            if args.only and not re.search(args.only, rel):
                continue
            parsed = parse_test(path)
            if parsed is None:
                skipped += 1
                continue
            compile_args, runs, generate = parsed
            key = rel.replace(os.sep, "__")
            module = key[:-len(".mlir")] + ".vmfb"
            tmp = os.path.join(out, "data", key + ".d")
            if generate:
                os.makedirs(tmp)
                for gen in generate:
                    gen = [a.replace("%S", dirpath).replace("%t", tmp)
                           for a in gen]
                    result = subprocess.run([sys.executable] + gen,
                                            capture_output=True, text=True)
                    if result.returncode != 0:
                        failed.append((rel, result.stderr.strip().splitlines()[-3:]))
                        break
                else:
                    gen = None
                if gen is not None:
                    continue
            output = compile_args[compile_args.index("-o") + 1] \
                if "-o" in compile_args else None
            cargs = [a for a in compile_args if not a.startswith("--target=")
                     and a not in ("-o", output)]
            cmd = [args.kiln_compile, path, "--target=" + args.targets,
                   "-o", os.path.join(out, "modules", module)] + cargs + \
                args.compile_flag
            result = subprocess.run(cmd, capture_output=True, text=True)
            declined = unsupported_targets(path) & set(args.targets.split(","))
            if declined and args.run_declared_unsupported:
                # The extra compile flags make them compilable (compiled
                # collectives on request): run them when they compile.
                declined = set()
            if declined:
                # The compiler must refuse it, with a located error.
                if result.returncode != 0 and ": error: " in result.stderr:
                    refused.append(rel)
                else:
                    failed.append((rel, ["compiled for %s, which the test "
                                         "declares unsupported" %
                                         ",".join(sorted(declined))]))
                continue
            if result.returncode != 0:
                failed.append((rel, result.stderr.strip().splitlines()[:3]))
                continue
            for run in runs:
                fixed = []
                for a in run:
                    if "%kiln_src_root" in a:
                        src = a.split("@", 1)[1].replace("%kiln_src_root", ROOT)
                        data = rel.replace(os.sep, "__") + "__" + os.path.basename(src)
                        shutil.copy(src, os.path.join(out, "data", data))
                        a = a.split("@", 1)[0] + "@{PACK}/data/" + data
                    a = a.replace("%t", "{PACK}/data/" + key + ".d")
                    a = a.replace("%%r", "%r")
                    if not a.startswith("--device="):
                        fixed.append(a)
                manifest.append({"test": rel, "module": module, "args": fixed,
                                 "ranks": grid_ranks(path)})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    for rel, lines in failed:
        print("COMPILE FAIL %s: %s" % (rel, " / ".join(lines)))
    print("e2e pack: %d runs from %d tests for --target=%s in %s "
          "(%d tests left to lit: negative or not plain; %d refused as "
          "declared unsupported for these targets; %d failed to compile)"
          % (len(manifest), len({m['test'] for m in manifest}), args.targets,
             out, skipped, len(refused), len(failed)))
    return 1 if failed else 0


# Where run_one writes the stacks of a run that timed out (--hang-stacks).
HANG_STACKS = {"dir": None, "count": 0}


def save_hang_stacks(proc, cmd):
    """Before a timed-out run is killed: its host threads' stacks and the
    kernels the GPU holds, from cuda-gdb (`info cuda kernels` names each
    resident kernel with its grid), into --hang-stacks DIR."""
    out_dir = HANG_STACKS["dir"]
    if not out_dir:
        return None
    debugger = shutil.which("cuda-gdb") or shutil.which("gdb")
    if not debugger:
        return "no cuda-gdb or gdb for the stacks"
    HANG_STACKS["count"] += 1
    path = os.path.join(out_dir, "hang_%d.txt" % HANG_STACKS["count"])
    os.makedirs(out_dir, exist_ok=True)
    with open(path, "w") as f:
        f.write(" ".join(cmd) + "\n\n")
        f.flush()
        try:
            subprocess.run([debugger, "-p", str(proc.pid), "-batch",
                            "-ex", "info cuda kernels",
                            "-ex", "thread apply all bt 30"],
                           stdout=f, stderr=subprocess.STDOUT, timeout=90)
        except subprocess.TimeoutExpired:
            f.write("\n(the debugger timed out)\n")
    return "stacks in " + path


def run_one(cmd, timeout):
    """(ok, last lines of output) of one kiln-run."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return (proc.returncode == 0,
                (out + err).strip().splitlines()[-3:])
    except subprocess.TimeoutExpired:
        where = save_hang_stacks(proc, cmd)
        proc.kill()
        proc.communicate()
        return False, ["timed out after %ds" % timeout] + \
            ([where] if where else [])


def run_processes(cmds, timeout):
    """Runs |cmds| at once (one process per rank); (ok, last lines)."""
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
             for c in cmds]
    ok, detail, deadline = True, [], time.time() + timeout
    for rank, proc in enumerate(procs):
        try:
            out, _ = proc.communicate(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            return False, ["rank %d timed out after %ds" % (rank, timeout)]
        if proc.returncode != 0:
            ok = False
            detail += ["rank %d: %s" % (rank, line)
                       for line in out.strip().splitlines()[-2:]]
    return ok, detail


class DevicePool:
    """Device indices 0..N-1 handed to concurrent SPMD runs, N at a time."""

    def __init__(self, count):
        self.free = list(range(count))
        self.cond = threading.Condition()

    def acquire(self, n):
        with self.cond:
            self.cond.wait_for(lambda: len(self.free) >= n)
            taken, self.free = self.free[:n], self.free[n:]
            return taken

    def release(self, taken):
        with self.cond:
            self.free = sorted(self.free + taken)
            self.cond.notify_all()


def run(args):
    pack_dir = os.path.abspath(args.pack)
    HANG_STACKS["dir"] = args.hang_stacks
    with open(os.path.join(pack_dir, "manifest.json")) as f:
        manifest = json.load(f)
    driver = args.device.split("://")[0]
    if args.jobs > 1 and not args.devices:
        sys.exit("error: --jobs needs --devices (SPMD runs are given "
                 "disjoint devices)")
    if args.only:
        manifest = [m for m in manifest if re.search(args.only, m["test"])]
    pool = DevicePool(args.devices) if args.devices else None
    lock = threading.Lock()
    passed, failures, not_run, spmd = [0], [], [], 0

    def report(test, label, ok, detail, seconds):
        with lock:
            if ok:
                passed[0] += 1
                if args.verbose:
                    print("ok   %s%s (%.1fs)" % (test, label, seconds),
                          flush=True)
            else:
                failures.append(test + label)
                print("FAIL %s%s: %s" % (test, label, " / ".join(detail)),
                      flush=True)

    def run_entry(entry):
        module = os.path.join(pack_dir, "modules", entry["module"])
        rest = ["--plugin=" + p for p in args.plugin]
        rest += [a.replace("{PACK}", pack_dir) for a in entry["args"]]
        ranks = entry.get("ranks", 1)
        if ranks == 1:
            # With a pool, single-device tests spread over the devices too.
            taken = pool.acquire(1) if pool else []
            try:
                device = ("%s://%d" % (driver, taken[0]) if taken
                          else args.device)
                begin = time.time()
                ok, detail = run_one([args.kiln_run, module,
                                      "--device=" + device] + rest,
                                     args.timeout)
                report(entry["test"], "", ok, detail, time.time() - begin)
            finally:
                if pool:
                    pool.release(taken)
            return
        if args.logical_ranks is not None or args.logical_gpus:
            # Every rank a logical device, in this process: of one GPU, or
            # spread over GPUs 0..N-1 (rank r on GPU r mod N; the windows'
            # peer tables then cross GPUs through peer access).
            if args.logical_gpus:
                gpus = [r % args.logical_gpus for r in range(ranks)]
                where = "%s://0..%d" % (driver, args.logical_gpus - 1)
            else:
                gpus = [args.logical_ranks] * ranks
                where = "%s://%d" % (driver, args.logical_ranks)
            devices = ["--device=%s://%d?logical=1" % (driver, g) for g in gpus]
            begin = time.time()
            ok, detail = run_one([args.kiln_run, module] + devices + rest,
                                 args.timeout)
            report(entry["test"], " [%d logical ranks of %s]" % (ranks, where),
                   ok, detail, time.time() - begin)
            return
        taken = pool.acquire(ranks) if pool else list(range(ranks))
        try:
            devices = ["--device=%s://%d" % (driver, d) for d in taken]
            begin = time.time()
            ok, detail = run_one([args.kiln_run, module] + devices + rest,
                                 args.timeout)
            report(entry["test"], " [%d ranks, one process]" % ranks, ok,
                   detail, time.time() - begin)
            if args.multi_process:
                rendezvous = tempfile.mkdtemp(prefix="kiln-rdv-")
                begin = time.time()
                ok, detail = run_processes([
                    [args.kiln_run, module, devices[r], "--rank=%d" % r,
                     "--world-size=%d" % ranks,
                     "--rendezvous=file:" + rendezvous] + rest
                    for r in range(ranks)], args.timeout)
                shutil.rmtree(rendezvous, ignore_errors=True)
                report(entry["test"], " [%d ranks, %d processes]"
                       % (ranks, ranks), ok, detail, time.time() - begin)
        finally:
            if pool:
                pool.release(taken)

    start = time.time()
    todo = []
    for entry in manifest:
        ranks = entry.get("ranks", 1)
        if (args.devices and ranks > args.devices and
                args.logical_ranks is None and not args.logical_gpus):
            not_run.append("%s (%d ranks)" % (entry["test"], ranks))
            continue
        spmd += ranks > 1
        todo.append(entry)
    # The widest runs first, so that they do not wait behind narrower ones.
    todo.sort(key=lambda e: -e.get("ranks", 1))
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as workers:
        for future in [workers.submit(run_entry, e) for e in todo]:
            future.result()
    total = passed[0] + len(failures)
    print("e2e on %s: %d passed, %d failed of %d runs (%d tests, %d SPMD) in "
          "%.1fs with %d job(s)%s" % (
              args.device, passed[0], len(failures), total,
              len({e['test'] for e in todo}), spmd,
              time.time() - start, max(1, args.jobs),
              "; not run for lack of devices: " + ", ".join(not_run)
              if not_run else ""))
    return 1 if failures or total == 0 else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--kiln-compile", required=True)
    p.add_argument("--targets", default="cuda,host")
    p.add_argument("--out", required=True)
    p.add_argument("--only", default="",
                   help="pack only the tests whose path matches this regex")
    p.add_argument("--run-declared-unsupported", action="store_true",
                   help="pack tests that declare the targets unsupported "
                        "(UNSUPPORTED-TARGETS) like the others, for compile "
                        "flags that make them supported (e.g. "
                        "--collective-kernel-max-bytes for the bitwise, i1 "
                        "and i16 reductions on cuda)")
    p.add_argument("--compile-flag", action="append", default=[],
                   help="an extra kiln-compile flag for every test")
    r = sub.add_parser("run")
    r.add_argument("--kiln-run", required=True)
    r.add_argument("--device", required=True)
    r.add_argument("--pack", required=True)
    r.add_argument("--plugin", action="append", default=[])
    r.add_argument("--timeout", type=int, default=60)
    r.add_argument("--devices", type=int, default=0,
                   help="devices of the driver; SPMD runs needing more are "
                        "not run (0: no limit)")
    r.add_argument("--only", metavar="REGEX",
                   help="run only the tests whose path matches")
    r.add_argument("--logical-ranks", type=int, metavar="GPU",
                   help="run SPMD tests with every rank a logical device of "
                        "GPU N (D://N?logical=1) in one process: compiled "
                        "collectives on one GPU (pack with "
                        "--compile-flag=--collective-kernel-max-bytes=N)")
    r.add_argument("--logical-gpus", type=int, metavar="N",
                   help="as --logical-ranks, with rank r a logical device of "
                        "GPU r mod N: compiled collectives across N GPUs of "
                        "one process (peer access)")
    r.add_argument("--hang-stacks", metavar="DIR",
                   help="when a run times out, write its host stacks and "
                        "the GPU's resident kernels (cuda-gdb, else gdb) to "
                        "DIR/hang_N.txt before killing it")
    r.add_argument("--multi-process", action="store_true",
                   help="also run each SPMD test with one process per rank")
    r.add_argument("--verbose", action="store_true",
                   help="print a line (with its time) for every passing run")
    r.add_argument("--jobs", type=int, default=1,
                   help="runs at a time; SPMD runs get disjoint devices of "
                        "the --devices, so this needs --devices")
    args = parser.parse_args()
    return pack(args) if args.mode == "pack" else run(args)


if __name__ == "__main__":
    sys.exit(main())

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

A test is taken when its RUN lines are `kiln-compile %s ...` followed by
plain `kiln-run %t.vmfb ...` lines (negative tests with `not`, pipes or
FileCheck stay on the lit suite). The kiln-run lines are used unchanged but
for --device, so the expected outputs and tolerances are the lit suite's.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
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
    """(compile args, [kiln-run args]) or None when the test is not plain."""
    compile_args, runs = None, []
    for command in run_lines(path):
        words = shlex.split(command)
        if words[:2] == ["rm", "-f"]:
            continue
        if any(w in ("|", "||", "&&", ";", ">", "2>&1") for w in words):
            return None
        if words[:2] == ["kiln-compile", "%s"] and compile_args is None:
            compile_args = words[2:]
        elif words[:2] == ["kiln-run", "%t.vmfb"] and compile_args is not None:
            runs.append(words[2:])
        else:
            return None
    if compile_args is None or not runs:
        return None
    return compile_args, runs


def pack(args):
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "modules"))
    os.makedirs(os.path.join(out, "data"))
    manifest, skipped, failed = [], 0, []
    for dirpath, dirnames, filenames in os.walk(E2E):
        dirnames[:] = sorted(d for d in dirnames if d not in ("gen", "Inputs"))
        for name in sorted(filenames):
            if not name.endswith(".mlir"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, E2E)
            parsed = parse_test(path)
            if parsed is None:
                skipped += 1
                continue
            compile_args, runs = parsed
            module = rel.replace(os.sep, "__")[:-len(".mlir")] + ".vmfb"
            cargs = [a for a in compile_args if not a.startswith("--target=")
                     and a not in ("-o", "%t.vmfb")]
            cmd = [args.kiln_compile, path, "--target=" + args.targets,
                   "-o", os.path.join(out, "modules", module)] + cargs
            result = subprocess.run(cmd, capture_output=True, text=True)
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
                    if not a.startswith("--device="):
                        fixed.append(a)
                manifest.append({"test": rel, "module": module, "args": fixed})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    for rel, lines in failed:
        print("COMPILE FAIL %s: %s" % (rel, " / ".join(lines)))
    print("e2e pack: %d runs from %d tests for --target=%s in %s "
          "(%d tests left to lit: negative or not plain; %d failed to compile)"
          % (len(manifest), len({m['test'] for m in manifest}), args.targets,
             out, skipped, len(failed)))
    return 1 if failed else 0


def run(args):
    pack_dir = os.path.abspath(args.pack)
    with open(os.path.join(pack_dir, "manifest.json")) as f:
        manifest = json.load(f)
    passed, failures = 0, []
    start = time.time()
    for entry in manifest:
        cmd = [args.kiln_run, os.path.join(pack_dir, "modules", entry["module"]),
               "--device=" + args.device]
        cmd += ["--plugin=" + p for p in args.plugin]
        cmd += [a.replace("{PACK}", pack_dir) for a in entry["args"]]
        try:
            result = subprocess.run(cmd, capture_output=True, text=True,
                                    timeout=args.timeout)
            ok = result.returncode == 0
            detail = (result.stdout + result.stderr).strip().splitlines()[-3:]
        except subprocess.TimeoutExpired:
            ok, detail = False, ["timed out after %ds" % args.timeout]
        if ok:
            passed += 1
        else:
            failures.append(entry["test"])
            print("FAIL %s: %s" % (entry["test"], " / ".join(detail)))
    print("e2e on %s: %d passed, %d failed of %d runs (%d tests) in %.1fs"
          % (args.device, passed, len(failures), len(manifest),
             len({m['test'] for m in manifest}), time.time() - start))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--kiln-compile", required=True)
    p.add_argument("--targets", default="cuda,host")
    p.add_argument("--out", required=True)
    r = sub.add_parser("run")
    r.add_argument("--kiln-run", required=True)
    r.add_argument("--device", required=True)
    r.add_argument("--pack", required=True)
    r.add_argument("--plugin", action="append", default=[])
    r.add_argument("--timeout", type=int, default=60)
    args = parser.parse_args()
    return pack(args) if args.mode == "pack" else run(args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compiles every e2e program for GPU targets and checks the kernels' resources.

usage: compile_corpus_for_gpu.py E2E_DIR OUT_DIR [--known-failures FILE]
                                 -- KILN_COMPILE_ARGS...

Each program under E2E_DIR (except the folders of deliberately bad inputs) is
compiled with `kiln-compile <program> KILN_COMPILE_ARGS -o OUT_DIR/<name>.vmfb`;
then `kiln-dump --resources` must list no kernel that uses scratch (register
spills or stack). Programs are compiled in parallel. Prints one line per
program and a summary; exits non-zero on any failure.

FILE lists programs (by the name printed, e.g. elementwise_math_f64) that are
known not to compile yet, one per line with the reason after a '#'. They are
reported as "known" instead of failing; one that compiles is an error, so the
list shrinks as the compiler grows.
"""
import concurrent.futures
import os
import re
import subprocess
import sys

# Folders of programs that are meant not to compile, and generator sources.
SKIPPED_DIRS = {"compile_errors", "errors", "gen", "Inputs"}


def find_programs(root):
    programs = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        programs += [os.path.join(dirpath, f) for f in sorted(filenames)
                     if f.endswith(".mlir")]
    return programs


def declined_targets(program, args):
    """The compile targets that `program` declares it cannot be compiled for
    (`// UNSUPPORTED-TARGETS: rocm, cuda (why)`)."""
    with open(program) as f:
        m = re.search(r"//\s*UNSUPPORTED-TARGETS:\s*([a-z, ]+)", f.read())
    if not m:
        return set()
    declared = {t.strip() for t in m.group(1).split(",") if t.strip()}
    targets = set()
    for arg in args:
        if arg.startswith("--target="):
            targets |= set(arg[len("--target="):].split(","))
    return declared & targets


# The program's own collective flags (its RUN line's kiln-compile), which
# decide what is a compiled collective and so what the GPU targets accept.
COLLECTIVE_FLAGS = re.compile(
    r"--collective-(?:kernel-max-bytes|two-shot-min-bytes)=[0-9]+")


def program_flags(program):
    with open(program) as f:
        for line in f:
            if "RUN:" in line and "kiln-compile %s" in line:
                return COLLECTIVE_FLAGS.findall(line)
    return []


def check(program, root, out_dir, args):
    name = os.path.relpath(program, root).replace(os.sep, "_")[:-len(".mlir")]
    module = os.path.join(out_dir, name + ".vmfb")
    compile_run = subprocess.run(
        ["kiln-compile", program, *args, *program_flags(program), "-o",
         module],
        capture_output=True, text=True)
    declined = declined_targets(program, args)
    if declined:
        # The compiler must refuse it, with a located error.
        if compile_run.returncode != 0 and ": error: " in compile_run.stderr:
            return f"ok {name}: refused for {','.join(sorted(declined))} as declared"
        return (f"FAIL {name}: declared UNSUPPORTED-TARGETS "
                f"{','.join(sorted(declined))} but kiln-compile accepted it")
    if compile_run.returncode != 0:
        return f"FAIL {name}: kiln-compile exited {compile_run.returncode}:\n{compile_run.stderr}"
    dump = subprocess.run(["kiln-dump", module, "--resources"],
                          capture_output=True, text=True)
    if dump.returncode != 0:
        return f"FAIL {name}: kiln-dump: {dump.stderr}"
    spills = []
    lines = dump.stdout.splitlines()
    for line in lines[1:]:
        fields = line.split()
        if len(fields) == 9 and fields[-1] != "0":
            spills.append(line)
    if spills:
        return f"FAIL {name}: scratch in\n  " + "\n  ".join(spills)
    return f"ok {name}: {len(lines) - 1} kernel variants"


def read_known_failures(path):
    known = {}
    with open(path) as f:
        for line in f:
            name, _, reason = line.partition("#")
            if name.strip():
                known[name.strip()] = reason.strip()
    return known


def main():
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") < 2:
        sys.exit(__doc__)
    split = argv.index("--")
    options, args = argv[:split], argv[split + 1:]
    root, out_dir = options[0], options[1]
    known = {}
    if options[2:]:
        if len(options) != 4 or options[2] != "--known-failures":
            sys.exit(__doc__)
        known = read_known_failures(options[3])
    os.makedirs(out_dir, exist_ok=True)
    programs = find_programs(root)
    if not programs:
        sys.exit(f"no programs under {root}")
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda p: check(p, root, out_dir, args),
                                programs))
    failures = 0
    for program, result in zip(programs, results):
        name = os.path.relpath(program, root).replace(os.sep, "_")[:-5]
        if name in known:
            if result.startswith("ok "):
                result = (f"FAIL {name}: compiles now; remove it from the "
                          "known failures")
            else:
                result = f"known {name}: {known[name]}"
        if result.startswith("FAIL"):
            failures += 1
        print(result)
    print(f"compiled {len(programs)} programs, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

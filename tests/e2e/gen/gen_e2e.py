#!/usr/bin/env python3
"""Writes the generated Kiln e2e tests (tests/e2e/<area>/*.mlir).

Each `cases_*.py` module beside this script defines CASES, a list of
`e2elib.Case`: the program, its inputs and the numpy reference outputs. This
script renders each case into a lit test with kiln-compile / kiln-run RUN lines.

  python3 tests/e2e/gen/gen_e2e.py           # (re)write every generated test
  python3 tests/e2e/gen/gen_e2e.py --check   # exit 1 if a test is out of date

Hand-written tests (errors/, compile_errors/) are not touched.
"""

import argparse
import importlib
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
E2E = HERE.parent
sys.path.insert(0, str(HERE))

import e2elib  # noqa: E402


def all_cases():
    """(module file name, case) for every case, in a stable order."""
    out = []
    for mod_path in sorted(HERE.glob("cases_*.py")):
        mod = importlib.import_module(mod_path.stem)
        out += [(mod_path.name, c) for c in mod.CASES]
    paths = [c.path for _, c in out]
    dups = {p for p in paths if paths.count(p) > 1}
    if dups:
        raise SystemExit(f"error: duplicate test paths: {sorted(dups)}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only check that the files are up to date")
    args = ap.parse_args()
    stale = []
    cases = all_cases()
    for src, case in cases:
        text = e2elib.render(case, f"gen/{src}")
        path = E2E / case.path
        if path.exists() and path.read_text() == text:
            continue
        stale.append(case.path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if args.check:
        for p in stale:
            print(f"error: tests/e2e/{p} is out of date; run tests/e2e/gen/gen_e2e.py", file=sys.stderr)
        return 1 if stale else 0
    print(f"{len(cases)} generated tests, {len(stale)} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks the numpy expectations of the e2e corpus against upstream MLIR.

Independent of Kiln: every generated case is wrapped in a driver function that
builds its inputs as constants, calls the function under test and prints each
output's raw bits; the module is lowered with upstream mlir-opt passes to LLVM
and run with mlir-runner on the CPU. The printed values must match the numpy
values within the tolerance written into the test.

  python3 tests/e2e/gen/crosscheck.py [-k SUBSTRING] [-v]

Needs mlir-opt and mlir-runner (LLVM 22: /usr/lib/llvm-22/bin). A failure here
means the program, the reference or the tolerance is wrong, not Kiln.
"""

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import e2elib  # noqa: E402
import gen_e2e  # noqa: E402

REPO = HERE.parent.parent.parent
LLVM_BIN = pathlib.Path("/usr/lib/llvm-22/bin")
LLVM_LIB = pathlib.Path("/usr/lib/llvm-22/lib")

# linalg.softmax has no upstream lowering pass; decompose it with the transform
# dialect (loaded from a file written next to the program).
DECOMPOSE = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %s = transform.structured.match ops{["linalg.softmax"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %s : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
"""

PIPELINE = ",".join([
    "transform-preload-library{transform-library-paths=%s}", "transform-interpreter",
    "func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg)",
    "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
    "func.func(convert-linalg-to-loops)",
    "convert-math-to-llvm", "convert-math-to-libm", "expand-strided-metadata", "lower-affine",
    "convert-scf-to-cf", "arith-expand", "convert-arith-to-llvm", "finalize-memref-to-llvm",
    "convert-func-to-llvm", "convert-cf-to-llvm", "reconcile-unrealized-casts",
])

# How each element type is turned into i64 bits for printing, and back.
TO_I64 = {
    "i1": ["arith.extui {v} : i1 to i64"],
    "i8": ["arith.extsi {v} : i8 to i64"],
    "i16": ["arith.extsi {v} : i16 to i64"],
    "i32": ["arith.extsi {v} : i32 to i64"],
    "i64": [],
    "f16": ["arith.bitcast {v} : f16 to i16", "arith.extui {v} : i16 to i64"],
    "bf16": ["arith.bitcast {v} : bf16 to i16", "arith.extui {v} : i16 to i64"],
    "f32": ["arith.bitcast {v} : f32 to i32", "arith.extui {v} : i32 to i64"],
    "f64": ["arith.bitcast {v} : f64 to i64"],
}


def from_bits(bits, ty):
    b = np.array(bits, dtype=np.int64)
    if ty == "f16":
        return b.astype(np.uint16).view(np.float16).astype(np.float64)
    if ty == "bf16":
        return (b.astype(np.uint32) << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    if ty == "f32":
        return b.astype(np.uint32).view(np.float32).astype(np.float64)
    if ty == "f64":
        return b.view(np.float64)
    return b


def literal(t: e2elib.T) -> str:
    def rec(a):
        if a.ndim == 0:
            v = a.item()
            if t.ty == "i1":
                return "true" if v else "false"
            if e2elib.is_float(t.ty):
                return repr(float(v))
            return str(int(v))
        return "[" + ", ".join(rec(x) for x in a) + "]"
    return f"dense<{rec(t.value)}> : {t.tensor_type()}"


def driver(run: e2elib.Run) -> str:
    lines = ["func.func private @printMemrefI64(tensor<*xi64>)", "func.func @__crosscheck() {"]
    for i, t in enumerate(run.inputs):
        lines.append(f"  %in{i} = arith.constant {literal(t)}")
    in_types = ", ".join(t.tensor_type() for t in run.inputs)
    out_types = ", ".join(t.tensor_type() for t in run.outputs)
    outs = ", ".join(f"%out{i}" for i in range(len(run.outputs)))
    ins = ", ".join(f"%in{i}" for i in range(len(run.inputs)))
    lines.append(f"  {outs} = call @{run.function}({ins}) : ({in_types}) -> ({out_types})")
    for i, t in enumerate(run.outputs):
        rank = len(t.shape)
        m = e2elib.ident_map(rank)
        it = ", ".join(['"parallel"'] * rank)
        ity = e2elib.tensor_type(t.shape, "i64")
        lines.append(f"  %e{i} = tensor.empty() : {ity}")
        lines.append(f"  %b{i} = linalg.generic {{indexing_maps = [{m}, {m}], iterator_types = [{it}]}} "
                     f"ins(%out{i} : {t.tensor_type()}) outs(%e{i} : {ity}) {{")
        lines.append(f"  ^bb0(%x: {t.ty}, %o: i64):")
        v = "%x"
        for j, step in enumerate(TO_I64[t.ty]):
            lines.append(f"    %s{j} = " + step.format(v=v))
            v = f"%s{j}"
        lines.append(f"    linalg.yield {v} : i64")
        lines.append(f"  }} -> {ity}")
        lines.append(f"  %u{i} = tensor.cast %b{i} : {ity} to tensor<*xi64>")
        lines.append(f"  call @printMemrefI64(%u{i}) : (tensor<*xi64>) -> ()")
    lines += ["  return", "}"]
    return "\n".join(lines)


def parse_outputs(stdout: str):
    """Lists of ints, one per printed memref."""
    blocks = stdout.split("Unranked Memref")[1:]
    return [[int(x) for x in re.findall(r"-?\d+", b.split("data =", 1)[1])] for b in blocks]


def execute(program: str, run: e2elib.Run, tmp: pathlib.Path):
    """Runs `run` on `program` with upstream MLIR: (list of float64/int64 arrays, None) or (None, error)."""
    src = tmp / "prog.mlir"
    src.write_text(program + "\n" + driver(run) + "\n")
    lowered = tmp / "prog.llvm.mlir"
    (tmp / "decompose.mlir").write_text(DECOMPOSE)
    pipeline = PIPELINE % (tmp / "decompose.mlir")
    p = subprocess.run([str(LLVM_BIN / "mlir-opt"), str(src), f"--pass-pipeline=builtin.module({pipeline})",
                        "-o", str(lowered)], capture_output=True, text=True)
    if p.returncode:
        return None, f"mlir-opt failed: {p.stderr.strip().splitlines()[0] if p.stderr.strip() else ''}"
    libs = ",".join(str(LLVM_LIB / n) for n in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    p = subprocess.run([str(LLVM_BIN / "mlir-runner"), str(lowered), "-e", "__crosscheck",
                        "-entry-point-result=void", f"-shared-libs={libs}"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode:
        return None, f"mlir-runner failed: {p.stderr.strip()[:300]}"
    got = parse_outputs(p.stdout)
    if len(got) != len(run.outputs):
        return None, f"expected {len(run.outputs)} outputs, printed {len(got)}"
    return [from_bits(bits, o.ty) for bits, o in zip(got, run.outputs)], None


def check_run(case, run, tmp: pathlib.Path):
    got, err = execute(case.program(REPO), run, tmp)
    if err:
        return err
    tol = run.tolerances()
    for i, (g, exp) in enumerate(zip(got, run.outputs)):
        e = exp.value.reshape(-1).astype(np.float64)
        if g.size != e.size:
            return f"output {i}: {g.size} values, expected {e.size}"
        if e2elib.is_float(exp.ty):
            atol, rtol = tol
            bad = np.abs(g - e) > atol + rtol * np.abs(e)
        else:
            bad = g != e
        if bad.any():
            k = int(np.argmax(bad))
            return f"output {i} element {k}: upstream MLIR {g[k]!r}, numpy {e[k]!r}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default="", help="only cases whose path contains this")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    failed = 0
    n = 0
    for _, case in gen_e2e.all_cases():
        if args.k not in case.path:
            continue
        for run in case.runs:
            n += 1
            with tempfile.TemporaryDirectory() as d:
                err = check_run(case, run, pathlib.Path(d))
            if err:
                failed += 1
                print(f"FAIL {case.path} @{run.function}: {err}")
            elif args.v:
                print(f"ok   {case.path} @{run.function}")
    print(f"{n - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

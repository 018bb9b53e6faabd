#!/usr/bin/env python3
"""Times Kiln host kernels against numpy on the same shapes.

Compiles a set of f32 programs (square matmuls, an elementwise chain, an
elementwise exp, a row softmax, a row layernorm, a row-sum reduction) with kiln-compile --target=host, times each
with kiln-benchmark on the `local` device and the same computation with
numpy, and prints a Markdown table with the ratio numpy time / Kiln time
(> 1: Kiln is faster).

usage: benchmarks/cpu/run_cpu_benchmarks.py [--build-dir DIR] [--host-cpu CPU]
           [--warmup N] [--iterations N] [--only NAME,...]

numpy must be importable (Debian: apt-get install python3-numpy, then run
with /usr/bin/python3). The table's header names the BLAS numpy ran on;
unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for the command (env -u) so
that OpenBLAS picks its kernels for this CPU.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:
    sys.exit("error: numpy is not importable by %s; install python3-numpy "
             "(apt) and run with /usr/bin/python3" % sys.executable)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def matmul_case(n):
    source = f"""
func.func @main(%a: tensor<{n}x{n}xf32>, %b: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{n}x{n}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>)
                     outs(%f : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  return %r : tensor<{n}x{n}xf32>
}}
"""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    return {
        "name": f"matmul {n}x{n}x{n}",
        "source": source,
        "inputs": [f"{n}x{n}xf32=0.5", f"{n}x{n}xf32=0.25"],
        "flops": 2.0 * n * n * n,
        "numpy": lambda: a @ b,
    }


def elementwise_case():
    rows, cols = 2048, 2048  # 4M elements
    t = f"tensor<{rows}x{cols}xf32>"
    ident = "affine_map<(d0, d1) -> (d0, d1)>"
    source = f"""
#id = {ident}
func.func @main(%a: {t}, %b: {t}, %c: {t}) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {t}
  %s = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%a, %b : {t}, {t}) outs(%e : {t}) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
    %v = arith.addf %x, %y : f32
    linalg.yield %v : f32
  }} -> {t}
  %m = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%s, %c : {t}, {t}) outs(%e : {t}) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
    %v = arith.mulf %x, %y : f32
    linalg.yield %v : f32
  }} -> {t}
  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%m : {t}) outs(%e : {t}) {{
  ^bb0(%x: f32, %o: f32):
    %v = arith.maximumf %x, %zero : f32
    linalg.yield %v : f32
  }} -> {t}
  return %r : {t}
}}
"""
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal((rows, cols), dtype=np.float32)
               for _ in range(3))
    return {
        "name": "add+mul+relu 4M",
        "source": source,
        "inputs": [f"{rows}x{cols}xf32=0.5", f"{rows}x{cols}xf32=-1.5",
                   f"{rows}x{cols}xf32=2"],
        "flops": 3.0 * rows * cols,
        "numpy": lambda: np.maximum((a + b) * c, 0),
    }


def exp_case():
    rows, cols = 2048, 2048  # 4M elements
    t = f"tensor<{rows}x{cols}xf32>"
    source = f"""
func.func @main(%x: {t}) -> {t} {{
  %e = tensor.empty() : {t}
  %r = linalg.exp ins(%x : {t}) outs(%e : {t}) -> {t}
  return %r : {t}
}}
"""
    x = np.random.default_rng(4).standard_normal((rows, cols), dtype=np.float32)
    return {
        "name": "exp 4M",
        "source": source,
        "inputs": [f"{rows}x{cols}xf32=0.5"],
        "flops": None,
        "numpy": lambda: np.exp(x),
    }


def softmax_case():
    n = 1024
    t = f"tensor<{n}x{n}xf32>"
    source = f"""
func.func @main(%x: {t}) -> {t} {{
  %e = tensor.empty() : {t}
  %r = linalg.softmax dimension(1) ins(%x : {t}) outs(%e : {t}) -> {t}
  return %r : {t}
}}
"""
    x = np.random.default_rng(2).standard_normal((n, n), dtype=np.float32)

    def reference():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return {
        "name": "softmax 1024x1024 (rows)",
        "source": source,
        "inputs": [f"{n}x{n}xf32=0.5"],
        "flops": None,
        "numpy": reference,
    }


def layernorm_case():
    """Layernorm over rows written in linalg (row sum, mean, centered sum of
    squares, normalize with scale and shift): one dispatch on the host."""
    n = 1024
    t = f"tensor<{n}x{n}xf32>"
    r = f"tensor<{n}xf32>"
    c = f"tensor<{n}xf32>"
    row = "affine_map<(i, j) -> (i)>"
    col = "affine_map<(i, j) -> (j)>"
    ident = "affine_map<(i, j) -> (i, j)>"
    source = f"""
func.func @main(%x: {t}, %g: {c}, %b: {c}) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %n = arith.constant {n}.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : {r}
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : {r}) -> {r}
  %sum = linalg.generic {{indexing_maps = [{ident}, {row}], iterator_types = ["parallel", "reduction"]}}
      ins(%x : {t}) outs(%s0 : {r}) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }} -> {r}
  %e2 = tensor.empty() : {t}
  %xc = linalg.generic {{indexing_maps = [{ident}, {row}, {ident}], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %sum : {t}, {r}) outs(%e2 : {t}) {{
  ^bb0(%in: f32, %s: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    %0 = arith.subf %in, %m : f32
    linalg.yield %0 : f32
  }} -> {t}
  %v0 = linalg.fill ins(%zero : f32) outs(%e1 : {r}) -> {r}
  %ssq = linalg.generic {{indexing_maps = [{ident}, {row}], iterator_types = ["parallel", "reduction"]}}
      ins(%xc : {t}) outs(%v0 : {r}) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %acc : f32
    linalg.yield %1 : f32
  }} -> {r}
  %out = linalg.generic {{indexing_maps = [{ident}, {row}, {col}, {col}, {ident}], iterator_types = ["parallel", "parallel"]}}
      ins(%xc, %ssq, %g, %b : {t}, {r}, {c}, {c}) outs(%e2 : {t}) {{
  ^bb0(%v: f32, %q: f32, %gi: f32, %bi: f32, %o: f32):
    %0 = arith.divf %q, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.mulf %v, %2 : f32
    %4 = arith.mulf %3, %gi : f32
    %5 = arith.addf %4, %bi : f32
    linalg.yield %5 : f32
  }} -> {t}
  return %out : {t}
}}
"""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((n, n), dtype=np.float32)
    g = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)

    def reference():
        mean = x.mean(axis=1, keepdims=True)
        xc = x - mean
        var = (xc * xc).mean(axis=1, keepdims=True)
        return xc / np.sqrt(var + 1e-5) * g + b

    return {
        "name": "layernorm 1024x1024 (rows)",
        "source": source,
        "inputs": [f"{n}x{n}xf32=0.5", f"{n}xf32=1.5", f"{n}xf32=0.25"],
        "flops": None,
        "numpy": reference,
    }


def reduction_case():
    rows, cols = 4096, 1024
    source = f"""
func.func @main(%x: tensor<{rows}x{cols}xf32>) -> tensor<{rows}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{rows}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{rows}xf32>) -> tensor<{rows}xf32>
  %r = linalg.reduce ins(%x : tensor<{rows}x{cols}xf32>) outs(%f : tensor<{rows}xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {{
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }}
  return %r : tensor<{rows}xf32>
}}
"""
    x = np.random.default_rng(3).standard_normal((rows, cols), dtype=np.float32)
    return {
        "name": "row sum 4096x1024",
        "source": source,
        "inputs": [f"{rows}x{cols}xf32=0.5"],
        "flops": float(rows * cols),
        "numpy": lambda: x.sum(axis=1),
    }


def time_numpy(fn, warmup, iterations):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2


def time_kiln(bin_dir, case, work, host_cpu, warmup, iterations):
    slug = re.sub(r"[^a-z0-9]+", "_", case["name"].lower()).strip("_")
    mlir = os.path.join(work, slug + ".mlir")
    vmfb = os.path.join(work, slug + ".vmfb")
    with open(mlir, "w") as f:
        f.write(case["source"])
    subprocess.run([os.path.join(bin_dir, "kiln-compile"), mlir,
                    "--target=host", f"--host-cpu={host_cpu}", "-o", vmfb],
                   check=True)
    command = [os.path.join(bin_dir, "kiln-benchmark"), vmfb,
               "--function=main", "--device=local", f"--warmup={warmup}",
               f"--iterations={iterations}"]
    command += [f"--input={value}" for value in case["inputs"]]
    if case["flops"]:
        command.append(f"--flops={case['flops']:.6g}")
    out = subprocess.run(command, check=True, capture_output=True,
                         text=True).stdout
    match = re.search(r"median=([0-9.]+)", out)
    if not match:
        sys.exit(f"error: unexpected kiln-benchmark output:\n{out}")
    return float(match.group(1))


def numpy_blas():
    """The BLAS library numpy's matmul ran on (from this process's maps):
    Debian's numpy uses the reference BLAS unless libopenblas0-pthread is
    installed (build_tools/setup.sh installs it)."""
    a = np.ones((64, 64), dtype=np.float32)
    a @ a
    with open("/proc/self/maps") as maps:
        libs = {line.split()[-1] for line in maps
                if "blas" in line.split()[-1].lower()}
    return ", ".join(sorted(libs)) or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                        help="CMake build directory with bin/kiln-compile "
                             "and bin/kiln-benchmark (default: %(default)s)")
    parser.add_argument("--host-cpu", default="native",
                        help="kiln-compile --host-cpu (default: native)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--only", default="",
                        help="comma-separated substrings of case names")
    args = parser.parse_args()

    bin_dir = os.path.join(args.build_dir, "bin")
    for tool in ("kiln-compile", "kiln-benchmark"):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            sys.exit(f"error: {tool} not found in {bin_dir}; build it or pass "
                     "--build-dir")

    cases = [matmul_case(256), matmul_case(512), matmul_case(1024),
             matmul_case(2048), elementwise_case(), exp_case(), softmax_case(),
             layernorm_case(), reduction_case()]
    if args.only:
        wanted = args.only.split(",")
        cases = [c for c in cases if any(w in c["name"] for w in wanted)]

    # Every Kiln timing first: OpenBLAS's threads keep spinning for a while
    # after a numpy call and would take the cores from the next kiln-benchmark
    # (a 512^3 matmul measured 2.4 ms after numpy's 256^3, 1.27 ms alone).
    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as work:
        kiln_times = [time_kiln(bin_dir, case, work, args.host_cpu,
                                args.warmup, args.iterations)
                      for case in cases]
    rows = [(case, kiln_ms, time_numpy(case["numpy"], args.warmup,
                                       args.iterations))
            for case, kiln_ms in zip(cases, kiln_times)]

    print(f"numpy {np.__version__}, BLAS: {numpy_blas()}, "
          f"{os.cpu_count()} CPUs\n")
    print(f"| benchmark | Kiln ms (median) | Kiln GFLOP/s | numpy ms (median) "
          f"| numpy / Kiln |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for case, kiln_ms, numpy_ms in rows:
        gflops = (f"{case['flops'] / (kiln_ms * 1e-3) / 1e9:.2f}"
                  if case["flops"] else "-")
        print(f"| {case['name']} | {kiln_ms:.3f} | {gflops} | {numpy_ms:.3f} "
              f"| {numpy_ms / kiln_ms:.2f} |")


if __name__ == "__main__":
    main()

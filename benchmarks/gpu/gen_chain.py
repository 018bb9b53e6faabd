#!/usr/bin/env python3
"""Writes chain.mlir: N dependent layers x = relu(x @ w) on 64x64 f32, which
kiln-compile turns into N dispatches (each matmul is a root with its relu
fused), for the per-call overhead benchmark (dispatch_overhead.sh) and the
GPU suite's chain row (suite.py)."""
import sys


def chain_mlir(n):
    """The program's text, without a trailing newline."""
    t = "tensor<64x64xf32>"
    lines = [f"func.func @main(%x0: {t}, %w: {t}) -> {t} {{",
             "  %zero = arith.constant 0.0 : f32",
             f"  %e = tensor.empty() : {t}"]
    for i in range(n):
        lines += [
            f"  %f{i} = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}",
            f"  %m{i} = linalg.matmul ins(%x{i}, %w : {t}, {t}) outs(%f{i} : {t}) -> {t}",
            f"  %x{i + 1} = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, "
            f"affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\"]}} "
            f"ins(%m{i} : {t}) outs(%e : {t}) {{",
            "  ^bb0(%a: f32, %o: f32):",
            "    %r = arith.maximumf %a, %zero : f32",
            "    linalg.yield %r : f32",
            f"  }} -> {t}",
        ]
    lines += [f"  return %x{n} : {t}", "}"]
    return "\n".join(lines)


if __name__ == "__main__":
    print(chain_mlir(int(sys.argv[1]) if len(sys.argv) > 1 else 50))

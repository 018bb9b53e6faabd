#!/usr/bin/env python3
"""The same N-layer chain as gen_chain.py in PyTorch on the GPU: per-call
time of eager execution and of a CUDA graph replay, each call synchronized
(as kiln-benchmark times a synchronous call). Prints median microseconds.
suite.py's peers reuse chain() and capture_graph()."""
import statistics
import sys
import time

import torch


def chain(x, w, n):
    for _ in range(n):
        x = torch.relu(x @ w)
    return x


def capture_graph(fn):
    """A CUDA graph of fn() (called with no arguments; its tensors are the
    graph's static buffers) and the graph's output. fn runs once on a side
    stream first, which warms up cuBLAS there, as graph capture needs."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph, out


def median_us(fn, iters):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    x0 = torch.rand(64, 64, device="cuda")
    w = torch.rand(64, 64, device="cuda") / 64
    torch.backends.cuda.matmul.allow_tf32 = False
    eager = median_us(lambda: chain(x0, w, n), iters)
    static_x = x0.clone()
    graph, _ = capture_graph(lambda: chain(static_x, w, n))
    graphed = median_us(graph.replay, iters)
    print(f"torch eager: {eager:.1f} us/call")
    print(f"torch cuda graph: {graphed:.1f} us/call")


if __name__ == "__main__":
    main()

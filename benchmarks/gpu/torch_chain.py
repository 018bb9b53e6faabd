#!/usr/bin/env python3
"""The same N-layer chain as gen_chain.py in PyTorch on the GPU: per-call
time of eager execution and of a CUDA graph replay, each call synchronized
(as kiln-benchmark times a synchronous call). Prints median microseconds."""
import statistics
import sys
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
iters = int(sys.argv[2]) if len(sys.argv) > 2 else 200
x0 = torch.rand(64, 64, device="cuda")
w = torch.rand(64, 64, device="cuda") / 64


def chain(x):
    for _ in range(n):
        x = torch.relu(x @ w)
    return x


def median_us(fn):
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


torch.backends.cuda.matmul.allow_tf32 = False
eager = median_us(lambda: chain(x0))
static_x = x0.clone()
stream = torch.cuda.Stream()
stream.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(stream):
    chain(static_x)  # warm up cuBLAS on the capture stream
torch.cuda.current_stream().wait_stream(stream)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    static_out = chain(static_x)
graphed = median_us(graph.replay)
print(f"torch eager: {eager:.1f} us/call")
print(f"torch cuda graph: {graphed:.1f} us/call")

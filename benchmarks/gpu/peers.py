"""The GPU suite's peers: each workload in PyTorch (eager, torch.compile,
CUDA graph replay) and JAX (jit), and the timers that measure them the way
kiln-benchmark measures Kiln.

Imported by suite.py on the GPU machine only (needs torch with CUDA; JAX is
optional). Timers return dicts:
  call_ms       median host time of a synchronous call:
                perf_counter around fn(*args); torch.cuda.synchronize()
                (JAX: fn(*args).block_until_ready()), as kiln-benchmark does
  device_ms     median CUDA-event time between a start event recorded before
                the call and an end event after it (None for JAX)
  iterations    calls in each of the two timed loops
  first_call_s  the first call (torch.compile and jax.jit compile in it)
"""

import math
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

import torch_chain
import workloads as W

TORCH_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def to_torch(stored, dtype):
    """A stored input array (workloads.make_inputs) on the GPU."""
    if dtype == "bf16":
        return torch.from_numpy(np.ascontiguousarray(stored).view(np.int16)).cuda().view(
            torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(stored)).cuda()


def rel_l2_error(out, ref):
    """||out - ref|| / ||ref|| of two GPU tensors in float64; inf when out
    has a NaN or inf."""
    out, ref = out.double(), ref.double()
    if out.shape != ref.shape:
        raise ValueError(f"output shape {tuple(out.shape)} != reference "
                         f"{tuple(ref.shape)}")
    if not bool(torch.isfinite(out).all()):
        return float("inf")
    return float(torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref))


# --- Implementations ---------------------------------------------------------

def torch_impl(workload):
    """The workload as a function of torch tensors (the eager peer and the
    correctness reference)."""
    kind, p = workload["kind"], workload["params"]
    if kind == "matmul":
        if workload["dtype"] == "i8":
            # cuBLASLt's int8 GEMM with i32 results.
            return lambda a, b: torch._int_mm(a, b)
        return lambda a, b: torch.matmul(a, b)
    if kind == "mlp":
        return lambda x, w1, w2: F.gelu(x @ w1, approximate="tanh") @ w2
    if kind == "softmax":
        return lambda x: torch.softmax(x, dim=1)
    if kind == "layernorm":
        return lambda x, g, b: F.layer_norm(x, (x.shape[1],), g, b, eps=W.LAYERNORM_EPS)
    if kind == "rowsum":
        return lambda x: x.sum(dim=1)
    if kind == "colsum":
        return lambda x: x.sum(dim=0)
    if kind == "scale2":
        return lambda x: x * 2
    if kind == "gelu":
        a, b = p["a"], p["b"]
        return lambda x: F.gelu(x * a + b, approximate="tanh")
    if kind == "attention":
        # 4-D (1, batch*heads, seq, d) so that SDPA takes its fused kernels.
        return lambda q, k, v: F.scaled_dot_product_attention(
            q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)).squeeze(0)
    if kind == "chain":
        return lambda x, w: torch_chain.chain(x, w, p["layers"])
    if kind == "conv":
        # NHWC data as channels_last NCHW tensors (cuDNN's NHWC kernels);
        # the result back as NHWC.
        def conv(x, w):
            xc = x.permute(0, 3, 1, 2)
            wc = w.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
            return F.conv2d(xc, wc).permute(0, 2, 3, 1)
        return conv
    raise ValueError(f"no torch implementation of kind '{kind}'")


def jax_impl(jax, workload):
    """The workload as a function of JAX arrays (jit it). f32 matmuls use
    Precision.HIGHEST (no TF32), as torch does with allow_tf32=False."""
    jnp = jax.numpy
    kind, p = workload["kind"], workload["params"]
    highest = jax.lax.Precision.HIGHEST

    def matmul(a, b):
        if a.dtype == jnp.int8:
            return jnp.matmul(a, b, preferred_element_type=jnp.int32)
        return jnp.matmul(a, b, precision=highest if a.dtype == jnp.float32 else None)

    if kind == "matmul":
        return matmul
    if kind == "mlp":
        return lambda x, w1, w2: jax.nn.gelu(x @ w1, approximate=True) @ w2
    if kind == "softmax":
        return lambda x: jax.nn.softmax(x, axis=1)
    if kind == "layernorm":
        def layernorm(x, g, b):
            mean = x.mean(axis=1, keepdims=True)
            var = jnp.square(x - mean).mean(axis=1, keepdims=True)
            return (x - mean) * jax.lax.rsqrt(var + W.LAYERNORM_EPS) * g + b
        return layernorm
    if kind == "rowsum":
        return lambda x: x.sum(axis=1)
    if kind == "colsum":
        return lambda x: x.sum(axis=0)
    if kind == "scale2":
        return lambda x: x * 2
    if kind == "gelu":
        a, b = p["a"], p["b"]
        return lambda x: jax.nn.gelu(x * a + b, approximate=True)
    if kind == "attention":
        scale = 1.0 / math.sqrt(p["head_dim"])

        def attention(q, k, v):
            s = jnp.einsum("bqd,bkd->bqk", q, k, preferred_element_type=jnp.float32)
            prob = jax.nn.softmax(s * scale, axis=-1)
            o = jnp.einsum("bqk,bkd->bqd", prob.astype(q.dtype), v,
                           preferred_element_type=jnp.float32)
            return o.astype(q.dtype)
        return attention
    if kind == "conv":
        return lambda x, w: jax.lax.conv_general_dilated(
            x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    if kind == "chain":
        def chain(x, w):
            for _ in range(p["layers"]):
                x = jnp.maximum(matmul(x, w), 0)
            return x
        return chain
    raise ValueError(f"no JAX implementation of kind '{kind}'")


def load_jax():
    """(jax module, its GPU device), or raises RuntimeError saying why JAX
    cannot be a peer here. Set XLA_PYTHON_CLIENT_PREALLOCATE=false before
    (suite.py does) so that JAX leaves GPU memory to torch and Kiln."""
    import jax
    gpus = [d for d in jax.devices() if d.platform in ("gpu", "cuda")]
    if not gpus:
        raise RuntimeError(f"JAX {jax.__version__} sees no GPU (devices: "
                           f"{[str(d) for d in jax.devices()]})")
    return jax, gpus[0]


def to_jax(jax, device, stored, dtype):
    if dtype == "bf16":
        stored = np.ascontiguousarray(stored).view(jax.numpy.bfloat16)
    return jax.device_put(stored, device)


# --- Timers ------------------------------------------------------------------

def iterations_for(seconds_per_call, budget_s, max_iterations):
    """Timed calls that fit in budget_s (at least 3, at most max_iterations)."""
    return max(3, min(max_iterations, int(budget_s / max(seconds_per_call, 1e-7))))


def _host_s(fn, args, sync):
    start = time.perf_counter()
    sync(fn(*args))
    return time.perf_counter() - start


def time_torch(fn, args, budget_s, max_iterations):
    """fn(*args) timed on the host (synchronous calls) and with CUDA
    events; the second call's time sets the iteration count so that both
    loops fit in budget_s."""
    sync = lambda _: torch.cuda.synchronize()
    first = _host_s(fn, args, sync)
    n = iterations_for(_host_s(fn, args, sync), budget_s / 2, max_iterations)
    W.warm_up(lambda: sync(fn(*args)))
    torch.cuda.synchronize()
    host = [_host_s(fn, args, sync) for _ in range(n)]
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    device = []
    for _ in range(n):
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        device.append(start.elapsed_time(end))
    return {"call_ms": statistics.median(host) * 1e3,
            "device_ms": statistics.median(device), "iterations": n,
            "first_call_s": first}


def time_torch_graph(fn, args, budget_s, max_iterations):
    """A CUDA graph of fn(*args), its replay timed as time_torch does."""
    start = time.perf_counter()
    graph, _ = torch_chain.capture_graph(lambda: fn(*args))
    capture_s = time.perf_counter() - start
    result = time_torch(graph.replay, [], budget_s, max_iterations)
    result["first_call_s"] += capture_s
    del graph
    return result


def time_jax(fn, args, budget_s, max_iterations):
    """fn(*args).block_until_ready() timed on the host; no device time."""
    sync = lambda out: out.block_until_ready()
    first = _host_s(fn, args, sync)
    n = iterations_for(_host_s(fn, args, sync), budget_s, max_iterations)
    W.warm_up(lambda: sync(fn(*args)))
    host = [_host_s(fn, args, sync) for _ in range(n)]
    return {"call_ms": statistics.median(host) * 1e3, "device_ms": None,
            "iterations": n, "first_call_s": first}


def copy_bandwidth_tbs(gib=1, iterations=10):
    """Device-to-device copy bandwidth of a GiB-sized clone (bytes read +
    bytes written per second, CUDA events, median), in TB/s."""
    x = torch.empty(gib << 28, dtype=torch.float32, device="cuda").uniform_()
    x.clone()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    ms = []
    for _ in range(iterations):
        start.record()
        y = x.clone()
        end.record()
        end.synchronize()
        ms.append(start.elapsed_time(end))
        del y
    del x
    torch.cuda.empty_cache()
    return 2 * (gib << 30) / (statistics.median(ms) * 1e-3) / 1e12


def same_size_copy_ms(nbytes, budget_s, max_iterations):
    """Device time of a device-to-device copy that moves |nbytes| (half
    read, half written) replayed from a CUDA graph, by CUDA events around
    the replay: a memory-bound row's floor measured the way Kiln's device
    span is (events around a graph launch), launch included. None for
    fewer than 32 bytes."""
    half = int(nbytes) // 2 // 16 * 16
    if half <= 0:
        return None
    x = torch.empty(half, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    try:
        return time_torch_graph(lambda: y.copy_(x), [], budget_s,
                                max_iterations)["device_ms"]
    finally:
        del x, y
        torch.cuda.empty_cache()


def device_clock_rate(seconds=0.1, samples=5):
    """How fast the GPU's event timer runs against the host's clock: the
    event time between two events recorded on an idle stream, seconds
    apart, over the host time between their completions (median of
    |samples|). 1.0 for clocks that agree; a device time t in host seconds
    is t / rate. Long calls' host-minus-device times include t * (1 - 1 /
    rate), which this lets the suite take out."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    rates = []
    for _ in range(samples):
        start.record()
        start.synchronize()
        host_start = time.perf_counter_ns()
        while time.perf_counter_ns() - host_start < seconds * 1e9:
            pass
        end.record()
        end.synchronize()
        host_ns = time.perf_counter_ns() - host_start
        rates.append(start.elapsed_time(end) * 1e6 / host_ns)
    return statistics.median(rates)

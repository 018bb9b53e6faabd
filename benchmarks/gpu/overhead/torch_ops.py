"""The torch side of call_overhead.sh: the same three ops, timed as
kiln-benchmark times calls (host time around op + synchronize, median of
100 after 10 warm-up calls) and with CUDA events."""
import time

import torch

def bench(name, fn, n=100):
    for _ in range(10): fn()
    torch.cuda.synchronize()
    host = []
    for _ in range(n):
        t = time.perf_counter(); fn(); torch.cuda.synchronize(); host.append(time.perf_counter() - t)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    dev = []
    for _ in range(n):
        s.record(); fn(); e.record(); e.synchronize(); dev.append(s.elapsed_time(e))
    host.sort(); dev.sort()
    print(f"torch {name}: host_ms={host[n//2]*1e3:.4f} event_ms={dev[n//2]:.4f}")
x = torch.rand(1 << 26, device="cuda")
bench("scale", lambda: x * 2)
t = torch.rand(1024, device="cuda")
bench("tiny", lambda: t * 2)
m = torch.rand(4096, 4096, device="cuda")
bench("softmax", lambda: torch.softmax(m, 1))

"""Where a call with torch tensors in and out (DLPack) spends its time,
next to the same call on Kiln device arrays, on the GPU machine.

    python3 benchmarks/gpu/dlpack_timing.py MODULE.vmfb

MODULE.vmfb: a module whose `main` takes one 8x64 f32 tensor (the MLP that
torch_models.sh packs: carry/torch_models/models/mlp.vmfb); kiln.runtime
as torch_models.sh builds it there (PYTHONPATH=carry/torch_models/pkg).
Prints the median of 300 calls (after 30) of each step, in us.
"""

import statistics
import sys
import time

import torch

import kiln.runtime as rt


def median_us(call, n=300):
    for _ in range(30):
        call()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main(path):
    device = rt.Device("hip")
    fn = device.load(path).main
    x = torch.randn(8, 64, device="cuda")
    resident = device.array(x.cpu().numpy())
    stream = device._native.dlpack_stream()
    out = fn(resident, outputs="device")

    def round_trip(argument):
        result = torch.from_dlpack(fn(argument, outputs="device"))
        del result  # released: the deleter waits for torch's stream

    steps = [
        ("call on device arrays", lambda: fn(resident, outputs="device")),
        ("torch's __dlpack__(stream=Kiln's)", lambda: x.__dlpack__(stream=stream)),
        ("device.from_dlpack (torch's part included)", lambda: device.from_dlpack(x)),
        ("call taking a torch tensor", lambda: fn(x, outputs="device")),
        ("torch.from_dlpack of an output", lambda: torch.from_dlpack(out)),
        ("call + export + release", lambda: round_trip(resident)),
        ("torch in, call, export, release", lambda: round_trip(x)),
    ]
    for name, call in steps:
        print(f"{name}: {median_us(call):.1f} us", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

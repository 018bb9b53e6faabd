#!/usr/bin/env python3
"""Runs compiled collective kernels (kiln.window_collective, cuda target) on
one NVIDIA GPU as N logical ranks, through the CUDA driver API: the PTX that
kiln-compile emits, every rank's window (data, signal slots, peer table) in
that GPU's memory, each rank's kernel on its own stream, all ranks of a call
running at once. It checks the flag protocol and the memory orderings on
real hardware before the hip driver has windows of its own (issue 14).

  here (compiler):  build_tools/gpu_window_collectives.py pack \\
                        --kiln-compile=build/bin/kiln-compile [--out carry/winc]
  GPU machine:      build_tools/gpu_window_collectives.py run --pack carry/winc \\
                        [--calls 2000]

Each case is a program of one shard collective (kind, reduction, type, count
per rank, ranks, and for all_reduce the algorithm: one-shot, or two-shot
through kiln-compile's --collective-two-shot-min-bytes). run makes --calls calls in a row with fresh inputs every
call (so a rank that read a peer's stale half, or a flag reused too early,
shows as a wrong result), compares every call's result on every rank with
numpy (integers exactly; floats to the rounding of the rank-order sum in
the accumulation type), then times calls: one call of every rank captured
as a CUDA graph (rank 0's stream forks to the others and joins them), replayed
back to back between events, so the figure is the device time of a call
without host launch costs. Exits 1 on any mismatch.
"""
import argparse
import ctypes
import json
import os
import re
import subprocess
import sys

# (name, op, reduction, type, elements per rank (send), ranks, two-shot)
CASES = [
    ("sum_f32_r2", "all_reduce", "sum", "f32", 15, 2, False),
    ("sum_f32_r4_wg20", "all_reduce", "sum", "f32", 20001, 4, False),
    ("sum_f32_r8_wg64", "all_reduce", "sum", "f32", 262144, 8, False),
    ("avg_f16_r3_wg13", "all_reduce", "average", "f16", 24579, 3, False),
    ("max_i32_r4", "all_reduce", "max", "i32", 1000, 4, False),
    ("prod_i16_r2_wg32", "all_reduce", "product", "i16", 65536, 2, False),
    ("min_bf16_r2", "all_reduce", "min", "bf16", 777, 2, False),
    ("gather_i64_r3_wg36", "all_gather", None, "i64", 18000, 3, False),
    ("gather_f32_r8", "all_gather", None, "f32", 64, 8, False),
    ("scatter_sum_f32_r4", "reduce_scatter", "sum", "f32", 4 * 3001, 4, False),
    ("scatter_max_f16_r8_wg64", "reduce_scatter", "max", "f16", 8 * 65536, 8,
     False),
    ("scatter_min_i16_r3", "reduce_scatter", "min", "i16", 3 * 1000, 3, False),
    ("twoshot_sum_f32_r3_odd", "all_reduce", "sum", "f32", 7001, 3, True),
    ("twoshot_avg_bf16_r8", "all_reduce", "average", "bf16", 65539, 8, True),
    ("twoshot_prod_i32_r4", "all_reduce", "product", "i32", 4099, 4, True),
]
# One-shot against two-shot, f32 sum, 16 KiB to 1 MiB per rank on 4 and 8
# ranks: where the threshold between them lies (`run --only=sweep`).
for _ranks in (4, 8):
    for _kib in (16, 64, 256, 1024):
        for _two in (False, True):
            CASES.append(("sweep_%s_r%d_%dk" % ("two" if _two else "one",
                                                _ranks, _kib),
                          "all_reduce", "sum", "f32", _kib * 256, _ranks,
                          _two))
MLIR_TYPES = {"f32": "f32", "f16": "f16", "bf16": "bf16", "i32": "i32",
              "i16": "i16", "i64": "i64"}


def program(op, reduction, ty, count, ranks):
    t = "tensor<%dx%s>" % (count, MLIR_TYPES[ty])
    if op == "all_reduce":
        body = ("%%0 = shard.all_reduce %%x on @grid grid_axes = [0] "
                "reduction = %s : %s -> %s" % (reduction, t, t))
        out = t
    elif op == "reduce_scatter":
        out = "tensor<%dx%s>" % (count // ranks, MLIR_TYPES[ty])
        body = ("%%0 = shard.reduce_scatter %%x on @grid grid_axes = [0] "
                "reduction = %s scatter_axis = 0 : %s -> %s"
                % (reduction, t, out))
    else:
        out = "tensor<%dx%s>" % (count * ranks, MLIR_TYPES[ty])
        body = ("%%0 = shard.all_gather %%x on @grid grid_axes = [0] "
                "gather_axis = 0 : %s -> %s" % (t, out))
    return ("shard.grid @grid(shape = %d)\n"
            "func.func @main(%%x: %s) -> %s {\n  %s\n  return %%0 : %s\n}\n"
            % (ranks, t, out, body, out))


def pack(args):
    os.makedirs(args.out, exist_ok=True)
    kiln_dump = os.path.join(os.path.dirname(args.kiln_compile), "kiln-dump")
    manifest = []
    for name, op, reduction, ty, count, ranks, two_shot in CASES:
        src = os.path.join(args.out, name + ".mlir")
        with open(src, "w") as f:
            f.write(program(op, reduction, ty, count, ranks))
        dump = os.path.join(args.out, name + ".dump")
        module = os.path.join(args.out, name + ".vmfb")
        subprocess.run([args.kiln_compile, src, "--target=cuda",
                        "--cuda-chip=" + args.cuda_chip,
                        "--collective-kernel-max-bytes=1048576",
                        "--collective-two-shot-min-bytes=%d"
                        % (1 if two_shot else 0),
                        "--dump-intermediates=" + dump, "-o", module],
                       check=True)
        text = subprocess.run([kiln_dump, module, "--commands"], check=True,
                              capture_output=True, text=True).stdout
        m = re.search(r"export 0: (\w+) workgroup count (\d+)x1x1, "
                      r"workgroup size (\d+)x1x1", text)
        if not m:
            sys.exit("%s: no compiled collective kernel in the module:\n%s"
                     % (name, text))
        kernel, workgroups, threads = m.group(1), int(m.group(2)), int(m.group(3))
        with open(os.path.join(dump, kernel, "%s.%s.ptx"
                               % (kernel, args.cuda_chip))) as f:
            ptx = f.read()
        with open(os.path.join(args.out, name + ".ptx"), "w") as f:
            f.write(ptx)
        if two_shot != ("two_shot" in kernel):
            sys.exit("%s: expected a %s kernel, got %s"
                     % (name, "two-shot" if two_shot else "one-shot", kernel))
        manifest.append(dict(name=name, op=op, reduction=reduction, type=ty,
                             count=count, ranks=ranks, kernel=kernel,
                             two_shot=two_shot, workgroups=workgroups,
                             threads=threads))
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print("packed %d cases in %s" % (len(manifest), args.out))


class Cuda:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.check(self.lib.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev),
                   "cuDevicePrimaryCtxRetain")
        self.check(self.lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")

    def check(self, result, what):
        if result != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(result, ctypes.byref(name))
            raise RuntimeError("%s failed: %s" % (what, name.value))

    def alloc(self, size):
        p = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(max(size, 8))),
                   "cuMemAlloc")
        self.check(self.lib.cuMemsetD8_v2(p, ctypes.c_ubyte(0), ctypes.c_size_t(max(size, 8))),
                   "cuMemsetD8")
        return p.value

    def upload(self, ptr, array, stream=None):
        data = array.tobytes()
        if stream is None:
            self.check(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(ptr), data,
                                               ctypes.c_size_t(len(data))), "cuMemcpyHtoD")
        else:
            self.check(self.lib.cuMemcpyHtoDAsync_v2(ctypes.c_uint64(ptr), data,
                                                    ctypes.c_size_t(len(data)), stream),
                       "cuMemcpyHtoDAsync")

    def download(self, ptr, nbytes):
        buf = ctypes.create_string_buffer(nbytes)
        self.check(self.lib.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(ptr),
                                           ctypes.c_size_t(nbytes)), "cuMemcpyDtoH")
        return buf.raw


def run(args):
    import numpy as np
    cuda = Cuda()
    lib = cuda.lib
    with open(os.path.join(args.pack, "manifest.json")) as f:
        manifest = json.load(f)
    if args.only:
        manifest = [c for c in manifest if re.search(args.only, c["name"])]
    np_types = {"f32": np.float32, "f16": np.float16, "i32": np.int32,
                "i16": np.int16, "i64": np.int64, "bf16": np.uint16}
    failures = 0
    for case in manifest:
        n, count, ty = case["ranks"], case["count"], case["type"]
        wg, threads = case["workgroups"], case["threads"]
        size = np.dtype(np_types[ty]).itemsize
        with open(os.path.join(args.pack, case["name"] + ".ptx"), "rb") as f:
            ptx = f.read() + b"\0"
        module = ctypes.c_void_p()
        cuda.check(lib.cuModuleLoadData(ctypes.byref(module), ptx), "cuModuleLoadData")
        func = ctypes.c_void_p()
        cuda.check(lib.cuModuleGetFunction(ctypes.byref(func), module,
                                           case["kernel"].encode()), "cuModuleGetFunction")
        recv_count = {"all_gather": count * n,
                      "reduce_scatter": count // n}.get(case["op"], count)
        phases = 2 if case.get("two_shot") else 1
        signals = wg * (phases * n + 1)
        ranks = []
        for r in range(n):
            stream = ctypes.c_void_p()
            cuda.check(lib.cuStreamCreate(ctypes.byref(stream), 1), "cuStreamCreate")
            ranks.append(dict(send=cuda.alloc(count * size),
                              recv=cuda.alloc(recv_count * size),
                              data=cuda.alloc(2 * count * size),
                              signals=cuda.alloc(8 * signals),
                              peers=cuda.alloc(16 * n + 8), stream=stream))
        # Every rank's data, every rank's signals, the group's abort word
        # (zero: no rank leaves here).
        abort_word = cuda.alloc(8)
        table = np.array([x["data"] for x in ranks] + [x["signals"] for x in ranks]
                         + [abort_word], dtype=np.uint64)
        for x in ranks:
            cuda.upload(x["peers"], table)
        rng = np.random.default_rng(7)

        def inputs():
            if ty in ("f32", "f16"):
                return [rng.uniform(-2, 2, count).astype(np_types[ty]) for _ in range(n)]
            if ty == "bf16":
                return [(rng.uniform(-2, 2, count).astype(np.float32).view(np.uint32)
                         >> 16).astype(np.uint16) for _ in range(n)]
            if case["reduction"] == "product":
                return [rng.choice(np.array([-1, 1, 2], dtype=np_types[ty]), count)
                        for _ in range(n)]
            return [rng.integers(-1000, 1000, count).astype(np_types[ty]) for _ in range(n)]

        def expected(xs):
            """Every rank's expected recv."""
            if case["op"] == "all_gather":
                return [np.concatenate(xs)] * n
            acc = reduced(xs)
            if case["op"] == "reduce_scatter":
                return np.split(acc, n)
            return [acc] * n

        def reduced(xs):
            if ty == "bf16":
                vals = [(x.astype(np.uint32) << 16).view(np.float32) for x in xs]
            else:
                vals = [x.astype(np.float32) if ty == "f16" else x for x in xs]
            acc = vals[0].copy()
            for v in vals[1:]:
                acc = {"sum": np.add, "average": np.add, "product": np.multiply,
                       "min": np.minimum, "max": np.maximum}[case["reduction"]](acc, v)
            if case["reduction"] == "average":
                acc = acc / np.float32(n)
            if ty == "f16":
                return acc.astype(np.float16)
            if ty == "bf16":
                bits = acc.astype(np.float32).view(np.uint32)
                rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
                return rounded.astype(np.uint16)
            return acc.astype(np_types[ty])

        def launch():
            for x in ranks:
                params = [ctypes.c_uint64(x[k]) for k in
                          ("send", "recv", "data", "signals", "peers")]
                ptrs = (ctypes.c_void_p * 5)(*[ctypes.cast(ctypes.byref(p), ctypes.c_void_p)
                                              for p in params])
                cuda.check(lib.cuLaunchKernel(func, wg, 1, 1, threads, 1, 1, 0,
                                              x["stream"], ptrs, None), "cuLaunchKernel")

        def wrong_ranks(wants):
            """(rank, first differing index, got, want) of every rank whose
            recv differs from its entry of |wants|."""
            wrong = []
            for r, (x, want) in enumerate(zip(ranks, wants)):
                got = np.frombuffer(cuda.download(x["recv"], recv_count * size),
                                    dtype=np_types[ty])
                if ty in ("f32", "f16"):
                    ok = np.allclose(got.astype(np.float64), want.astype(np.float64),
                                     rtol=1e-6 if ty == "f32" else 1e-3, atol=0)
                else:
                    ok = np.array_equal(got, want)
                if not ok:
                    wrong.append((r, int(np.argmax(got != want)), got, want))
            return wrong

        bad = 0
        for call in range(args.calls):
            xs = inputs()
            for x, data in zip(ranks, xs):
                cuda.upload(x["send"], data, x["stream"])
            launch()
            cuda.check(lib.cuCtxSynchronize(), "cuCtxSynchronize (call %d)" % call)
            want = expected(xs)
            for r, i, got, want_r in wrong_ranks(want):
                bad += 1
                if bad <= 3:
                    print("  %s call %d rank %d: element %d is %r, expected %r"
                          % (case["name"], call, r, i, got[i], want_r[i]))
        # Every rank's signals: the epoch counters equal the number of calls.
        epochs = np.frombuffer(cuda.download(ranks[0]["signals"], 8 * signals),
                               dtype=np.int64)[wg * phases * n:]
        if not np.all(epochs == args.calls):
            bad += 1
            print("  %s: epoch counters %s after %d calls" % (case["name"], epochs, args.calls))
        # Timing without the host: one call (every rank's kernel, each on its
        # stream, forked from and joined into rank 0's) captured as a CUDA
        # graph, replayed --timed times back to back between two events:
        # the device time of a call.
        s0 = ranks[0]["stream"]
        events = []
        for _ in range(2 * n):
            e = ctypes.c_void_p()
            cuda.check(lib.cuEventCreate(ctypes.byref(e), 2), "cuEventCreate")
            events.append(e)
        cuda.check(lib.cuCtxSynchronize(), "cuCtxSynchronize")
        cuda.check(lib.cuStreamBeginCapture_v2(s0, 0), "cuStreamBeginCapture")
        cuda.check(lib.cuEventRecord(events[0], s0), "cuEventRecord")
        for x in ranks[1:]:
            cuda.check(lib.cuStreamWaitEvent(x["stream"], events[0], 0), "cuStreamWaitEvent")
        launch()
        for r, x in enumerate(ranks[1:], 1):
            cuda.check(lib.cuEventRecord(events[n + r], x["stream"]), "cuEventRecord")
            cuda.check(lib.cuStreamWaitEvent(s0, events[n + r], 0), "cuStreamWaitEvent")
        graph, exe = ctypes.c_void_p(), ctypes.c_void_p()
        cuda.check(lib.cuStreamEndCapture(s0, ctypes.byref(graph)), "cuStreamEndCapture")
        cuda.check(lib.cuGraphInstantiateWithFlags(ctypes.byref(exe), graph, 0),
                   "cuGraphInstantiate")
        start, stop = ctypes.c_void_p(), ctypes.c_void_p()
        lib.cuEventCreate(ctypes.byref(start), 0)
        lib.cuEventCreate(ctypes.byref(stop), 0)
        times = []
        for _ in range(5):
            for _ in range(10):
                cuda.check(lib.cuGraphLaunch(exe, s0), "cuGraphLaunch")
            lib.cuEventRecord(start, s0)
            for _ in range(args.timed):
                cuda.check(lib.cuGraphLaunch(exe, s0), "cuGraphLaunch")
            lib.cuEventRecord(stop, s0)
            cuda.check(lib.cuEventSynchronize(stop), "cuEventSynchronize")
            ms = ctypes.c_float()
            lib.cuEventElapsedTime(ctypes.byref(ms), start, stop)
            times.append(ms.value * 1000 / args.timed)
        times.sort()
        # The graph's calls advanced every epoch too; the results of the last
        # one are still every rank's reduction of the last inputs.
        for r, i, got, want_r in wrong_ranks(want):
            bad += 1
            print("  %s rank %d: element %d is %r after the graph replays, "
                  "expected %r" % (case["name"], r, i, got[i], want_r[i]))
        verdict = "PASS" if bad == 0 else "FAIL"
        failures += bad != 0
        print("%s %-24s %-14s %-8s %7d x %-4s ranks %d wg %2d%s: %d calls "
              "checked, device time per call %.1f us median (min %.1f)"
              % (verdict, case["name"], case["op"], case["reduction"] or "-", count, ty,
                 n, wg, " two-shot" if phases == 2 else "", args.calls,
                 times[len(times) // 2], times[0]))
        sys.stdout.flush()
    print("%d of %d cases failed" % (failures, len(manifest)))
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pk = sub.add_parser("pack")
    pk.add_argument("--kiln-compile", required=True)
    pk.add_argument("--out", default="carry/winc")
    pk.add_argument("--cuda-chip", default="sm_90")
    rn = sub.add_parser("run")
    rn.add_argument("--pack", default="carry/winc")
    rn.add_argument("--calls", type=int, default=2000)
    rn.add_argument("--timed", type=int, default=500)
    rn.add_argument("--only", default="")
    args = p.parse_args()
    if args.cmd == "pack":
        pack(args)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

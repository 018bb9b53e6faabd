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

On several GPUs (issue 15): `run --gpus=N` puts rank r on GPU r % N (peer
access enabled between them; each GPU loads the kernel), and `--nccl` also
times NCCL's all_reduce (ncclCommInitAll, one rank per GPU) for every
all_reduce case with N ranks, as nccl-tests does: device time of a call
captured in a graph and host time per call of back-to-back calls, for the
compiled kernel and for NCCL, with their ratios. The `lat_r2_*` cases are
the latency sweep (f32 sum, 8 B to 1 MiB per rank, 2 ranks):

  GPU machine (2 GPUs):  NCCL_NVLS_ENABLE=0 build_tools/gpu_window_collectives.py \
                             run --pack carry/winc --only=lat --gpus=2 --nccl
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
# all_reduce f32 sum of 8 B to 1 MiB per rank on 2 ranks, for the latency
# comparison with NCCL on two GPUs (`run --only=lat --gpus=2 --nccl`,
# issue 15); on one GPU they run as two logical ranks.
for _bytes in (8, 64, 512, 4096, 32768, 262144, 1048576):
    CASES.append(("lat_r2_%db" % _bytes, "all_reduce", "sum", "f32",
                  _bytes // 4, 2, False))
# An empty kernel: the launch floor of the timing graph (`run --floor`).
EMPTY_PTX = (b".version 7.8\n.target sm_80\n.address_size 64\n"
             b".visible .entry empty() { ret; }\n\0")
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
    """The CUDA driver API through ctypes, over GPUs 0 .. gpus-1 (their
    primary contexts; peer access enabled between every pair)."""

    def __init__(self, gpus=1):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.check(self.lib.cuInit(0), "cuInit")
        available = ctypes.c_int()
        self.check(self.lib.cuDeviceGetCount(ctypes.byref(available)),
                   "cuDeviceGetCount")
        if available.value < gpus:
            raise RuntimeError("--gpus=%d but this machine has %d GPU(s)"
                               % (gpus, available.value))
        self.contexts = []
        for g in range(gpus):
            dev = ctypes.c_int()
            self.check(self.lib.cuDeviceGet(ctypes.byref(dev), g), "cuDeviceGet")
            ctx = ctypes.c_void_p()
            self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
                       "cuDevicePrimaryCtxRetain")
            self.contexts.append(ctx)
        for g, ctx in enumerate(self.contexts):
            self.use(g)
            for h, peer in enumerate(self.contexts):
                if h != g:
                    result = self.lib.cuCtxEnablePeerAccess(peer, 0)
                    if result not in (0, 704):  # 704: already enabled
                        self.check(result, "cuCtxEnablePeerAccess(%d -> %d)" % (g, h))
        self.use(0)
        self.ctx = self.contexts[0]

    def use(self, gpu):
        self.check(self.lib.cuCtxSetCurrent(self.contexts[gpu]), "cuCtxSetCurrent")

    def synchronize(self, what):
        for g in range(len(self.contexts)):
            self.use(g)
            self.check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize (%s)" % what)
        self.use(0)

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


class Nccl:
    """NCCL's C API through ctypes: one communicator per GPU of this process
    (ncclCommInitAll), all_reduce timed as nccl-tests does."""
    TYPES = {"f32": 7, "f16": 6, "bf16": 9, "i32": 2, "i64": 4}
    OPS = {"sum": 0, "product": 1, "max": 2, "min": 3, "average": 4}

    def __init__(self, cuda, gpus):
        self.cuda = cuda
        self.lib = ctypes.CDLL("libnccl.so.2")
        version = ctypes.c_int()
        self.lib.ncclGetVersion(ctypes.byref(version))
        self.version = version.value
        self.comms = (ctypes.c_void_p * gpus)()
        devices = (ctypes.c_int * gpus)(*range(gpus))
        self.check(self.lib.ncclCommInitAll(self.comms, gpus, devices),
                   "ncclCommInitAll")
        cuda.use(0)

    def check(self, result, what):
        if result != 0:
            self.lib.ncclGetErrorString.restype = ctypes.c_char_p
            raise RuntimeError("%s failed: %s" % (what,
                               self.lib.ncclGetErrorString(result)))

    def all_reduce(self, ranks, count, ty, reduction):
        """One all_reduce of every rank (send -> recv on its stream)."""
        self.check(self.lib.ncclGroupStart(), "ncclGroupStart")
        for r, x in enumerate(ranks):
            self.check(self.lib.ncclAllReduce(
                ctypes.c_uint64(x["send"]), ctypes.c_uint64(x["recv"]),
                ctypes.c_size_t(count), self.TYPES[ty], self.OPS[reduction],
                self.comms[r], x["stream"]), "ncclAllReduce")
        self.check(self.lib.ncclGroupEnd(), "ncclGroupEnd")


def host_time_us(cuda, issue, calls):
    """Host time per call of |calls| calls issued back to back, then one
    synchronization (nccl-tests' method), median of 5 rounds."""
    import time
    times = []
    for _ in range(5):
        for _ in range(10):
            issue()
        cuda.synchronize("warm-up")
        start = time.perf_counter()
        for _ in range(calls):
            issue()
        cuda.synchronize("timed calls")
        times.append((time.perf_counter() - start) * 1e6 / calls)
    times.sort()
    return times[len(times) // 2]


def graph_time_us(cuda, ranks, issue, timed):
    """Device time per call: one call of every rank captured as a CUDA graph
    (rank 0's stream forks to the others and joins them), replayed |timed|
    times between two events; (median, min) of 5 rounds."""
    lib, n = cuda.lib, len(ranks)
    s0 = ranks[0]["stream"]
    cuda.use(0)
    events = []
    for x in ranks:
        cuda.use(x["gpu"])
        for _ in range(2):
            e = ctypes.c_void_p()
            cuda.check(lib.cuEventCreate(ctypes.byref(e), 2), "cuEventCreate")
            events.append(e)
    cuda.synchronize("before capture")
    cuda.check(lib.cuStreamBeginCapture_v2(s0, 2), "cuStreamBeginCapture")
    cuda.check(lib.cuEventRecord(events[0], s0), "cuEventRecord")
    for x in ranks[1:]:
        cuda.check(lib.cuStreamWaitEvent(x["stream"], events[0], 0), "cuStreamWaitEvent")
    issue()
    for r, x in enumerate(ranks[1:], 1):
        cuda.use(x["gpu"])
        cuda.check(lib.cuEventRecord(events[2 * r + 1], x["stream"]), "cuEventRecord")
        cuda.use(0)
        cuda.check(lib.cuStreamWaitEvent(s0, events[2 * r + 1], 0), "cuStreamWaitEvent")
    cuda.use(0)
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
        for _ in range(timed):
            cuda.check(lib.cuGraphLaunch(exe, s0), "cuGraphLaunch")
        lib.cuEventRecord(stop, s0)
        cuda.check(lib.cuEventSynchronize(stop), "cuEventSynchronize")
        ms = ctypes.c_float()
        lib.cuEventElapsedTime(ctypes.byref(ms), start, stop)
        times.append(ms.value * 1000 / timed)
    times.sort()
    return times[len(times) // 2], times[0]


def run(args):
    import numpy as np
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    cuda = Cuda(args.gpus)
    lib = cuda.lib
    nccl = None
    if args.nccl:
        if args.gpus < 2:
            sys.exit("--nccl needs --gpus=2 or more (NCCL takes one GPU per rank)")
        nccl = Nccl(cuda, args.gpus)
        print("NCCL %d, %d GPUs, NCCL_NVLS_ENABLE=%s"
              % (nccl.version, args.gpus, os.environ["NCCL_NVLS_ENABLE"]))
    with open(os.path.join(args.pack, "manifest.json")) as f:
        manifest = json.load(f)
    if args.only:
        manifest = [c for c in manifest if re.search(args.only, c["name"])]
    np_types = {"f32": np.float32, "f16": np.float16, "i32": np.int32,
                "i16": np.int16, "i64": np.int64, "bf16": np.uint16}
    empties = []
    if args.floor:
        for g in range(args.gpus):
            cuda.use(g)
            module, func = ctypes.c_void_p(), ctypes.c_void_p()
            cuda.check(lib.cuModuleLoadData(ctypes.byref(module), EMPTY_PTX),
                       "cuModuleLoadData(empty)")
            cuda.check(lib.cuModuleGetFunction(ctypes.byref(func), module,
                                               b"empty"), "cuModuleGetFunction")
            empties.append(func)
        cuda.use(0)
    failures = 0
    for case in manifest:
        n, count, ty = case["ranks"], case["count"], case["type"]
        wg, threads = case["workgroups"], case["threads"]
        size = np.dtype(np_types[ty]).itemsize
        with open(os.path.join(args.pack, case["name"] + ".ptx"), "rb") as f:
            ptx = f.read() + b"\0"
        # The kernel in every GPU's context; rank r runs on GPU r % --gpus.
        funcs = []
        for g in range(args.gpus):
            cuda.use(g)
            module = ctypes.c_void_p()
            cuda.check(lib.cuModuleLoadData(ctypes.byref(module), ptx),
                       "cuModuleLoadData")
            func = ctypes.c_void_p()
            cuda.check(lib.cuModuleGetFunction(ctypes.byref(func), module,
                                               case["kernel"].encode()),
                       "cuModuleGetFunction")
            funcs.append(func)
        recv_count = {"all_gather": count * n,
                      "reduce_scatter": count // n}.get(case["op"], count)
        phases = 2 if case.get("two_shot") else 1
        signals = wg * (phases * n + 1)
        ranks = []
        for r in range(n):
            gpu = r % args.gpus
            cuda.use(gpu)
            stream = ctypes.c_void_p()
            cuda.check(lib.cuStreamCreate(ctypes.byref(stream), 1), "cuStreamCreate")
            ranks.append(dict(send=cuda.alloc(count * size),
                              recv=cuda.alloc(recv_count * size),
                              data=cuda.alloc(2 * count * size),
                              signals=cuda.alloc(8 * signals),
                              peers=cuda.alloc(16 * n + 8), stream=stream,
                              gpu=gpu))
        # Every rank's data, every rank's signals, the group's abort word
        # (zero: no rank leaves here; on GPU 0, reached by peer access).
        cuda.use(0)
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
                cuda.use(x["gpu"])
                params = [ctypes.c_uint64(x[k]) for k in
                          ("send", "recv", "data", "signals", "peers")]
                ptrs = (ctypes.c_void_p * 5)(*[ctypes.cast(ctypes.byref(p), ctypes.c_void_p)
                                              for p in params])
                cuda.check(lib.cuLaunchKernel(funcs[x["gpu"]], wg, 1, 1, threads,
                                              1, 1, 0, x["stream"], ptrs, None),
                           "cuLaunchKernel")
            cuda.use(0)

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
                cuda.use(x["gpu"])
                cuda.upload(x["send"], data, x["stream"])
            cuda.use(0)
            launch()
            cuda.synchronize("call %d" % call)
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
        # Timing without the host (graph_time_us): the device time of a
        # call; and with it (host_time_us): back-to-back launches.
        median, least = graph_time_us(cuda, ranks, launch, args.timed)
        times = [least, median]
        floor = None
        if args.floor:
            # The same graph with an empty kernel per rank: what the graph's
            # fork, launches and join cost by themselves.
            def launch_empty():
                for x in ranks:
                    cuda.use(x["gpu"])
                    cuda.check(lib.cuLaunchKernel(empties[x["gpu"]], 1, 1, 1, 1, 1,
                                                  1, 0, x["stream"], None, None),
                               "cuLaunchKernel(empty)")
                cuda.use(0)
            floor, _ = graph_time_us(cuda, ranks, launch_empty, args.timed)
        eager = host_time_us(cuda, launch, args.timed) if args.nccl else None
        # The graph's calls advanced every epoch too; the results of the last
        # one are still every rank's reduction of the last inputs.
        for r, i, got, want_r in wrong_ranks(want):
            bad += 1
            print("  %s rank %d: element %d is %r after the graph replays, "
                  "expected %r" % (case["name"], r, i, got[i], want_r[i]))
        verdict = "PASS" if bad == 0 else "FAIL"
        failures += bad != 0
        print("%s %-24s %-14s %-8s %7d x %-4s ranks %d wg %2d%s: %d calls "
              "checked, device time per call %.1f us median (min %.1f)%s"
              % (verdict, case["name"], case["op"], case["reduction"] or "-", count, ty,
                 n, wg, " two-shot" if phases == 2 else "", args.calls,
                 times[len(times) // 2], times[0],
                 "; empty kernels in the same graph %.1f us" % floor
                 if floor is not None else ""))
        if nccl and case["op"] == "all_reduce" and n == args.gpus \
                and ty in Nccl.TYPES:
            issue = lambda: nccl.all_reduce(ranks, count, ty, case["reduction"])
            try:
                nccl_graph, _ = graph_time_us(cuda, ranks, issue, args.timed)
            except RuntimeError as error:  # a NCCL without graph capture
                nccl_graph = float("nan")
                print("  NCCL in a graph: %s" % error)
            nccl_eager = host_time_us(cuda, issue, args.timed)
            print("  %-24s %9d B/rank: compiled %.1f us (graph) %.1f us "
                  "(eager) | NCCL %.1f us (graph) %.1f us (eager) | compiled/NCCL "
                  "%.2f (graph) %.2f (eager)"
                  % (case["name"], count * size, median, eager, nccl_graph,
                     nccl_eager, median / nccl_graph, eager / nccl_eager))
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
    rn.add_argument("--gpus", type=int, default=1,
                    help="spread the ranks over GPUs 0..N-1 (rank r on GPU "
                         "r %% N, peer access enabled)")
    rn.add_argument("--floor", action="store_true",
                    help="also time the same graph with an empty kernel per "
                         "rank (the graph's own cost)")
    rn.add_argument("--nccl", action="store_true",
                    help="also time NCCL's all_reduce of every all_reduce "
                         "case with one rank per GPU (ncclCommInitAll; "
                         "device time in a graph and host time of "
                         "back-to-back calls, for the compiled kernel too)")
    args = p.parse_args()
    if args.cmd == "pack":
        pack(args)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""torch.distributed (NCCL) collective bandwidth, the reference for
`kiln-benchmark collective` on GPUs: same ops, same size sweep, same row
format (size count type time algbw busbw; nccl-tests busbw factors).

One process per GPU (torch.multiprocessing); for each size, `warmup` ops,
then `iters` ops timed two ways: CUDA events around them on the stream
(time, algbw, busbw), and host time from before the first call until
torch.cuda.synchronize() returns after the last (host time, host busbw: the
nccl-tests method, and kiln-benchmark's, which times host to semaphore).
Each timing is the slowest rank's; with --repeat=R the size is timed R
times and the row shows the median of each. Sizes follow kiln-benchmark: size is the largest buffer of a rank
(all_gather: its output), count the per-rank input element count.

  python3 torch_collective.py --ranks=2 --op=all_reduce --dtype=f32 \
      --min-bytes=8 --max-bytes=1G --step-factor=2 --iters=20 --warmup=5
"""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

DTYPES = {"i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
          "i64": torch.int64, "u8": torch.uint8, "f16": torch.float16,
          "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}
OPS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"]
REDUCTIONS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT,
              "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX,
              "avg": dist.ReduceOp.AVG}


def parse_bytes(text):
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1:].upper() in scale:
        return int(text[:-1]) * scale[text[-1:].upper()]
    return int(text)


def bus_factor(op, n):
    if op == "all_reduce":
        return 2 * (n - 1) / n
    return 1.0 if op == "broadcast" else (n - 1) / n


def count_for(op, nbytes, element_size, n):
    """Per-rank input count for a row of about nbytes (kiln-benchmark's)."""
    count = nbytes // element_size
    if op == "all_gather":
        return count // n
    if op in ("reduce_scatter", "all_to_all"):
        return count // n * n
    return count


def sizes(args, element_size):
    target, last = float(args.min_bytes), None
    while target <= args.max_bytes * (1 + 1e-9):
        count = count_for(args.op, int(target), element_size, args.ranks)
        nbytes = count * element_size * (args.ranks if args.op == "all_gather" else 1)
        if count and nbytes != last:
            last = nbytes
            yield nbytes, count
        target *= args.step_factor


def worker(rank, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=args.ranks,
                            device_id=torch.device("cuda", rank))
    n, dtype = args.ranks, DTYPES[args.dtype]
    element_size = torch.tensor([], dtype=dtype).element_size()
    op = REDUCTIONS[args.reduction]
    if rank == 0:
        print(f"# torch {torch.__version__} nccl {torch.cuda.nccl.version()}: "
              f"{args.op} {args.dtype} on {n} ranks, iters {args.iters}, "
              f"warmup {args.warmup}, median of {args.repeat}")
        print("#       size        count   type       time     algbw     busbw"
              "  host time host busbw")
        print("#        (B)   (elements)              (us)    (GB/s)    (GB/s)"
              "       (us)     (GB/s)")
    for nbytes, count in sizes(args, element_size):
        inp = torch.ones(count, dtype=dtype, device="cuda")
        if args.op == "all_reduce":
            run = lambda: dist.all_reduce(inp, op=op)
        elif args.op == "all_gather":
            out = torch.empty(count * n, dtype=dtype, device="cuda")
            run = lambda: dist.all_gather_into_tensor(out, inp)
        elif args.op == "reduce_scatter":
            out = torch.empty(count // n, dtype=dtype, device="cuda")
            run = lambda: dist.reduce_scatter_tensor(out, inp, op=op)
        elif args.op == "all_to_all":
            out = torch.empty(count, dtype=dtype, device="cuda")
            run = lambda: dist.all_to_all_single(out, inp)
        else:
            run = lambda: dist.broadcast(inp, src=args.root)
        for _ in range(args.warmup):
            run()
        torch.cuda.synchronize()
        timings = []  # (events, host) seconds per op of each repetition
        for _ in range(args.repeat):
            dist.barrier()
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            host_start = time.perf_counter()
            start.record()
            for _ in range(args.iters):
                run()
            end.record()
            torch.cuda.synchronize()
            host = time.perf_counter() - host_start
            timings += [start.elapsed_time(end) / 1e3 / args.iters,
                        host / args.iters]
        seconds = torch.tensor(timings, dtype=torch.float64, device="cuda")
        dist.all_reduce(seconds, op=dist.ReduceOp.MAX)
        if rank == 0:
            slowest = seconds.tolist()
            t = statistics.median(slowest[0::2])
            th = statistics.median(slowest[1::2])
            factor = bus_factor(args.op, n)
            algbw = nbytes / t / 1e9
            print(f"{nbytes:12d} {count:12d} {args.dtype:>6} {t * 1e6:10.2f} "
                  f"{algbw:9.3f} {algbw * factor:9.3f} {th * 1e6:10.2f} "
                  f"{nbytes / th / 1e9 * factor:10.3f}", flush=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--op", choices=OPS, default="all_reduce")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    parser.add_argument("--reduction", choices=sorted(REDUCTIONS), default="sum")
    parser.add_argument("--root", type=int, default=0)
    parser.add_argument("--min-bytes", type=parse_bytes, default=8)
    parser.add_argument("--max-bytes", type=parse_bytes, default=64 << 20)
    parser.add_argument("--step-factor", type=float, default=2)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=1,
                        help="timings per size; rows show the medians")
    parser.add_argument("--port", type=int, default=29517)
    args = parser.parse_args()
    if args.ranks > torch.cuda.device_count():
        parser.error(f"--ranks={args.ranks} but {torch.cuda.device_count()} GPUs")
    mp.spawn(worker, args=(args,), nprocs=args.ranks)


if __name__ == "__main__":
    main()

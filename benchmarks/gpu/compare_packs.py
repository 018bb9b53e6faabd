#!/usr/bin/env python3
"""Kiln against Kiln: the same workloads compiled by different compilers,
timed in one run on one GPU, each output checked against the first pack's.

A compiler change is measured before and after in the same process tree on
the same machine, as docs/performance.md asks, without the peers' cost:

  here:  benchmarks/gpu/gpu_suite.sh --pack build carry/before --only=RE
         (change the compiler, rebuild)
         benchmarks/gpu/gpu_suite.sh --pack build carry/after --only=RE
  GPU:   python3 benchmarks/gpu/compare_packs.py carry/before carry/after

Every pack must hold the same workloads (suite.py pack with one --only). For
each workload, fresh random inputs are written once; each pack's module
runs once with kiln-run (its output kept), then with kiln-benchmark
--profile, in rounds that alternate the packs (so that clock and thermal
drift fall on all of them alike). The table gives the median call and
device time of each pack and the relative L2 error of its output against
the first pack's. Uses suite.py's Pack and the workloads' input generator.
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite  # noqa: E402
import workloads as W  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packs", nargs="+", help="pack folders (suite.py pack)")
    parser.add_argument("--device", default="hip")
    parser.add_argument("--rounds", type=int, default=3,
                        help="kiln-benchmark runs per pack and workload")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    packs = [suite.Pack(p) for p in args.packs]
    names = [[w["name"] for w in p.manifest["workloads"]] for p in packs]
    if any(n != names[0] for n in names[1:]):
        sys.exit("error: the packs hold different workloads: " +
                 "; ".join(f"{p.dir}: {n}" for p, n in zip(packs, names)))
    labels = [os.path.basename(p.dir.rstrip("/")) for p in packs]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for index, w in enumerate(packs[0].manifest["workloads"]):
            folder = os.path.join(work, w["name"])
            _, paths = suite.write_inputs(w, args.seed + index, folder)
            outputs = []
            for i, pack in enumerate(packs):
                out = os.path.join(folder, f"out{i}.npy")
                pack.tool("kiln-run", w, args.device, paths,
                          [f"--output=@{out}"], 120)
                outputs.append(W.as_float(W.load_npy(out, w["output"]["dtype"]),
                                          w["output"]["dtype"]))
            calls = [[] for _ in packs]
            devices = [[] for _ in packs]
            for _ in range(args.rounds):
                for i, pack in enumerate(packs):
                    done, _ = pack.tool(
                        "kiln-benchmark", w, args.device, paths,
                        ["--warmup=5", "--warmup-ms=20",
                         f"--iterations={args.iterations}", "--profile=20",
                         "--json"], 300)
                    result = suite.parse_benchmark_json(done.stdout)
                    calls[i].append(result["latency_ms"]["median"])
                    timed = (result.get("profile") or {}).get("timed") or {}
                    if timed.get("device_ms") is not None:
                        devices[i].append(timed["device_ms"])
            row = [w["name"]]
            for i in range(len(packs)):
                device = statistics.median(devices[i]) if devices[i] else None
                error = W.rel_l2_error(outputs[i], outputs[0])
                row.append(f"{statistics.median(calls[i]):.4f} / "
                           f"{device:.4f}" if device is not None else
                           f"{statistics.median(calls[i]):.4f} / -")
                row.append(f"{error:.1e}")
            rows.append(row)
            print(" | ".join(row), flush=True)
    header = ["workload"]
    for label in labels:
        header += [f"{label}: call / device ms", f"{label}: rel err vs {labels[0]}"]
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()

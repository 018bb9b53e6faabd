#!/usr/bin/env bash
# The CUDA driver's own cost of a small call after a long kernel, next to
# Kiln's per-call overhead on calls of that length, in alternating processes
# of one run (issue 11; docs/performance.md, "Session 18"):
#   driver_latency --graph 0 1.5 25   (no Kiln code: a graph launch, an event
#                                      record and polling, after a kernel of
#                                      D ms; benchmarks/gpu/driver_latency.cc)
#   kiln-benchmark --profile on matmul f32 8192^3 (24.7 ms on an H200) and
#   bf16 8192^3 (1.5 ms): call time minus the same call's device span.
#
#   here:  benchmarks/gpu/driver_floor.sh --pack BUILD_DIR   (-> carry/driver_floor)
#   GPU:   benchmarks/gpu/driver_floor.sh [carry/driver_floor] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = "--pack" ]; then
  build=${2:?usage: driver_floor.sh --pack BUILD_DIR}
  out=$root/carry/driver_floor
  rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
  for p in matmul_f32_8192 matmul_bf16_8192; do
    "$build/bin/kiln-compile" "$root/benchmarks/gpu/programs/$p.mlir" \
      --target=cuda --cuda-chip=sm_90a -o "$out/$p.vmfb"
  done
  c++ -O2 -Wall -pthread -o "$out/bin/driver_latency" \
    "$root/benchmarks/gpu/driver_latency.cc" -ldl
  cp "$build/bin/kiln-benchmark" "$out/bin/"
  cp -P "$build"/lib/libkiln_runtime.so* "$build/lib/libkiln_hal_hip.so" "$out/lib/"
  echo "packed into $out"
  exit 0
fi
dir=$(cd "${1:-$root/carry/driver_floor}" && pwd)
rounds=${2:-8}
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
json=$(mktemp)
trap 'rm -f "$json"' EXIT
for ((i = 0; i < rounds; ++i)); do
  timeout 60 "$dir/bin/driver_latency" --graph --rounds=20 0 1.5 25 |
    awk '/poll/ {printf "driver graph call after %s ms: %s us (launch %s) | ", $1, $3, $4} END {print ""}'
  for row in matmul_f32_8192:8192x8192xf32=0.5 matmul_bf16_8192:8192x8192xbf16=0.5; do
    name=${row%%:*} input=${row#*:}
    timeout 60 "$dir/bin/kiln-benchmark" "$dir/$name.vmfb" --function=main \
      --plugin="$dir/lib/libkiln_hal_hip.so" --device=hip \
      --input="$input" --input="$input" --warmup=3 --iterations=15 \
      --profile=20 --json >"$json"
    python3 - "$json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["profile"]["timed"]
print(f"kiln {sys.argv[2]}: device {t['device_ms']:.3f} ms, "
      f"timed overhead median {t['overhead_us']['median']:.1f} us")
PY
  done
done

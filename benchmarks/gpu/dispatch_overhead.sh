#!/usr/bin/env bash
# Per-call time of a 50-dispatch function on the GPU, side by side in one
# run: Kiln's hip driver replaying the function as a CUDA graph and as a
# one-shot stream replay (KILN_HIP_GRAPHS=0), PyTorch eager, and PyTorch
# CUDA-graph replay of the same ops (64x64 f32 matmul + relu, 50 layers).
#
#   here:  benchmarks/gpu/dispatch_overhead.sh --pack BUILD_DIR   (-> carry/bench)
#   GPU:   benchmarks/gpu/dispatch_overhead.sh [carry/bench]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = "--pack" ]; then
  build=${2:?usage: dispatch_overhead.sh --pack BUILD_DIR}
  out=$root/carry/bench
  rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
  python3 "$root/benchmarks/gpu/gen_chain.py" 50 > "$out/chain.mlir"
  "$build/bin/kiln-compile" "$out/chain.mlir" --target=cuda,host \
    --cuda-chip=sm_90 -o "$out/chain.vmfb"
  cp "$build/bin/kiln-benchmark" "$out/bin/"
  cp -P "$build"/lib/libkiln_runtime.so* "$build/lib/libkiln_hal_hip.so" "$out/lib/"
  echo "packed into $out"
  exit 0
fi
dir=$(cd "${1:-$root/carry/bench}" && pwd)
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bench() {
  timeout 120 "$dir/bin/kiln-benchmark" "$dir/chain.vmfb" --function=main \
    --plugin="$dir/lib/libkiln_hal_hip.so" --device=hip \
    --input=64x64xf32=0.5 --input=64x64xf32=0.015 --warmup=20 --iterations=200 |
    sed -n 's/.*median=\([0-9.]*\).*/\1/p'
}
graph_ms=$(bench)
stream_ms=$(KILN_HIP_GRAPHS=0 bench)
torch_out=$(timeout 120 python3 "$root/benchmarks/gpu/torch_chain.py" 50 200)
echo "$torch_out"
eager_us=$(sed -n 's/torch eager: \([0-9.]*\).*/\1/p' <<<"$torch_out")
tgraph_us=$(sed -n 's/torch cuda graph: \([0-9.]*\).*/\1/p' <<<"$torch_out")
python3 - "$graph_ms" "$stream_ms" "$eager_us" "$tgraph_us" <<'PY'
import sys
kg, ks, te, tg = float(sys.argv[1]) * 1e3, float(sys.argv[2]) * 1e3, float(sys.argv[3]), float(sys.argv[4])
print("| 50 dispatches (64x64 matmul+relu) | us/call (median, synchronous) | vs torch eager | vs torch cuda graph |")
print("| --- | --- | --- | --- |")
for name, v in [("kiln hip, graph replay", kg), ("kiln hip, stream replay", ks),
                ("torch eager", te), ("torch cuda graph", tg)]:
    print(f"| {name} | {v:.1f} | {te / v:.2f}x | {tg / v:.2f}x |")
PY

#!/usr/bin/env bash
# Per-call cost of small and large calls on the hip driver, side by side with
# torch timed the same way (host time around call + synchronize, median of
# 100 calls): x * 2 over 2^26 and over 1024 f32 elements, softmax over rows
# of 4096x4096 f32. Each Kiln row is run with graphs on and off and, for
# the two x * 2 rows, with the waits' polling off (KILN_HIP_SPIN_WAIT_US=0),
# plus a profile line (kiln-benchmark --profile: device span vs call time).
#
#   here:  benchmarks/gpu/call_overhead.sh --pack BUILD_DIR   (-> carry/overhead)
#   GPU:   benchmarks/gpu/call_overhead.sh [carry/overhead]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = "--pack" ]; then
  build=${2:?usage: call_overhead.sh --pack BUILD_DIR}
  out=$root/carry/overhead
  rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
  for p in scale tiny softmax; do
    "$build/bin/kiln-compile" "$root/benchmarks/gpu/overhead/$p.mlir" \
      --target=cuda --cuda-chip=sm_90 -o "$out/$p.vmfb"
  done
  cp "$root/benchmarks/gpu/overhead/torch_ops.py" "$out/"
  cp "$build/bin/kiln-benchmark" "$out/bin/"
  cp -P "$build"/lib/libkiln_runtime.so* "$build/lib/libkiln_hal_hip.so" "$out/lib/"
  echo "packed into $out"
  exit 0
fi
dir=$(cd "${1:-$root/carry/overhead}" && pwd)
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bench() {  # NAME INPUT [extra kiln-benchmark flags]
  local name=$1 input=$2; shift 2
  timeout 60 "$dir/bin/kiln-benchmark" "$dir/$name.vmfb" --function=main \
    --plugin="$dir/lib/libkiln_hal_hip.so" --device=hip --input="$input" \
    --warmup=10 --iterations=100 "$@" | grep -E "latency|profile_ms"
}
for graphs in 1 0; do
  for row in scale:67108864xf32=0.5 tiny:1024xf32=0.5 softmax:4096x4096xf32=0.5; do
    echo "kiln ${row%%:*} graphs=$graphs:"
    KILN_HIP_GRAPHS=$graphs bench "${row%%:*}" "${row#*:}" --profile=20
  done
done
for row in scale:67108864xf32=0.5 tiny:1024xf32=0.5; do
  echo "kiln ${row%%:*} polling off:"
  KILN_HIP_SPIN_WAIT_US=0 bench "${row%%:*}" "${row#*:}"
done
timeout 120 python3 "$dir/torch_ops.py"

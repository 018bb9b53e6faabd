#!/usr/bin/env bash
# Host time per call of an all_reduce (f32 sum, 8 B to 1 MiB per rank, 2
# ranks) through Kiln's runtime, with the collective compiled as a kernel
# over symmetric windows and as an NCCL/RCCL library call, side by side in
# one run (issue 15): `kiln-run --repeat=R --time` (each rank times its own
# synchronous calls after the first; the ranks run in lockstep through the
# collective), the larger of the two ranks' medians.
#
#   here:  benchmarks/collective/all_reduce_calls.sh --pack BUILD_DIR
#          (-> carry/ar_calls; modules for cuda sm_90a)
#   GPU:   benchmarks/collective/all_reduce_calls.sh [carry/ar_calls] [R]
#
# On 2+ GPUs: compiled and NCCL with one rank per GPU in one process; on
# any GPU also compiled on two logical ranks of GPU 0 (NCCL takes one GPU
# per rank).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sizes="8 64 512 4096 32768 262144 1048576"
if [ "${1:-}" = "--pack" ]; then
  build=${2:?usage: all_reduce_calls.sh --pack BUILD_DIR}
  out=$root/carry/ar_calls
  rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
  for bytes in $sizes; do
    n=$((bytes / 4))
    cat >"$out/ar_$bytes.mlir" <<MLIR
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<${n}xf32>) -> tensor<${n}xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = sum : tensor<${n}xf32> -> tensor<${n}xf32>
  return %0 : tensor<${n}xf32>
}
MLIR
    "$build/bin/kiln-compile" "$out/ar_$bytes.mlir" --target=cuda \
      --cuda-chip=sm_90a --collective-kernel-max-bytes=1048576 \
      -o "$out/ar_${bytes}_compiled.vmfb"
    "$build/bin/kiln-compile" "$out/ar_$bytes.mlir" --target=cuda \
      --cuda-chip=sm_90a --collective-kernel-max-bytes=0 \
      -o "$out/ar_${bytes}_nccl.vmfb"
  done
  cp "$build/bin/kiln-run" "$out/bin/"
  cp -P "$build"/lib/libkiln_runtime.so* "$build/lib/libkiln_hal_hip.so" "$out/lib/"
  echo "packed into $out"
  exit 0
fi
dir=$(cd "${1:-$root/carry/ar_calls}" && pwd)
repeat=${2:-2001}
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NCCL_NVLS_ENABLE=0
# Median host time per call (us) of |module| on |devices...|: the larger of
# the ranks' medians; "fail" if the run failed.
per_call() {
  local module=$1; shift
  local log
  log=$(timeout 300 "$dir/bin/kiln-run" "$dir/$module" --function=main \
    --plugin="$dir/lib/libkiln_hal_hip.so" "$@" --input="$n"xf32=1 \
    --repeat="$repeat" --time 2>&1) || { echo fail; echo "$log" | tail -3 >&2; return; }
  echo "$log" | sed -n 's/.*time per call: median=\([0-9.]*\) us.*/\1/p' |
    sort -g | tail -1
}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
# One untimed run first: the GPUs' clocks ramp up after idling.
n=2
per_call ar_8_compiled.vmfb --device='hip://0?logical=1' \
  --device='hip://0?logical=1' >/dev/null
echo "all_reduce f32 sum, 2 ranks, median host time per call (us), $repeat calls"
printf "%10s %14s %14s %10s %18s\n" "bytes/rank" "compiled" "nccl" "ratio" "compiled, logical"
for bytes in $sizes; do
  n=$((bytes / 4))
  compiled=- nccl=- ratio=-
  if [ "${gpus:-0}" -ge 2 ]; then
    compiled=$(per_call "ar_${bytes}_compiled.vmfb" --device=hip://0 --device=hip://1)
    nccl=$(per_call "ar_${bytes}_nccl.vmfb" --device=hip://0 --device=hip://1)
    ratio=$(awk -v a="$compiled" -v b="$nccl" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
  fi
  logical=$(per_call "ar_${bytes}_compiled.vmfb" --device='hip://0?logical=1' --device='hip://0?logical=1')
  printf "%10s %14s %14s %10s %18s\n" "$bytes" "$compiled" "$nccl" "$ratio" "$logical"
done

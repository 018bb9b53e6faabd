#!/usr/bin/env bash
# Per-step time of the data-parallel training step (samples/data_parallel:
# a two-layer MLP's SGD step whose gradients and loss are summed over the
# ranks by three all_reduces), with the all_reduces as NCCL/RCCL library
# calls and as compiled collective kernels over symmetric windows, side by
# side in one run (issue 15). Every step's outputs are checked against
# numpy's step, and each rank times its own steps (`kiln-run --repeat=R
# --time`: from the call until its outputs are ready, after the first); the
# larger of the ranks' medians is the step time.
#
#   here:  benchmarks/collective/data_parallel_step.sh --pack BUILD_DIR
#          (-> carry/dp_step; compiles the sample for cuda sm_90a twice)
#   GPU:   benchmarks/collective/data_parallel_step.sh [carry/dp_step] [R]
#
# Variants: on 2+ GPUs `nccl` and `compiled`, one process (hip://0 and
# hip://1, a thread per rank) and two processes (file rendezvous); on any
# GPU `compiled, logical` (two logical ranks of GPU 0).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = "--pack" ]; then
  build=${2:?usage: data_parallel_step.sh --pack BUILD_DIR}
  out=$root/carry/dp_step
  rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
  for variant in nccl:0 compiled:1048576; do
    "$build/bin/kiln-compile" "$root/samples/data_parallel/train_step.mlir" \
      --target=cuda --cuda-chip=sm_90a \
      --collective-kernel-max-bytes="${variant#*:}" \
      -o "$out/train_step_${variant%%:*}.vmfb"
  done
  cp "$root"/samples/data_parallel/*.npy "$out/"
  cp "$build/bin/kiln-run" "$out/bin/"
  cp -P "$build"/lib/libkiln_runtime.so* "$build/lib/libkiln_hal_hip.so" "$out/lib/"
  echo "packed into $out"
  exit 0
fi
dir=$(cd "${1:-$root/carry/dp_step}" && pwd)
repeat=${2:-2001}
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NCCL_NVLS_ENABLE=0
cd "$dir"
inputs=(--function=train_step --plugin="$dir/lib/libkiln_hal_hip.so"
        --input=@x%r.npy --input=@y%r.npy --input=@w1.npy --input=@w2.npy
        --expected-output=@expected_w1.npy --expected-output=@expected_w2.npy
        --expected-output=@expected_loss.npy --atol=1e-5 --rtol=1e-4
        --repeat="$repeat" --time)

# The larger of the ranks' median step times in the logs on stdin.
slowest() {
  sed -n 's/.*time per call: median=\([0-9.]*\) us.*/\1/p' | sort -g | tail -1
}

# One process, a thread per rank on the given devices.
one_process() {
  local name=$1 module=$2; shift 2
  local log
  if ! log=$(timeout 300 bin/kiln-run "$module" "$@" "${inputs[@]}" 2>&1); then
    echo "$name: failed"; echo "$log" | tail -5; return
  fi
  printf "%-28s %8s us per step\n" "$name" "$(echo "$log" | slowest)"
}

# Two processes (hip://0 and hip://1) meeting through a file rendezvous.
two_processes() {
  local name=$1 module=$2
  local meet pids=() failed=0
  meet=$(mktemp -d)
  for r in 0 1; do
    timeout 300 bin/kiln-run "$module" --device=hip://$r --rank=$r \
      --world-size=2 --rendezvous=file:"$meet/rendezvous" "${inputs[@]}" \
      >"$meet/log$r" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  if [ $failed -ne 0 ]; then
    echo "$name: failed"; tail -3 "$meet/log0" "$meet/log1"
  else
    printf "%-28s %8s us per step\n" "$name" "$(cat "$meet/log0" "$meet/log1" | slowest)"
  fi
  rm -rf "$meet"
}

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
echo "data-parallel step, ${gpus:-0} GPU(s), $repeat steps per run (median step time)"
if [ "${gpus:-0}" -ge 2 ]; then
  one_process "nccl (1 process)" train_step_nccl.vmfb --device=hip://0 --device=hip://1
  one_process "compiled (1 process)" train_step_compiled.vmfb --device=hip://0 --device=hip://1
  two_processes "nccl (2 processes)" train_step_nccl.vmfb
  two_processes "compiled (2 processes)" train_step_compiled.vmfb
else
  echo "(nccl and 2-GPU variants skipped: they need 2 GPUs)"
fi
one_process "compiled, logical (1 GPU)" train_step_compiled.vmfb \
  --device='hip://0?logical=1' --device='hip://0?logical=1'

#!/usr/bin/env bash
# Per-step time of the data-parallel training step (samples/data_parallel:
# a two-layer MLP's SGD step whose gradients and loss are summed over the
# ranks by three all_reduces), with the all_reduces as NCCL/RCCL library
# calls and as compiled collective kernels over symmetric windows, side by
# side in one run (issue 15). Each variant's outputs are first checked
# against numpy's step; then the step is timed as the wall time of
# `kiln-run --repeat=R` minus that of `--repeat=1`, over R - 1 steps (each
# step's outputs come back to the host, as kiln-run reads them).
#
#   here:  benchmarks/collective/data_parallel_step.sh --pack BUILD_DIR
#          (-> carry/dp_step; compiles the sample for cuda sm_90a twice)
#   GPU:   benchmarks/collective/data_parallel_step.sh [carry/dp_step] [R]
#
# Variants: on 2+ GPUs `nccl` and `compiled` (hip://0 and hip://1, one
# process, one thread per rank) and `compiled, 2 processes` (file
# rendezvous); on any GPU `compiled, logical` (two logical ranks of GPU 0).
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
        --input=@x%r.npy --input=@y%r.npy --input=@w1.npy --input=@w2.npy)
expected=(--expected-output=@expected_w1.npy --expected-output=@expected_w2.npy
          --expected-output=@expected_loss.npy --atol=1e-5 --rtol=1e-4)
now_ns() { date +%s%N; }

# kiln-run of |module| with |devices...| (one process): checked once, then
# timed; prints the per-step time.
one_process() {
  local name=$1 module=$2; shift 2
  timeout 120 bin/kiln-run "$module" "$@" "${inputs[@]}" "${expected[@]}" \
    --repeat=3 >/tmp/dp_check.log 2>&1 ||
    { echo "$name: check failed"; tail -5 /tmp/dp_check.log; return; }
  local t0 t1 t2
  t0=$(now_ns)
  timeout 120 bin/kiln-run "$module" "$@" "${inputs[@]}" --repeat=1 >/dev/null
  t1=$(now_ns)
  timeout 300 bin/kiln-run "$module" "$@" "${inputs[@]}" --repeat="$repeat" >/dev/null
  t2=$(now_ns)
  awk -v name="$name" -v a=$((t1 - t0)) -v b=$((t2 - t1)) -v r="$repeat" \
    'BEGIN { printf "%-28s %8.1f us per step (%d steps; 1 step: %.0f ms of process)\n",
             name, (b - a) / (r - 1) / 1000, r - 1, a / 1e6 }'
}

# Two processes meeting through a file rendezvous.
two_processes() {
  local name=$1 module=$2 count=$3
  local meet
  meet=$(mktemp -d)
  local t0 t1
  t0=$(now_ns)
  for r in 0 1; do
    timeout 300 bin/kiln-run "$module" --device=hip://$r --rank=$r \
      --world-size=2 --rendezvous=file:"$meet" "${inputs[@]}" \
      --repeat="$count" >/tmp/dp_rank$r.log 2>&1 &
  done
  wait
  t1=$(now_ns)
  rm -rf "$meet"
  echo $((t1 - t0))
}

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
echo "data-parallel step, $gpus GPU(s), $repeat steps per timed run"
if [ "${gpus:-0}" -ge 2 ]; then
  one_process "nccl (1 process)" train_step_nccl.vmfb --device=hip://0 --device=hip://1
  one_process "compiled (1 process)" train_step_compiled.vmfb --device=hip://0 --device=hip://1
  a=$(two_processes x train_step_compiled.vmfb 1)
  b=$(two_processes x train_step_compiled.vmfb "$repeat")
  awk -v a="$a" -v b="$b" -v r="$repeat" 'BEGIN { printf "%-28s %8.1f us per step\n",
    "compiled (2 processes)", (b - a) / (r - 1) / 1000 }'
  a=$(two_processes x train_step_nccl.vmfb 1)
  b=$(two_processes x train_step_nccl.vmfb "$repeat")
  awk -v a="$a" -v b="$b" -v r="$repeat" 'BEGIN { printf "%-28s %8.1f us per step\n",
    "nccl (2 processes)", (b - a) / (r - 1) / 1000 }'
else
  echo "(nccl and 2-GPU variants skipped: they need 2 GPUs)"
fi
one_process "compiled, logical (1 GPU)" train_step_compiled.vmfb \
  --device='hip://0?logical=1' --device='hip://0?logical=1'

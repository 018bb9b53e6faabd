#!/usr/bin/env bash
# Runs the hip driver's GPU checks on a GPU machine from carried build
# outputs and prints one summary line ("gpu_check: PASS ..." or
# "gpu_check: FAIL ..."); exit status 0 only if everything passed.
#
#   build_tools/gpu_check.sh [DIR]      (DIR default: carry/hip)
#
# DIR is made on the build machine by `build_tools/gpu_check.sh --pack
# BUILD_DIR [DIR]`: bin/ (kiln_hal_cts, hip_stress_test, hip_platform_test,
# hip_collective_test, hip_ipc_test,
# kiln-run), lib/ (libkiln_hal_hip.so, libkiln_runtime.so*,
# libkiln_cts_kernels.so) and data/ (PTX kernels, the hip test module).
# Checks, each under `timeout` so a hang costs seconds:
#   1. the HAL conformance suite on `hip` (graphs on), then the command
#      buffer and executable suites again with graphs off (stream replay),
#      and the window tests on 3 logical ranks of GPU 0;
#   2. the hip stress tests (threads, out-of-order signals, injected failure);
#   3. the platform tests (missing libraries named; no crash) and the hip
#      device tests (URI options, executable target check; on 2+ GPUs peer
#      access and NCCL/RCCL channels, their errors and aborts), and the IPC
#      test (two processes on GPU 0 share device memory and a pinned
#      segment, as windows over NCCL/RCCL do);
#   3'. on machines with 2+ GPUs: the CTS collective tests on `hip` over
#      NCCL/RCCL (NCCL_NVLS_ENABLE=0), which must run, not skip; skipped
#      with the reason on one GPU;
#   4. kiln-run: the test module's functions on `hip` (its cuda:sm_80 PTX
#      variant) against the results `local` gives;
#   5. the tests/e2e corpus compiled for cuda, when packed next to DIR
#      (build_tools/e2e_device.py pack --out=carry/e2e; SPMD programs on one
#      GPU per rank, one process and one process per rank), against the lit
#      suite's expected values.
# GPU_CHECK_STAGES=cts,stress,platform,device,collectives,kiln-run,e2e (any
# subset, default all) picks stages, so that one device call can run what
# fits in it; the summary gives each stage's seconds.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" = "--pack" ]; then
  build=${2:?usage: gpu_check.sh --pack BUILD_DIR [DIR]}
  out=${3:-$root/carry/hip}
  rm -rf "$out" && mkdir -p "$out/bin" "$out/lib" "$out/data"
  cp "$build"/bin/{kiln_hal_cts,hip_stress_test,hip_platform_test,hip_collective_test,hip_ipc_test,kiln-run} "$out/bin/"
  cp -P "$build"/lib/libkiln_hal_hip.so "$build"/lib/libkiln_runtime.so* \
        "$build"/lib/libkiln_cts_kernels.so "$out/lib/"
  cp "$build"/tests/cts/cts_kernels_sm80.ptx \
     "$build"/tests/runtime/hip/hip_test_kernels.ptx \
     "$build"/tests/hip_test_module.vmfb "$out/data/"
  echo "packed $(du -sh "$out" | cut -f1) into $out"
  exit 0
fi

dir=$(cd "${1:-$root/carry/hip}" 2>/dev/null && pwd) || {
  echo "gpu_check: FAIL (no packed build at '${1:-$root/carry/hip}': make one" \
       "with build_tools/gpu_check.sh --pack BUILD_DIR)"
  exit 1
}
log=${GPU_CHECK_LOG:-/tmp/gpu_check}
mkdir -p "$log"
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KILN_HAL_DRIVER_PLUGINS="$dir/lib/libkiln_hal_hip.so"
export KILN_HIP_PLUGIN_PATH="$dir/lib/libkiln_hal_hip.so"
export KILN_CTS_KERNELS_PATH="$dir/lib/libkiln_cts_kernels.so"
export KILN_CTS_PTX_KERNELS_PATH="$dir/data/cts_kernels_sm80.ptx"
export KILN_HIP_TEST_PTX_PATH="$dir/data/hip_test_kernels.ptx"
# NCCL's NVLink SHARP (NVLS) stays off on these machines (TOOLCHAIN.md).
export NCCL_NVLS_ENABLE=0

failures=()
summary=()
stages=${GPU_CHECK_STAGES:-all}
[ "$stages" = all ] || summary+=("stages: $stages")
# Whether stage $1 was asked for (GPU_CHECK_STAGES).
want() { [ "$stages" = all ] || [[ ",$stages," == *",$1,"* ]]; }

# gtest NAME LOG: counts from a gtest log ("passed/failed/skipped").
gtest_counts() {
  local passed failed skipped
  passed=$(grep -c '^\[       OK \]' "$1")
  failed=$(grep -c '^\[  FAILED  \].*(' "$1")
  skipped=$(grep -c '^\[  SKIPPED \].*(' "$1")
  echo "$passed passed/$failed failed/$skipped skipped"
}

run_gtest() {  # NAME TIMEOUT COMMAND...
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$log/$name.log" 2>&1
  local rc=$?
  local counts
  counts=$(gtest_counts "$log/$name.log")
  summary+=("$name: $counts in $((SECONDS - start))s")
  if [ $rc -ne 0 ]; then
    failures+=("$name (exit $rc)")
    echo "--- $name failed (exit $rc); failing tests:"
    grep -E '^\[  FAILED  \]|Failure|error' "$log/$name.log" | head -40
  fi
}

command -v nvidia-smi >/dev/null && nvidia-smi -L
"$dir/bin/kiln-run" --list-devices 2>&1 | head -5

# The collective tests run in their own stage below (they need 2 GPUs).
want cts && run_gtest cts 120 env KILN_CTS_DEVICES=hip "$dir/bin/kiln_hal_cts" \
  --gtest_filter='-*Collective*'
want cts && run_gtest cts_replay 60 env KILN_CTS_DEVICES=hip KILN_HIP_GRAPHS=0 \
  "$dir/bin/kiln_hal_cts" --gtest_filter='*CommandBufferTest*:*ExecutableTest*'
# The window tests on one GPU: 3 logical ranks of GPU 0 (their PTX kernels
# write through the peer tables; windows over NCCL run in 'collectives').
want cts && run_gtest cts_windows 60 env KILN_CTS_DEVICES=hip KILN_CTS_RANKS=3 \
  KILN_CTS_RANK_OPTIONS=logical=1 "$dir/bin/kiln_hal_cts" --gtest_filter='*Window*'
want stress && run_gtest stress 90 "$dir/bin/hip_stress_test"
want platform && run_gtest platform 30 "$dir/bin/hip_platform_test"
want device && run_gtest device 180 "$dir/bin/hip_collective_test"
want device && run_gtest ipc 60 "$dir/bin/hip_ipc_test"

# Collectives need two GPUs.
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$gpus" -eq 0 ] && command -v rocm-smi >/dev/null &&
  gpus=$(rocm-smi --showid 2>/dev/null | grep -c '^GPU\[')
if ! want collectives; then
  :
elif [ "$gpus" -ge 2 ]; then
  # Mismatched collectives are detected only with collective_checks=1 (off
  # by default: it costs a host round trip per collective).
  run_gtest collectives 420 env KILN_CTS_DEVICES=hip "$dir/bin/kiln_hal_cts" \
    --gtest_filter='*Collective*:-*Mismatched*'
  run_gtest collective_checks 60 env KILN_CTS_DEVICES=hip \
    KILN_HIP_COLLECTIVE_CHECKS=1 "$dir/bin/kiln_hal_cts" \
    --gtest_filter='*Collective*Mismatched*'
  # A pass made only of skips proves nothing: the tests must have run.
  if ! grep -q '^\[       OK \] .*Collective' "$log/collectives.log"; then
    failures+=("collectives (no collective test ran on $gpus GPUs)")
    grep '^\[  SKIPPED \]\|Skipped' "$log/collectives.log" | head -5
  fi
else
  echo "collectives: skipped ($gpus GPU(s) here; the CTS collective tests need 2)"
  summary+=("collectives: skipped, $gpus GPU(s)")
fi

# kiln-run: the same calls on local (host variant) and hip (PTX variant).
module="$dir/data/hip_test_module.vmfb"
run_ok=0 run_total=0
kiln_run_case() {  # FUNCTION ARGS...
  local fn=$1
  shift
  run_total=$((run_total + 1))
  local expected actual
  expected=$(timeout 30 "$dir/bin/kiln-run" "$module" --function="$fn" \
               --device=local "$@" 2>&1 | grep '^result')
  actual=$(timeout 30 "$dir/bin/kiln-run" "$module" --function="$fn" \
             --device=hip "$@" 2>&1 | tee "$log/kiln-run-$fn.log" | grep '^result')
  if [ -n "$expected" ] && [ "$expected" = "$actual" ]; then
    run_ok=$((run_ok + 1))
    echo "kiln-run $fn on hip: $actual"
  else
    failures+=("kiln-run $fn")
    echo "--- kiln-run $fn: local gave '$expected', hip gave:"
    cat "$log/kiln-run-$fn.log"
  fi
}
if want kiln-run; then
  kiln_run_case add --input=2x3xf32=1,2,3,4,5,6 --input=2x3xf32=0.5,0.25,8,-4,10,100
  kiln_run_case add_bias --input=2x3xf32=1,2,3,4,5,6
  kiln_run_case fill
  summary+=("kiln-run: $run_ok/$run_total equal to local")
fi

# The e2e corpus compiled for cuda (build_tools/e2e_device.py pack, into
# E2E_PACK, default DIR/../e2e) against the lit suite's expected outputs.
e2e_pack=${E2E_PACK:-$dir/../e2e}
if ! want e2e; then
  :
elif [ -f "$e2e_pack/manifest.json" ]; then
  # SPMD programs run on one GPU per rank, in one process and in one
  # process per rank (NCCL between processes); those needing more GPUs
  # than the machine has are listed as not run. Runs share the machine
  # (each on GPUs no other run holds), E2E_JOBS (default: one per GPU) at a
  # time; every run is logged as it ends, so a cut-off stage still shows
  # what ran.
  jobs=${E2E_JOBS:-$(( gpus > 1 ? gpus : 1 ))}
  timeout 540 python3 -u "$root/build_tools/e2e_device.py" run \
    --kiln-run="$dir/bin/kiln-run" --device=hip --pack="$e2e_pack" \
    --devices="$gpus" --jobs="$jobs" --multi-process --timeout=60 \
    --verbose >"$log/e2e.log" 2>&1
  rc=$?
  grep '^FAIL' "$log/e2e.log" | head -40
  line=$(grep '^e2e on' "$log/e2e.log" | tail -n 1)
  [ -n "$line" ] || line="e2e: cut off after $(grep -c '^ok ' "$log/e2e.log") passing runs"
  summary+=("$line")
  [ $rc -eq 0 ] || failures+=("e2e (exit $rc)")
else
  summary+=("e2e: not packed")
fi

status=PASS
[ ${#failures[@]} -eq 0 ] || status=FAIL
line="gpu_check: $status ($(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g'))"
[ ${#failures[@]} -eq 0 ] || line="$line; failed: ${failures[*]}"
echo "$line"
[ "$status" = PASS ]

#!/usr/bin/env bash
# Issue 15's runs on a machine with 2 or more GPUs (nvidia-h200-x2 and up),
# packed here in one command and run there stage by stage, each stage under
# `timeout` (a device call is at most 10 minutes: run the stages over
# several calls with MULTI_GPU_STAGES). NCCL_NVLS_ENABLE=0 throughout.
#
#   here:  build_tools/multi_gpu.sh --pack BUILD_DIR
#          -> carry/hip (gpu_check), carry/e2e_spmd (the SPMD e2e programs
#             with collectives compiled as kernels, sm_90a), carry/winc
#             (gpu_window_collectives.py), carry/ar_calls, carry/dp_step,
#             carry/collective
#   GPU:   MULTI_GPU_STAGES=check,e2e,e2e_matrix,e2e_logical,latency,calls,bandwidth,step \
#          build_tools/multi_gpu.sh        (default: every stage)
#
# Stages:
#   check      gpu_check.sh's cts, device and collectives stages: the CTS
#              (its window tests on logical ranks too), hip_collective_test,
#              hip_ipc_test, and the CTS collective and window tests on `hip`
#              over NCCL (windows over NCCL channels: peer access within the
#              process);
#   e2e        SPMD e2e programs with compiled collectives (tests/e2e/spmd
#              and 40 two-rank programs of the matrix: sum, max, bitwise or,
#              gather, reduce_scatter over every type), one rank per GPU,
#              in one process and one process per rank (windows through
#              peer access, and through IPC handles);
#   e2e_matrix the whole collective matrix (tests/e2e/spmd_matrix), one rank
#              per GPU in one process;
#   e2e_logical every program as logical ranks spread over the GPUs (rank r
#              on GPU r mod N), so 3-, 4- and 8-rank programs run too;
#   latency    all_reduce f32 sum of 8 B to 1 MiB per rank: the compiled
#              kernel against NCCL's C API, device time in a graph and host
#              time of back-to-back calls (gpu_window_collectives.py --nccl);
#   calls      the same all_reduces through Kiln's runtime, compiled and
#              over NCCL: host time per call (all_reduce_calls.sh);
#   bandwidth  Kiln over NCCL against torch.distributed, 8 B to 1 GiB
#              (run_collective_benchmarks.py gpu);
#   step       the data-parallel training step, NCCL vs compiled
#              all_reduces (data_parallel_step.sh).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${1:-}" = "--pack" ]; then
  build=${2:?usage: multi_gpu.sh --pack BUILD_DIR}
  set -e
  build_tools/gpu_check.sh --pack "$build" carry/hip
  rm -rf carry/e2e_spmd
  /usr/bin/python3 build_tools/e2e_device.py pack --kiln-compile="$build/bin/kiln-compile" \
    --targets=cuda --out=carry/e2e_spmd --run-declared-unsupported \
    --only='^spmd(_matrix)?/((all_(reduce|gather)|reduce_scatter)_(?!.*library)|compiled|all_reduce_sum)' \
    --compile-flag=--cuda-chip=sm_90a \
    --compile-flag=--collective-kernel-max-bytes=1048576 | tail -1
  rm -rf carry/winc
  /usr/bin/python3 build_tools/gpu_window_collectives.py pack \
    --kiln-compile="$build/bin/kiln-compile" --out carry/winc --cuda-chip sm_90a
  benchmarks/collective/all_reduce_calls.sh --pack "$build"
  benchmarks/collective/data_parallel_step.sh --pack "$build"
  python3 benchmarks/collective/run_collective_benchmarks.py --pack "$build"
  du -sh carry/hip carry/e2e_spmd carry/winc carry/ar_calls carry/dp_step \
    carry/collective
  exit 0
fi

export NCCL_NVLS_ENABLE=0
stages=${MULTI_GPU_STAGES:-check,e2e,e2e_matrix,e2e_logical,latency,calls,bandwidth,step}
want() { [[ ",$stages," == *",$1,"* ]]; }
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
echo "multi_gpu: $gpus GPU(s); stages $stages"
if [ "${gpus:-0}" -lt 2 ]; then
  echo "multi_gpu: FAIL (needs 2 or more GPUs; this machine has ${gpus:-0})"
  exit 1
fi
status=0
stage() {  # NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  echo "=== $name"
  timeout "$limit" "$@"
  local rc=$?
  echo "=== $name: exit $rc in $((SECONDS - start)) s"
  [ $rc -eq 0 ] || status=1
}
plugin=$root/carry/hip/lib/libkiln_hal_hip.so
want check && stage check 540 env GPU_CHECK_STAGES=cts,device,collectives \
  build_tools/gpu_check.sh carry/hip
# The e2e stages: 114 two-rank programs, at 2-3.5 s a run on the hip driver
# (process start, NCCL set-up), take two device calls.
want e2e && stage "e2e: one rank per GPU, one process and one per rank" \
  560 python3 build_tools/e2e_device.py run --kiln-run=carry/hip/bin/kiln-run \
  --device=hip --pack=carry/e2e_spmd --plugin="$plugin" --devices="$gpus" \
  --multi-process --timeout=60 \
  --only='^spmd/|^spmd_matrix/(all_reduce_(sum|max|bitwise_or)|all_gather|reduce_scatter_sum)_[a-z0-9]+_g2\.mlir'
want e2e_matrix && stage "e2e: spmd_matrix/ one rank per GPU, one process" \
  560 python3 build_tools/e2e_device.py run --kiln-run=carry/hip/bin/kiln-run \
  --device=hip --pack=carry/e2e_spmd --plugin="$plugin" --devices="$gpus" \
  --timeout=60 --only='^spmd_matrix/'
want e2e_logical && stage "e2e: logical ranks over $gpus GPUs" 420 \
  python3 build_tools/e2e_device.py run --kiln-run=carry/hip/bin/kiln-run \
  --device=hip --pack=carry/e2e_spmd --plugin="$plugin" \
  --logical-gpus="$gpus" --timeout=60
want latency && stage latency 300 python3 build_tools/gpu_window_collectives.py \
  run --pack carry/winc --only='lat|sum_f32_r2$|max_i32' --gpus=2 --nccl --calls=500
want calls && stage calls 300 benchmarks/collective/all_reduce_calls.sh \
  carry/ar_calls 2001
want bandwidth && stage bandwidth 420 python3 \
  benchmarks/collective/run_collective_benchmarks.py gpu carry/collective \
  --gpus="$gpus" --op=all_reduce --max-bytes=1G
want step && stage step 300 benchmarks/collective/data_parallel_step.sh \
  carry/dp_step 2001
[ $status -eq 0 ] && echo "multi_gpu: PASS" || echo "multi_gpu: FAIL"
exit $status

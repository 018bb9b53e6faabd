#!/usr/bin/env bash
# The GPU benchmark suite (suite.py) in two steps, as gpu_check.sh:
#
#   here:  benchmarks/gpu/gpu_suite.sh --pack BUILD_DIR [PACK_DIR] [pack options]
#          (PACK_DIR default carry/gpu_suite; options: --small, --only=RE, --chip=sm_90a)
#   GPU:   benchmarks/gpu/gpu_suite.sh [PACK_DIR] [run options]
#          (--quick, --only=RE, --out=DIR, --budget-s=S; see suite.py run --help)
#
# On the GPU machine the pack's own copy of suite.py runs, under `timeout`
# so that a hang cannot outlive a 9-minute device call; the table is printed
# last, results.json and results.md go to --out (default $OUT).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = "--pack" ]; then
  build=${2:?usage: gpu_suite.sh --pack BUILD_DIR [PACK_DIR] [options]}
  shift 2
  out=$root/carry/gpu_suite
  if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then out=$1; shift; fi
  # Debian's python3 has numpy here (a python3 earlier on PATH may not).
  python=${PYTHON:-python3}
  [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ] && python=/usr/bin/python3
  exec "$python" "$root/benchmarks/gpu/suite.py" pack --build-dir "$build" --out "$out" "$@"
fi
pack=$root/carry/gpu_suite
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then pack=$1; shift; fi
exec timeout "${GPU_SUITE_TIMEOUT:-540}" python3 -u "$pack/suite.py" run "$pack" "$@"

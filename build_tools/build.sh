#!/usr/bin/env bash
# Configures and builds Kiln (compiler, runtime, tools, tests) into build/.
#   build_tools/build.sh [extra cmake args...]
# Environment: KILN_BUILD_DIR (default: build), KILN_JOBS (default: nproc).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${KILN_BUILD_DIR:-$root/build}
jobs=${KILN_JOBS:-$(nproc)}

if [ ! -f "$build_dir/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -G Ninja -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
fi
ninja -C "$build_dir" -j "$jobs"

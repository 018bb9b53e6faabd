#!/usr/bin/env bash
# Sets up, builds and runs every test Kiln has on this machine:
#   1. compiler lit tests (tests/compiler) and end-to-end tests (tests/e2e),
#   2. gtest suites (runtime unit tests, HAL conformance, compiler unit tests),
#   3. the runtime again under AddressSanitizer + UndefinedBehaviorSanitizer,
#   4. install + an out-of-tree build of samples/embed_c against the install.
# Exits non-zero on the first failing step. This is what CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${KILN_BUILD_DIR:-$root/build}
asan_dir=${KILN_ASAN_BUILD_DIR:-$root/build-asan}
jobs=${KILN_JOBS:-$(nproc)}
lit=/usr/lib/llvm-22/bin/lit

step() { printf '\n=== %s ===\n' "$*"; }

step "setup"
"$root/build_tools/setup.sh"

step "build ($build_dir)"
KILN_BUILD_DIR=$build_dir "$root/build_tools/build.sh"

step "lit: compiler and e2e"
"$lit" -sv "$build_dir/tests/compiler" "$build_dir/tests/e2e"

step "ctest"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"

step "runtime under ASan+UBSan ($asan_dir)"
if [ ! -f "$asan_dir/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$asan_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DKILN_BUILD_COMPILER=OFF -DKILN_ENABLE_SANITIZERS=ON >/dev/null
fi
ninja -C "$asan_dir" -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$asan_dir" --output-on-failure -j "$jobs" -L runtime

step "install + out-of-tree embedding sample"
"$root/build_tools/check_install.sh" "$build_dir"

echo
echo "All Kiln tests passed."

#!/usr/bin/env bash
# Sets up, builds and runs every test Kiln has on this machine:
#   1. compiler lit tests (tests/compiler) and end-to-end tests (tests/e2e),
#   2. gtest suites (runtime unit tests, HAL conformance, compiler unit tests),
#   3. the runtime again, built with clang-22 under AddressSanitizer +
#      UndefinedBehaviorSanitizer (including -fsanitize=function), and the
#      libFuzzer harnesses of tests/fuzz, each fuzzed for KILN_FUZZ_SECONDS
#      (default 25),
#   4. the compiler built with clang-22 under ASan + UBSan and its libFuzzer
#      harnesses (tests/fuzz/compile_fuzzer.cc, parameters_fuzzer.cc) fuzzed
#      for KILN_FUZZ_SECONDS each,
#   5. a configure with -DKILN_BUILD_TESTS=OFF (what embedders build),
#   6. install + an out-of-tree build of samples/embed_c against the install.
# Exits non-zero on the first failing step. This is what CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${KILN_BUILD_DIR:-$root/build}
asan_dir=${KILN_ASAN_BUILD_DIR:-$root/build-asan-clang}
fuzzcc_dir=${KILN_FUZZ_CC_BUILD_DIR:-$root/build-fuzz-cc}
fuzz_seconds=${KILN_FUZZ_SECONDS:-25}
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

step "runtime under ASan+UBSan, clang-22, with the fuzzers ($asan_dir)"
if [ ! -f "$asan_dir/build.ninja" ]; then
  CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$root" -B "$asan_dir" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_BUILD_COMPILER=OFF \
    -DKILN_ENABLE_SANITIZERS=ON -DKILN_BUILD_FUZZERS=ON >/dev/null
fi
ninja -C "$asan_dir" -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$asan_dir" --output-on-failure -j "$jobs" -L runtime

# Fuzzes bin/kiln_fuzz_HARNESS of BUILD_DIR for $fuzz_seconds from the
# checked-in seeds (read only) and the build folder's corpus (new inputs);
# a failure prints the log's tail and leaves the input in
# BUILD_DIR/fuzz/HARNESS-crash-*.
fuzz() {
  local dir=$1 harness=$2
  shift 2
  local corpus="$dir/fuzz/corpus/$harness" log="$dir/fuzz/$harness.log"
  mkdir -p "$corpus"
  if ! "$dir/bin/kiln_fuzz_$harness" -max_total_time="$fuzz_seconds" "$@" \
      -print_final_stats=1 -artifact_prefix="$dir/fuzz/$harness-" \
      "$corpus" "$root/tests/fuzz/corpus/$harness" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: kiln_fuzz_$harness failed (log: $log)"
    exit 1
  fi
  echo "fuzz $harness: $(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)"
}

step "fuzz the runtime's inputs (${fuzz_seconds}s per harness)"
for harness in module npy values; do
  fuzz "$asan_dir" "$harness" -timeout=10 -rss_limit_mb=2048
done

step "the compiler's fuzz harnesses, clang-22 with ASan+UBSan (${fuzz_seconds}s each; $fuzzcc_dir)"
# The compiler alone (no runtime), instrumented; libMLIR/libLLVM/lld are
# Debian's and uninstrumented, so LLVM's allocator poisoning is off
# (docs/testing.md).
if [ ! -f "$fuzzcc_dir/build.ninja" ]; then
  CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$root" -B "$fuzzcc_dir" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_BUILD_RUNTIME=OFF \
    -DKILN_BUILD_FUZZERS=ON >/dev/null
fi
ninja -C "$fuzzcc_dir" -j "$jobs" kiln_fuzz_compile kiln_fuzz_parameters
for harness in compile parameters; do
  ASAN_OPTIONS=allow_user_poisoning=0 fuzz "$fuzzcc_dir" "$harness" \
    -timeout=20 -rss_limit_mb=3072
done

step "configure without tests (-DKILN_BUILD_TESTS=OFF)"
cmake -G Ninja -S "$root" -B "$build_dir-no-tests" -DKILN_BUILD_TESTS=OFF \
  -DKILN_BUILD_COMPILER=OFF >/dev/null

step "install + out-of-tree embedding sample"
"$root/build_tools/check_install.sh" "$build_dir"

echo
echo "All Kiln tests passed."

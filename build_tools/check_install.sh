#!/usr/bin/env bash
# Installs a build into a scratch prefix, builds samples/embed_c out of tree
# against it with find_package(Kiln), compiles samples/embed_c/add.mlir with the
# installed kiln-compile and runs the embedding program on it.
#   build_tools/check_install.sh <build-dir>
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:?usage: check_install.sh <build-dir>}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -G Ninja -S "$root/samples/embed_c" -B "$work/embed" \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
ninja -C "$work/embed" >/dev/null
"$work/prefix/bin/kiln-compile" "$root/samples/embed_c/add.mlir" --target=host \
  -o "$work/add.vmfb"
out=$(LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" \
  "$work/embed/embed_c" "$work/add.vmfb")
echo "$out"
# add.mlir computes a + 10 * b; embed_c passes 1..6 for both inputs.
grep -q "output 0: 2x3xf32 = 11 22 33 44 55 66" <<<"$out" || {
  echo "check_install.sh: unexpected output from the installed embed_c" >&2
  exit 1
}
echo "check_install.sh: installed tools, library and headers work"

# The out-of-tree driver sample: build samples/custom_driver against the
# installed headers only, load it into the installed kiln-run with --plugin
# and run the same module on its `sample` device.
cmake -G Ninja -S "$root/samples/custom_driver" -B "$work/custom_driver" \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
ninja -C "$work/custom_driver" >/dev/null
out=$("$work/prefix/bin/kiln-run" "$work/add.vmfb" \
  --plugin="$work/custom_driver/libkiln_hal_sample.so" --device=sample \
  --function=main --input=2x3xf32=1,2,3,4,5,6 --input=2x3xf32=1,2,3,4,5,6)
echo "$out"
grep -q "result\[0\]: 2x3xf32=\[11 22 33\]\[44 55 66\]" <<<"$out" || {
  echo "check_install.sh: unexpected output from kiln-run on the sample driver" >&2
  exit 1
}
echo "check_install.sh: an out-of-tree driver plugin builds and runs against the install"

# The compiler library through the CMake package (Kiln::compiler): a C
# program compiles add.mlir in-process and checks the module's size.
if [ -f "$work/prefix/include/kiln/compiler.h" ]; then
  mkdir -p "$work/compile_c"
  cat > "$work/compile_c/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(compile_c C)
find_package(Kiln REQUIRED)
add_executable(compile_c main.c)
target_link_libraries(compile_c PRIVATE Kiln::compiler)
CMAKE
  cat > "$work/compile_c/main.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "kiln/compiler.h"
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "rb");
  static char text[1 << 16];
  size_t n = f ? fread(text, 1, sizeof(text), f) : 0;
  char error[256];
  const char* flags[] = {"--target=host"};
  kiln_compiler_session_t* s = kiln_compiler_session_create(flags, 1, error, sizeof(error));
  if (!s) { fprintf(stderr, "%s\n", error); return 1; }
  kiln_compiler_output_t* out = kiln_compiler_compile(s, text, n, argv[1]);
  size_t size = 0;
  int ok = kiln_compiler_output_ok(out) && kiln_compiler_output_module(out, &size) && size > 0;
  printf("compiled %s: %s (%zu bytes)\n", argv[1], ok ? "ok" : "failed", size);
  kiln_compiler_output_destroy(out);
  kiln_compiler_session_destroy(s);
  return ok ? 0 : 1;
}
C
  cmake -G Ninja -S "$work/compile_c" -B "$work/compile_c/build" \
    -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
  ninja -C "$work/compile_c/build" >/dev/null
  "$work/compile_c/build/compile_c" "$root/samples/embed_c/add.mlir"
  echo "check_install.sh: the installed compiler library works through find_package(Kiln)"
fi

# The kiln Python package from the install (builds that have it): the
# installed module finds the installed libkiln_runtime.so on its own.
pydir=$(sed -n 's/^KILN_PYTHON_INSTALL_DIR:STRING=//p' "$build_dir/CMakeCache.txt")
python=$(sed -n 's/^Python3_EXECUTABLE:FILEPATH=//p' "$build_dir/CMakeCache.txt")
if [ -n "$pydir" ] && [ -n "$python" ]; then
  out=$(cd "$work" && PYTHONPATH="$work/prefix/$pydir" "$python" -c '
import sys, numpy as np, kiln.runtime as rt
assert rt.__file__.startswith(sys.argv[1]), rt.__file__
a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
print("python:", rt.Device("local").load(sys.argv[2]).main(a, a).ravel().tolist())
try:
    import kiln.compiler as kc
except ImportError:  # a build without the compiler
    sys.exit(0)
module = rt.Device("local").load(kc.compile_file(sys.argv[3]))
print("python compiler:", module.main(a, a).ravel().tolist())
' "$work/prefix" "$work/add.vmfb" "$root/samples/embed_c/add.mlir")
  echo "$out"
  grep -q "python: \[11.0, 22.0, 33.0, 44.0, 55.0, 66.0\]" <<<"$out" || {
    echo "check_install.sh: unexpected output from the installed kiln package" >&2
    exit 1
  }
  if [ -d "$work/prefix/$pydir/kiln" ] && ls "$work/prefix/$pydir/kiln"/_compiler*.so >/dev/null 2>&1; then
    grep -q "python compiler: \[11.0, 22.0, 33.0, 44.0, 55.0, 66.0\]" <<<"$out" || {
      echo "check_install.sh: the installed kiln.compiler did not compile and run add.mlir" >&2
      exit 1
    }
  fi
  echo "check_install.sh: the installed kiln Python package works"
fi

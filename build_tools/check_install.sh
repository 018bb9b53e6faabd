#!/usr/bin/env bash
# Installs a build into a scratch prefix, builds samples/embed_c out of tree
# against it with find_package(Kiln), compiles a sample module with the
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
LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" \
  "$work/embed/embed_c" "$work/add.vmfb"

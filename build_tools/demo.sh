#!/usr/bin/env bash
# The main job: sets up and builds Kiln, compiles the sample programs in
# samples/ and runs them on the best available device (a GPU through the
# `hip` driver plugin when one is present and built, else the `local` CPU
# driver).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${KILN_BUILD_DIR:-$root/build}
bin=$build_dir/bin

"$root/build_tools/setup.sh"
KILN_BUILD_DIR=$build_dir "$root/build_tools/build.sh" >/dev/null
echo "Kiln built in $build_dir"

device=local
hip_plugin=$build_dir/lib/libkiln_hal_hip.so
if [ -f "$hip_plugin" ] && \
   KILN_HAL_DRIVER_PLUGINS=$hip_plugin "$bin/kiln-run" --list-devices 2>/dev/null | grep -q '^hip'; then
  device=hip
  export KILN_HAL_DRIVER_PLUGINS=$hip_plugin
fi
targets=host
[ "$device" = hip ] && targets=rocm,cuda,host
echo "Device: $device (module targets: $targets)"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo
echo "== samples/mlp: a 64-32-10 MLP with softmax =="
set -x
"$bin/kiln-compile" "$root/samples/mlp/mlp.mlir" --target=$targets -o "$out/mlp.vmfb"
"$bin/kiln-run" "$out/mlp.vmfb" --device=$device --function=predict \
  --input=@"$root/samples/mlp/input.npy"

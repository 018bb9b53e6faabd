#!/usr/bin/env bash
# kiln.torch models on the GPU next to PyTorch (torch_models.py).
#   [EXPORTED=DIR] benchmarks/gpu/torch_models.sh --pack BUILD_DIR [DIR]
#       build machine (DIR default carry/torch_models; needs BUILD_DIR/python
#       with kiln.compiler, python3-torch, and build_tools/gpu_check.sh --pack
#       BUILD_DIR carry/hip for the runtime and the hip plugin). EXPORTED:
#       a torch_export_models.py export folder (made on the GPU machine with
#       torch 2), compiled for cuda and run there too.
#   benchmarks/gpu/torch_models.sh [DIR]                    GPU machine
#       (builds kiln._runtime for its python3 with g++ and pybind11, then
#       runs the models; prints a Markdown table)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = "--pack" ]; then
  build=$(cd "${2:?usage: torch_models.sh --pack BUILD_DIR [DIR]}" && pwd)
  out=${3:-$root/carry/torch_models}
  rm -rf "$out" && mkdir -p "$out/src" "$out/include"
  cp "$root"/python/kiln/__init__.py "$root"/python/kiln/runtime.py \
     "$root"/python/src/runtime_module.cc "$out/src/"
  cp -r "$root"/runtime/include/kiln /usr/include/dlpack "$out/include/"
  cp "$root"/benchmarks/gpu/torch_models.py "$root"/tests/python/test_torch.py \
     "$root"/benchmarks/gpu/torch_export_models.py "$out/"
  # torch.export's programs (torch_export_models.py export on the GPU
  # machine), compiled here with their weights left to load time.
  if [ -n "${EXPORTED:-}" ]; then
    cp -r "$EXPORTED" "$out/export"
    PYTHONPATH="$build/python" /usr/bin/python3 "$root"/benchmarks/gpu/torch_export_models.py \
      check "$out/export" --target cuda --write-modules
  fi
  PYTHONPATH="$build/python:$root/tests/python" /usr/bin/python3 \
    "$root"/benchmarks/gpu/torch_models.py pack "$out/models"
  echo "packed into $out (run it with carry/hip next to it)"
  exit 0
fi
dir=$(cd "${1:-$root/carry/torch_models}" && pwd)
lib=$(cd "$dir/../hip/lib" && pwd)
mkdir -p "$dir/pkg/kiln"
cp "$dir"/src/__init__.py "$dir"/src/runtime.py "$dir/pkg/kiln/"
ext=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
g++ -O2 -shared -fPIC -std=c++17 "$dir/src/runtime_module.cc" -I"$dir/include" \
  -I"$(python3 -c 'import pybind11; print(pybind11.get_include())')" \
  -I"$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")" \
  -L"$lib" -lkiln_runtime -Wl,-rpath,"$lib" -o "$dir/pkg/kiln/_runtime$ext"
cd "$dir"
if [ -f export/manifest.json ]; then
  PYTHONPATH="$dir/pkg:$dir" timeout 200 python3 torch_export_models.py run export
fi
PYTHONPATH="$dir/pkg:$dir" timeout 500 python3 torch_models.py run "$dir/models"

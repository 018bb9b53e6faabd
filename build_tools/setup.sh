#!/usr/bin/env bash
# Installs every Debian package Kiln needs to build and test. Idempotent: quiet
# and fast when everything is already installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git python3 python3-numpy
  python3-dev pybind11-dev
  # DLPack's header: the Python package shares tensors in place.
  libdlpack-dev
  # kiln.torch's tests trace models with PyTorch (Debian's 1.13, torch.fx).
  python3-torch
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  lld-22 liblld-22-dev clang-22 libclang-rt-22-dev
  libflatbuffers-dev flatbuffers-compiler
  googletest libgtest-dev libgmock-dev
  zlib1g-dev libzstd-dev libedit-dev libxml2-dev libcurl4-openssl-dev
  rocm-device-libs libamdhip64-5 libamdhip64-dev
  # numpy's BLAS for the CPU benchmarks' peer (it switches numpy from the
  # reference BLAS through alternatives; the e2e generator computes its
  # references in float64, so they do not depend on it).
  libopenblas0-pthread
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup.sh: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup.sh: done"

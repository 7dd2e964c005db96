#!/usr/bin/env bash
# Installs what the course needs on Debian or Ubuntu (run as root, or with sudo), besides the
# CUDA Toolkit itself: CMake, a C++ compiler and GoogleTest; with --docs also Doxygen, MathJax,
# gnuplot, and Chromium with Selenium for the site and its check. Where the toolkit lacks
# cuobjdump and nvdisasm (a trimmed install; the technique tests read SASS with them), they come
# from NVIDIA's wheels on PyPI into /opt/course-cuda-binutils, linked from /usr/local/bin.
# Usage: tools/install-deps.sh [--docs]
set -euo pipefail
packages=(cmake make g++ libgtest-dev)
if [ "${1:-}" = "--docs" ]; then
  packages+=(doxygen libjs-mathjax fonts-mathjax gnuplot-nox chromium chromium-driver python3-selenium)
fi
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "installed: ${packages[*]}"

cuda_bin=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
if ! command -v cuobjdump >/dev/null 2>&1 && [ ! -x "$cuda_bin/cuobjdump" ]; then
  target=/opt/course-cuda-binutils
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$target" \
    "nvidia-cuda-cuobjdump==13.2.51" "nvidia-cuda-nvdisasm==13.2.51"
  for tool in cuobjdump nvdisasm; do
    ln -sf "$(find "$target" -name "$tool" -type f | head -n 1)" "/usr/local/bin/$tool"
  done
  echo "installed: cuobjdump and nvdisasm from PyPI ($(cuobjdump --version | tail -n 1))"
fi

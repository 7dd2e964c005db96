#!/usr/bin/env bash
# Installs what the course needs on Debian or Ubuntu (run as root, or with sudo), besides the
# CUDA Toolkit itself: CMake, a C++ compiler and GoogleTest; with --docs also Doxygen, MathJax,
# gnuplot, and Chromium with Selenium for the site and its check.
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

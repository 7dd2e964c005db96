#!/usr/bin/env bash
# Gradescope's image setup (Ubuntu 22.04 base image): what tools/grade-submission needs to
# build and grade the course. Runs once, as root, when the autograder is uploaded.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends ca-certificates wget gnupg python3 git cmake g++ make \
  libgtest-dev binutils
# CMake >= 3.25: Ubuntu 22.04 has 3.22, so take Kitware's build from PyPI.
if ! cmake --version | awk 'NR==1 { split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 25)) }'; then
  apt-get install -y -q --no-install-recommends python3-pip
  python3 -m pip install --quiet "cmake>=3.25"
fi
# The CUDA Toolkit (nvcc, CUPTI, cuobjdump) from NVIDIA's repository; no driver: there is no GPU.
. /etc/os-release
distro="ubuntu${VERSION_ID/./}"
wget -q "https://developer.download.nvidia.com/compute/cuda/repos/${distro}/x86_64/cuda-keyring_1.1-1_all.deb"
dpkg -i cuda-keyring_1.1-1_all.deb && rm cuda-keyring_1.1-1_all.deb
apt-get update -q
apt-get install -y -q --no-install-recommends cuda-nvcc-13-0 cuda-cudart-dev-13-0 cuda-cupti-dev-13-0 \
  cuda-cuobjdump-13-0 cuda-nvdisasm-13-0 cuda-compute-sanitizer-13-0
ln -sfn /usr/local/cuda-13.0 /usr/local/cuda
chmod +x /autograder/source/run_autograder

// Reference solution of chapter 09, exercise 1: warps of even elements and warps of odd ones.
#include "instructions.h"

namespace {

__global__ void shade_uniform_kernel(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int lane = threadIdx.x % 32;
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  // Warps 2m and 2m + 1 share the 64 elements 64m .. 64m + 63: the first takes the even ones,
  // the second the odd ones, so the branch below is the same for all 32 lanes of a warp.
  const int parity = warp % 2;
  const long long i = 64LL * (warp / 2) + 2 * lane + parity;
  if (i >= n) return;
  if (parity == 0) {
    out[i] = even_path(in[i]);
  } else {
    out[i] = odd_path(in[i]);
  }
}

}  // namespace

void shade_uniform(const float* in, float* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // One thread per element, rounded up to whole pairs of warps.
  const long long threads = (static_cast<long long>(n) + 63) / 64 * 64;
  shade_uniform_kernel<<<static_cast<unsigned>((threads + 255) / 256), 256, 0, stream>>>(in, out, n);
}

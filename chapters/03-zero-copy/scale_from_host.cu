// Chapter 03, exercise 2: a coalesced kernel over mapped host memory. Edit this file only.
// Read README.md beside it first; tests: ctest --preset student -R 03-zero-copy
#include "zero_copy.h"

namespace {

__global__ void scale_from_host_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  // TODO(1): A grid-stride loop in which consecutive threads handle consecutive elements:
  //          out[i] = 2.0f * in[i] + 1.0f. Each element of `in` crosses the bus on every
  //          read, so read it exactly once.
}

}  // namespace

void scale_from_host(const float* mapped_in, float* device_out, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  // TODO(2): Launch enough blocks to keep many reads in flight (e.g. a few blocks per SM, or
  //          one thread per element): the bus latency is long.
  scale_from_host_kernel<<<1, 1, 0, stream>>>(mapped_in, device_out, n);
}

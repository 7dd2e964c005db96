// A kernel for the support library's own tests (support_unit_test.cpp): every lane of a warp
// reads one float through a generic pointer (SASS LD, not LDS or LDG), from the block's shared
// tile where bit `lane` of `shared_lanes` is set, from global memory otherwise. Whether CUPTI
// counts such a load's threads by the memory each one reached, or a whole warp by one lane's,
// decides whether a counted rule can be fooled by a single shared lane (course/executed.h).
#include <cuda_runtime.h>

#include "course/cuda_check.h"

namespace {
__global__ void read_through_generic_pointers(const float* global_in, float* out, unsigned shared_lanes) {
  __shared__ float tile[32];
  const unsigned lane = threadIdx.x % 32;
  tile[lane] = static_cast<float>(lane);
  __syncthreads();
  const unsigned i = blockIdx.x * 32 + lane;
  // volatile: the address space of the pointer is not known where it is read, so the read is a
  // generic LD whatever the compiler could prove otherwise.
  const float* volatile from = ((shared_lanes >> lane) & 1u) ? &tile[lane] : &global_in[i];
  out[i] = *from;
}
}  // namespace

// Blocks of one warp each; `global_in` and `out` hold 32 x blocks floats.
void launch_generic_reads(const float* global_in, float* out, unsigned shared_lanes, int blocks, cudaStream_t stream) {
  read_through_generic_pointers<<<blocks, 32, 0, stream>>>(global_in, out, shared_lanes);
  CUDA_CHECK_LAUNCH("read_through_generic_pointers");
}

// Chapter 07, exercise 2 (stretch, compute capability 9.0+): bulk asynchronous copies.
// Edit this file only. Read README.md beside it first.
#include <cuda/barrier>
#include <cuda/ptx>

#include "pipeline.h"

__global__ void mirror_tiles_bulk_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  // Bulk copies (cp.async.bulk) exist from compute capability 9.0 on; this chapter's build
  // also targets older GPUs, so keep the Hopper code inside this #if.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // TODO(1): Declare kStages tiles of kPipelineTileFloats floats in shared memory, aligned to
  //          16 bytes, and one cuda::barrier<cuda::thread_scope_block> per stage. Thread 0
  //          initialises each barrier with an expected arrival count of 1, then
  //          __syncthreads().

  // TODO(2): To start the copy of a whole tile into stage s, thread 0 calls
  //          cuda::device::memcpy_async_tx(dst, src, cuda::aligned_size_t<16>(bytes), bar[s])
  //          and then cuda::device::barrier_arrive_tx(bar[s], 1, bytes). The last, partial
  //          tile of the array is not a multiple of 16 bytes: arrive on its barrier without
  //          copying, and read that tile straight from global memory.

  // TODO(3): Start the first kStages tiles, then loop over this block's tiles: wait for the
  //          stage's phase (it flips each time a stage is reused) by polling
  //          cuda::ptx::mbarrier_try_wait_parity(cuda::device::barrier_native_handle(bar[s]), phase)
  //          until it returns true (bar[s].wait_parity(phase) also works, more slowly: README),
  //          compute with the given mirror_tile_part (pipeline.h), __syncthreads(), and let
  //          thread 0 start the copy kStages tiles ahead.
#endif
}

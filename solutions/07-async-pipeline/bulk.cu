// Reference solution of chapter 07, exercise 2: one bulk asynchronous copy per tile (the
// Hopper copy engine behind cp.async.bulk), completing on a shared-memory barrier.
#include <cuda/barrier>
#include <cuda/ptx>

#include "pipeline.h"
#ifdef COURSE_REFERENCE_VARIANTS  // the calibration program's build only
#include "pipeline_variants.h"
#endif

// Stages of 4 KiB each: how many bytes one SM keeps in flight. A faster memory needs more of them
// in flight to stay busy (see the README's table). (The calibration program builds other counts.)
#ifndef REFERENCE_BULK_STAGES
#define REFERENCE_BULK_STAGES 10
#endif

namespace {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
using Barrier = cuda::barrier<cuda::thread_scope_block>;

template <int S>
__device__ __forceinline__ void bulk_body(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  __shared__ alignas(128) float tiles[S][kPipelineTileFloats];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ Barrier barriers[S];
  const size_t tile_count = (n + kPipelineTileFloats - 1) / kPipelineTileFloats;

  if (threadIdx.x == 0) {
    // One arrival per phase: thread 0's, which also announces the bytes to expect.
    for (int s = 0; s < S; ++s) init(&barriers[s], 1);
    // Make the initialised barriers visible to the copy engine (the async proxy).
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  __syncthreads();

  // Thread 0 only. A whole tile is one 4 KiB bulk copy; the partial last tile of the array
  // (not a multiple of 16 bytes) is read from global memory instead, so its phase completes
  // with a plain arrival.
  auto start_copy = [&](size_t tile, int stage) {
    if (tile >= tile_count) return;
    const size_t start = tile * kPipelineTileFloats;
    if (n - start >= kPipelineTileFloats) {
      constexpr unsigned kBytes = kPipelineTileFloats * sizeof(float);
      cuda::device::memcpy_async_tx(tiles[stage], in + start, cuda::aligned_size_t<16>(kBytes), barriers[stage]);
      (void)cuda::device::barrier_arrive_tx(barriers[stage], 1, kBytes);
    } else {
      (void)barriers[stage].arrive();
    }
  };

  if (threadIdx.x == 0)
    for (int s = 0; s < S; ++s) start_copy(blockIdx.x + static_cast<size_t>(s) * gridDim.x, s);

  int stage = 0;
  unsigned use = 0;  // how many times every stage has been used so far (the phase parity)
  for (size_t tile = blockIdx.x; tile < tile_count; tile += gridDim.x) {
    barriers[stage].wait_parity(use & 1);
    const size_t start = tile * kPipelineTileFloats;
    const int len = static_cast<int>(n - start < kPipelineTileFloats ? n - start : kPipelineTileFloats);
    // Two calls, not one with a pointer chosen at run time: a pointer that may be shared or
    // global compiles to generic loads (LD), slower than the shared-memory loads (LDS) that a
    // pointer known to be shared gets.
    if (len == kPipelineTileFloats)
      mirror_tile_part(tiles[stage], len, out, start);
    else
      mirror_tile_part(in + start, len, out, start);  // the partial last tile, never copied
    __syncthreads();  // every thread is done with this stage before the copy engine refills it
    if (threadIdx.x == 0) start_copy(tile + static_cast<size_t>(S) * gridDim.x, stage);
    if (++stage == S) {
      stage = 0;
      ++use;
    }
  }
}
#endif

#ifdef COURSE_REFERENCE_VARIANTS
template <int S>
__global__ void __launch_bounds__(kPipelineThreads) bulk_kernel(const float* __restrict__ in, float* __restrict__ out,
                                                                size_t n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  bulk_body<S>(in, out, n);
#else
  __trap();
#endif
}

template <int S>
void launch_bulk(const float* in, float* out, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  bulk_kernel<S><<<pipeline_grid_size(), kPipelineThreads, 0, stream>>>(in, out, n);
}
#endif
}  // namespace

__global__ void __launch_bounds__(kPipelineThreads)
    mirror_tiles_bulk_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  bulk_body<REFERENCE_BULK_STAGES>(in, out, n);
#else
  __trap();  // never launched below compute capability 9.0 (the tests check first)
#endif
}

#ifdef COURSE_REFERENCE_VARIANTS
void mirror_tiles_bulk_stages(int stages, const float* in, float* out, size_t n, cudaStream_t stream) {
  switch (stages) {
    case 4: return launch_bulk<4>(in, out, n, stream);
    case 8: return launch_bulk<8>(in, out, n, stream);
    case 10: return launch_bulk<10>(in, out, n, stream);
    case 11: return launch_bulk<11>(in, out, n, stream);
    default: return launch_bulk<4>(in, out, 0, stream);  // unsupported: do nothing
  }
}
#endif

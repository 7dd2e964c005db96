// Reference solution of chapter 07, exercise 2: one bulk asynchronous copy per tile (the
// Hopper copy engine behind cp.async.bulk), completing on a shared-memory barrier.
#include <cuda/barrier>
#include <cuda/ptx>

#include "pipeline.h"
#ifdef COURSE_REFERENCE_VARIANTS  // the calibration program's build only
#include "pipeline_variants.h"
#endif

// Stages of 4 KiB each: how many bytes one SM keeps in flight. A faster memory needs more of them
// in flight to stay busy (see the README's table). Waiting on a stage with a plain try_wait loop
// rather than cuda::barrier::wait_parity: on an H200 0.94-0.96 of the copy peak against 0.79.
// (The calibration program builds the other choices.)
#ifndef REFERENCE_BULK_STAGES
#define REFERENCE_BULK_STAGES 10
#endif
#ifndef REFERENCE_BULK_TILES_PER_STAGE
#define REFERENCE_BULK_TILES_PER_STAGE 1
#endif
#ifndef REFERENCE_BULK_SPIN
#define REFERENCE_BULK_SPIN true
#endif

namespace {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
using Barrier = cuda::barrier<cuda::thread_scope_block>;

// Waits for a stage's phase by polling mbarrier.try_wait (which suspends the thread in hardware
// for a while). Barrier::wait_parity does the same but, after 16 polls, also reads the global
// timer to decide on backing off: time that a stream of short waits cannot spare.
__device__ __forceinline__ void wait_for_phase(Barrier& barrier, unsigned parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(cuda::device::barrier_native_handle(barrier), parity)) {
  }
}

// S stages of T tiles each: one bulk copy per whole tile, all of a stage's copies completing on
// the stage's barrier, and one block-wide barrier per stage (not per tile) before its refill.
// kSpin: wait with wait_for_phase rather than Barrier::wait_parity.
template <int S, int T, bool kSpin>
__device__ __forceinline__ void bulk_body(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  __shared__ alignas(128) float tiles[S][T][kPipelineTileFloats];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ Barrier barriers[S];
  const size_t tile_count = (n + kPipelineTileFloats - 1) / kPipelineTileFloats;
  const size_t group_count = (tile_count + T - 1) / T;  // a stage holds one group of T tiles

  if (threadIdx.x == 0) {
    // One arrival per phase: thread 0's, which also announces the bytes to expect.
    for (int s = 0; s < S; ++s) init(&barriers[s], 1);
    // Make the initialised barriers visible to the copy engine (the async proxy).
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  __syncthreads();

  // Thread 0 only. A whole tile is one 4 KiB bulk copy; the partial last tile of the array
  // (not a multiple of 16 bytes) is read from global memory instead, so a stage without whole
  // tiles completes its phase with a plain arrival.
  auto start_copies = [&](size_t group, int stage) {
    if (group >= group_count) return;
    constexpr unsigned kTileBytes = kPipelineTileFloats * sizeof(float);
    unsigned bytes = 0;
    for (int t = 0; t < T; ++t) {
      const size_t start = (group * T + t) * kPipelineTileFloats;
      if (start >= n || n - start < kPipelineTileFloats) break;
      cuda::device::memcpy_async_tx(tiles[stage][t], in + start, cuda::aligned_size_t<16>(kTileBytes), barriers[stage]);
      bytes += kTileBytes;
    }
    if (bytes > 0)
      (void)cuda::device::barrier_arrive_tx(barriers[stage], 1, bytes);
    else
      (void)barriers[stage].arrive();
  };

  if (threadIdx.x == 0)
    for (int s = 0; s < S; ++s) start_copies(blockIdx.x + static_cast<size_t>(s) * gridDim.x, s);

  int stage = 0;
  unsigned use = 0;  // how many times every stage has been used so far (the phase parity)
  for (size_t group = blockIdx.x; group < group_count; group += gridDim.x) {
    if constexpr (kSpin)
      wait_for_phase(barriers[stage], use & 1);
    else
      barriers[stage].wait_parity(use & 1);
#pragma unroll
    for (int t = 0; t < T; ++t) {
      const size_t start = (group * T + t) * kPipelineTileFloats;
      if (start >= n) break;
      const int len = static_cast<int>(n - start < kPipelineTileFloats ? n - start : kPipelineTileFloats);
      // Two calls, not one with a pointer chosen at run time: a pointer that may be shared or
      // global compiles to generic loads (LD), slower than the shared-memory loads (LDS) that a
      // pointer known to be shared gets.
      if (len == kPipelineTileFloats)
        mirror_tile_part(tiles[stage][t], len, out, start);
      else
        mirror_tile_part(in + start, len, out, start);  // the partial last tile, never copied
    }
    __syncthreads();  // every thread is done with this stage before the copy engine refills it
    if (threadIdx.x == 0) start_copies(group + static_cast<size_t>(S) * gridDim.x, stage);
    if (++stage == S) {
      stage = 0;
      ++use;
    }
  }
}
#endif

#ifdef COURSE_REFERENCE_VARIANTS
template <int S, int T, bool kSpin>
__global__ void __launch_bounds__(kPipelineThreads) bulk_kernel(const float* __restrict__ in, float* __restrict__ out,
                                                                size_t n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  bulk_body<S, T, kSpin>(in, out, n);
#else
  __trap();
#endif
}

template <int S, int T, bool kSpin>
void launch_bulk(const float* in, float* out, size_t n, cudaStream_t stream) {
  if (n > 0) bulk_kernel<S, T, kSpin><<<pipeline_grid_size(), kPipelineThreads, 0, stream>>>(in, out, n);
}
#endif
}  // namespace

__global__ void __launch_bounds__(kPipelineThreads)
    mirror_tiles_bulk_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  bulk_body<REFERENCE_BULK_STAGES, REFERENCE_BULK_TILES_PER_STAGE, REFERENCE_BULK_SPIN>(in, out, n);
#else
  __trap();  // never launched below compute capability 9.0 (the tests check first)
#endif
}

#ifdef COURSE_REFERENCE_VARIANTS
bool mirror_tiles_bulk_variant(int stages, int tiles_per_stage, bool spin, const float* in, float* out, size_t n,
                               cudaStream_t stream) {
  const auto is = [&](int s, int t, bool w) { return stages == s && tiles_per_stage == t && spin == w; };
  if (is(2, 1, true)) return launch_bulk<2, 1, true>(in, out, n, stream), true;
  if (is(4, 1, true)) return launch_bulk<4, 1, true>(in, out, n, stream), true;
  if (is(4, 1, false)) return launch_bulk<4, 1, false>(in, out, n, stream), true;
  if (is(8, 1, false)) return launch_bulk<8, 1, false>(in, out, n, stream), true;
  if (is(10, 1, false)) return launch_bulk<10, 1, false>(in, out, n, stream), true;
  if (is(11, 1, false)) return launch_bulk<11, 1, false>(in, out, n, stream), true;
  if (is(10, 1, true)) return launch_bulk<10, 1, true>(in, out, n, stream), true;
  if (is(11, 1, true)) return launch_bulk<11, 1, true>(in, out, n, stream), true;
  if (is(4, 2, true)) return launch_bulk<4, 2, true>(in, out, n, stream), true;
  if (is(5, 2, true)) return launch_bulk<5, 2, true>(in, out, n, stream), true;
  if (is(5, 2, false)) return launch_bulk<5, 2, false>(in, out, n, stream), true;
  if (is(3, 3, true)) return launch_bulk<3, 3, true>(in, out, n, stream), true;
  if (is(2, 4, true)) return launch_bulk<2, 4, true>(in, out, n, stream), true;
  return false;
}
#endif

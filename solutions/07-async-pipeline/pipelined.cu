// Reference solution of chapter 07, exercise 1: an S-stage pipeline of cuda::memcpy_async.
#include <cuda/pipeline>

#include "pipeline.h"
#ifdef COURSE_REFERENCE_VARIANTS  // the calibration program's build only
#include "pipeline_variants.h"
#endif

namespace {

// Ten stages keep 40 KiB in flight per SM: eight (32 KiB) cover DRAM latency at full bandwidth
// with a single block per SM on an H100, and the H200's faster memory gains from ten (0.924 of
// its copy peak with eight, 0.939 with ten or twelve; see the README's table).
// (tools/fixtures builds this file with fewer stages to check the thresholds.)
#ifndef REFERENCE_PIPELINE_STAGES
#define REFERENCE_PIPELINE_STAGES 10
#endif
constexpr int kStages = REFERENCE_PIPELINE_STAGES;

template <int S>
__device__ __forceinline__ void pipelined_body(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  __shared__ float4 tiles[S][kPipelineThreads];
  // A per-thread pipeline: each thread waits only for its own copies, and the block barrier
  // then makes everyone's part of the tile visible.
  auto pipe = cuda::make_pipeline();
  const size_t tile_count = (n + kPipelineTileFloats - 1) / kPipelineTileFloats;

  auto start_copy = [&](size_t tile, int stage) {
    pipe.producer_acquire();
    if (tile < tile_count) {
      const size_t first = tile * kPipelineTileFloats + 4 * threadIdx.x;
      if (first + 4 <= n) {
        cuda::memcpy_async(&tiles[stage][threadIdx.x], reinterpret_cast<const float4*>(in + first),
                           cuda::aligned_size_t<16>(sizeof(float4)), pipe);
      } else {
        float* dst = reinterpret_cast<float*>(&tiles[stage][threadIdx.x]);
        for (int i = 0; i < 4 && first + i < n; ++i) dst[i] = in[first + i];
      }
    }
    pipe.producer_commit();  // even when empty, so that batch k is always tile k
  };

  for (int s = 0; s < S - 1; ++s) start_copy(blockIdx.x + static_cast<size_t>(s) * gridDim.x, s);

  int stage = 0;
  for (size_t tile = blockIdx.x; tile < tile_count; tile += gridDim.x) {
    // The stage S - 1 steps ahead is the one the previous step finished with.
    start_copy(tile + static_cast<size_t>(S - 1) * gridDim.x, (stage + S - 1) % S);
    cuda::pipeline_consumer_wait_prior<S - 1>(pipe);
    __syncthreads();
    const size_t start = tile * kPipelineTileFloats;
    const int len = static_cast<int>(n - start < kPipelineTileFloats ? n - start : kPipelineTileFloats);
    mirror_tile_part(reinterpret_cast<const float*>(tiles[stage]), len, out, start);
    __syncthreads();  // all reads of this stage are done before it is refilled
    pipe.consumer_release();
    stage = (stage + 1) % S;
  }
}

template <int S>
__global__ void __launch_bounds__(kPipelineThreads) pipelined_kernel(const float* __restrict__ in,
                                                                     float* __restrict__ out, size_t n) {
  pipelined_body<S>(in, out, n);
}

#ifdef COURSE_REFERENCE_VARIANTS  // the calibration's launcher; the tests launch through the given code
template <int S>
void launch(const float* in, float* out, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  pipelined_kernel<S><<<pipeline_grid_size(), kPipelineThreads, 0, stream>>>(in, out, n);
}
#endif

}  // namespace

__global__ void __launch_bounds__(kPipelineThreads)
    mirror_tiles_pipelined_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  pipelined_body<kStages>(in, out, n);
}

#ifdef COURSE_REFERENCE_VARIANTS
void mirror_tiles_pipelined_stages(int stages, const float* in, float* out, size_t n, cudaStream_t stream) {
  switch (stages) {
    case 1: return launch<1>(in, out, n, stream);
    case 2: return launch<2>(in, out, n, stream);
    case 3: return launch<3>(in, out, n, stream);
    case 4: return launch<4>(in, out, n, stream);
    case 6: return launch<6>(in, out, n, stream);
    case 8: return launch<8>(in, out, n, stream);
    case 10: return launch<10>(in, out, n, stream);
    case 12: return launch<12>(in, out, n, stream);
    default: return launch<1>(in, out, 0, stream);  // unsupported: do nothing
  }
}
#endif

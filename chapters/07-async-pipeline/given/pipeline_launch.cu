// Given code: the launches of chapter 07 and the synchronous kernel. Not an exercise.
#include "pipeline.h"

__global__ void mirror_tiles_sync_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  __shared__ float tile[kPipelineTileFloats];
  const size_t tiles = (n + kPipelineTileFloats - 1) / kPipelineTileFloats;
  const int j = 4 * threadIdx.x;  // this thread's first element of the tile
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const size_t start = t * kPipelineTileFloats;
    const int len = static_cast<int>(n - start < kPipelineTileFloats ? n - start : kPipelineTileFloats);
    // Global -> registers -> shared: the loads must arrive before the stores can issue, and
    // nothing else overlaps them.
    if (j + 4 <= len) {
      *reinterpret_cast<float4*>(&tile[j]) = *reinterpret_cast<const float4*>(in + start + j);
    } else {
      for (int i = j; i < len; ++i) tile[i] = in[start + i];
    }
    __syncthreads();
    for (int i = j; i < j + 4 && i < len; ++i) out[start + i] = 0.5f * (tile[i] + tile[len - 1 - i]);
    __syncthreads();  // the next tile overwrites this one
  }
}

int pipeline_grid_size() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;  // the launch then reports the error
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 0;
  return sms;
}

void mirror_tiles_sync(const float* in, float* out, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  mirror_tiles_sync_kernel<<<pipeline_grid_size(), kPipelineThreads, 0, stream>>>(in, out, n);
}

void mirror_tiles_pipelined(const float* in, float* out, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  mirror_tiles_pipelined_kernel<<<pipeline_grid_size(), kPipelineThreads, 0, stream>>>(in, out, n);
}

void mirror_tiles_bulk(const float* in, float* out, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  mirror_tiles_bulk_kernel<<<pipeline_grid_size(), kPipelineThreads, 0, stream>>>(in, out, n);
}

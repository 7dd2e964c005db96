// The per-tile work of chapter 07, shared by the reference kernels.
#pragma once

#include "pipeline.h"

/// Computes and stores this thread's four elements of the tile that starts at `start` and has
/// `len` elements, from `tile` (shared memory, or global memory for a partial bulk tile).
__device__ __forceinline__ void mirror_tile_part(const float* tile, int len, float* __restrict__ out, size_t start) {
  const int j = 4 * threadIdx.x;
  if (len == kPipelineTileFloats) {
    // Whole tile: my float4 and its mirror image, which is the float4 at the other end.
    const float4 mine = *reinterpret_cast<const float4*>(tile + j);
    const float4 other = *reinterpret_cast<const float4*>(tile + kPipelineTileFloats - 4 - j);
    *reinterpret_cast<float4*>(out + start + j) =
        make_float4(0.5f * (mine.x + other.w), 0.5f * (mine.y + other.z), 0.5f * (mine.z + other.y),
                    0.5f * (mine.w + other.x));
  } else {
    for (int i = j; i < j + 4 && i < len; ++i) out[start + i] = 0.5f * (tile[i] + tile[len - 1 - i]);
  }
}

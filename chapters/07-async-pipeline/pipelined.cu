// Chapter 07, exercise 1: a multi-stage pipeline of asynchronous copies. Edit this file only.
// Read README.md beside it first; tests: ctest --preset student -R 07-async-pipeline
//
// Compare with mirror_tiles_sync_kernel in given/pipeline_launch.cu, which does the same work
// with synchronous loads. The launch (one block of kPipelineThreads per SM) is given.
#include <cuda/pipeline>

#include "pipeline.h"

namespace {

// TODO(1): Choose the number of stages (tiles in flight per block). Each stage is one tile
//          of shared memory (4 KiB); see the chapter README for what each stage buys.
constexpr int kStages = 1;
static_assert(kStages >= 1 && kStages * kPipelineTileFloats * sizeof(float) <= 48 * 1024,
              "static shared memory is limited to 48 KiB per block");

}  // namespace

__global__ void mirror_tiles_pipelined_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  // TODO(2): Declare kStages tiles in shared memory (e.g. float4 tiles[kStages][kPipelineThreads])
  //          and a per-thread pipeline: auto pipe = cuda::make_pipeline();

  // TODO(3): Write the copy of this thread's float4 of tile t into stage s:
  //          pipe.producer_acquire(); then, if tile t exists, cuda::memcpy_async(dst, src,
  //          cuda::aligned_size_t<16>(16), pipe) for a whole float4, or plain loads for the
  //          last few elements of the array; then pipe.producer_commit() (always, even when
  //          there was nothing to copy, so that the count of batches stays in step).

  // TODO(4): Before the loop, start the copies of this block's first kStages - 1 tiles.

  // TODO(5): Loop over this block's tiles (blockIdx.x, blockIdx.x + gridDim.x, ...). In each
  //          step: start the copy of the tile kStages - 1 steps ahead (into the stage that
  //          the previous step has finished with); wait for this tile's own copy with
  //          cuda::pipeline_consumer_wait_prior<kStages - 1>(pipe); __syncthreads() so that
  //          every thread's part of the tile is there; compute and write this thread's
  //          elements with the given mirror_tile_part (pipeline.h); __syncthreads() again
  //          before the stage is reused;
  //          pipe.consumer_release().
}

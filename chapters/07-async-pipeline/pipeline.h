/// @file pipeline.h
/// @brief Chapter 07 contract: streaming tiles through shared memory with asynchronous copies.
///
/// The work: `in` and `out` are arrays of `n` floats in device memory, cut into tiles of
/// kPipelineTileFloats elements (the last tile may be shorter). Within each tile, every
/// element is averaged with its mirror image:
///
///     out[s + j] = 0.5f * (in[s + j] + in[s + len - 1 - j])
///
/// for the tile starting at s with len elements (len = min(kPipelineTileFloats, n - s)).
/// A thread needs values another warp loaded, so each tile must be complete in shared memory
/// before anyone computes on it: the tile really is staged.
///
/// The launch is fixed by the given code (given/pipeline_launch.cu): exactly one block of
/// kPipelineThreads threads per multiprocessor, so that few warps are resident and latency
/// cannot be hidden by occupancy. Block b handles tiles b, b + gridDim.x, b + 2 * gridDim.x, ...
///
/// What every kernel of this chapter (and its launcher) promises, for both exercises:
/// - `n`: from 0 up to what device memory holds, so tile and element indices must be 64-bit.
///   For finite inputs (tested in [-1, 1]) out is exact to the bit (the formula's two float
///   operations) for n = 1, under a float4, under a tile, whole tiles, a partial last tile of
///   any length, fewer tiles than blocks, many more tiles per block than any pipeline has
///   stages (MirrorTilesPipelined, MirrorTilesBulkStretch), and more than 2^32 floats
///   (MirrorTilesPipelinedDeviceWide, MirrorTilesBulkStretchDeviceWide: 2^32 + 2^20 + 3 floats,
///   34.4 GB in and out; they skip, saying so, where less device memory is free).
/// - n = 0: nothing is read or written, and the kernel, launched with the usual grid of one
///   block per SM, succeeds even with null pointers; the launcher then launches nothing
///   (MirrorTilesPipelinedCalls.ZeroFloatsTouchesNothing, MirrorTilesBulkStretchCalls.ZeroFloatsTouchesNothing).
/// - `in` and `out` must be 16-byte aligned (the given mirror_tile_part and the copies move
///   float4s): cudaMalloc's pointers or views offset from them by a multiple of 4 floats.
///   Only out[0, n) is written (MirrorTilesPipelinedCalls.OffsetViews, MirrorTilesBulkStretchCalls.OffsetViews).
///   Other offsets are outside the contract.
/// - Only in[0, n) is read (and the rest of the 16-byte granule of in[n - 1]): `in` may end where
///   mapped memory ends, so a partial last tile is never copied whole
///   (MirrorTilesPipelinedCalls.ReadsOnlyInsideIn, MirrorTilesBulkStretchCalls.ReadsOnlyInsideIn),
///   and `in` may start where mapped memory starts, so nothing before in[0] is read either, not
///   even a value that is never used (MirrorTilesPipelinedCalls.ReadsNothingBeforeIn,
///   MirrorTilesBulkStretchCalls.ReadsNothingBeforeIn).
/// - `in` and `out` must not overlap (the kernels take them __restrict__).
/// - Calls are independent: a call with other n and other data right after another gives its
///   own result, nothing is kept from one call to the next
///   (MirrorTilesPipelinedCalls.OtherSizesInOneProcess, MirrorTilesBulkStretchCalls.OtherSizesInOneProcess).
/// - The launchers are asynchronous on `stream` and check nothing: a failed launch or kernel
///   shows in cudaGetLastError or at the next synchronisation.
///
/// **Performance**, ratios to a baseline measured in the same process, as the chapter's README
/// explains (an instructor may scale the bars: COURSE_PERF_SCALE): mirror_tiles_pipelined at least
/// 0.70 of the device-to-device copy peak and 1.3 times the given synchronous kernel
/// (MirrorTilesPipelinedPerf); the bulk stretch at least 0.80 of the copy peak
/// (MirrorTilesBulkStretchPerf).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// Threads per block.
constexpr int kPipelineThreads = 256;
/// Floats per tile: one float4 (16 bytes) per thread, 4 KiB in all.
constexpr int kPipelineTileFloats = 4 * kPipelineThreads;

/// Given: the kernel that loads each tile synchronously (global -> registers -> shared).
__global__ void mirror_tiles_sync_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n);

/// Exercise 1 (pipelined.cu): the same work with a multi-stage pipeline of asynchronous
/// copies (cuda::memcpy_async with a cuda::pipeline): while the block computes on one tile,
/// the copies of the next ones are already in flight.
/// Rules, checked from what was built and what runs (MirrorTilesPipelinedTechnique, and a call
/// of MirrorTilesPipelinedPerf drawn at random, at its size): the machine code of every kernel
/// it runs issues asynchronous global-to-shared copies (LDGSTS; or, from compute capability 9.0,
/// the bulk or tensor copies of exercise 2, UBLKCP or UTMALDG), those copies carry every whole
/// tile, counted while the kernel runs, so a copy in a branch that never runs or a path taken
/// only at some sizes does not count, nor copies that carry nothing beside plain loads of the
/// tile's data (a small bulk copy, a zero-fill copy; a generic load, LD, counts as a plain one)
/// (MirrorTilesPipelinedCountedTechnique.AsynchronousCopiesCarryEveryTile),
/// it holds at least two tiles in shared memory, and it makes no copies of its own.
__global__ void mirror_tiles_pipelined_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n);

/// Exercise 2, stretch, compute capability 9.0 and newer (bulk.cu): the same with one bulk
/// asynchronous copy per tile (cuda::device::memcpy_async_tx) completing on a shared-memory
/// cuda::barrier. On older GPUs it is never launched. Rule (MirrorTilesBulkStretchTechnique,
/// MirrorTilesBulkStretchPerf): its machine code issues bulk copies into shared memory (UBLKCP.S.G;
/// a bulk store, UBLKCP.G.S, is not one), and while it runs
/// at least one per whole tile, carrying every whole tile: the data of the whole tiles is not
/// read with plain loads (MirrorTilesBulkStretchCountedTechnique.BulkCopiesCarryEveryTile).
__global__ void mirror_tiles_bulk_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n);

/// Given: launches mirror_tiles_sync_kernel, one block per multiprocessor, on `stream`.
void mirror_tiles_sync(const float* in, float* out, size_t n, cudaStream_t stream);
/// Given: launches mirror_tiles_pipelined_kernel, one block per multiprocessor, on `stream`.
void mirror_tiles_pipelined(const float* in, float* out, size_t n, cudaStream_t stream);
/// Given: launches mirror_tiles_bulk_kernel, one block per multiprocessor, on `stream`.
void mirror_tiles_bulk(const float* in, float* out, size_t n, cudaStream_t stream);

/// Blocks in every launch of this chapter: the number of multiprocessors of the current device.
int pipeline_grid_size();

#ifdef __CUDACC__
/// Given: the per-tile work of one thread, once its tile is staged. Computes and stores this
/// thread's four elements (4 * threadIdx.x ...) of the tile that starts at element `start` of the
/// array and has `len` elements, reading the tile from `tile` (shared memory, or global memory
/// for a partial tile that was not copied). The exercises are about getting the tile there.
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
#endif

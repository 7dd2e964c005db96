/// @file transpose.h
/// @brief Chapter 06 contract: transposing a matrix through shared memory.
///
/// Matrices are row-major arrays of float in device memory. `in` has `rows` rows and
/// `cols` columns; `out` receives its transpose, `cols` rows of `rows` elements, so that
/// out[c * rows + r] == in[r * cols + c]. The functions only enqueue work on `stream` and
/// return; the caller synchronises and checks errors.
///
/// **Domain** (both functions): any rows, cols >= 0 (TransposeTiled), not only multiples of
/// the tile: 0 (nothing to do, and no launch: a grid of 0 blocks is an error), more rows or
/// columns than a grid's y dimension holds in tiles (5,000,000 x 1 and 1 x 5,000,000), and more
/// than 2^31 elements (TransposeTiledDeviceWide: 65537 x 32768), so indices need 64 bits; `in`
/// and `out` must fit in device memory. They may be views at any float's address, not only
/// 16-byte aligned (TransposeTiledViews), and do not overlap. Calls are independent: a later
/// call with another shape or other pointers owes nothing to an earlier one
/// (TransposeTiledRepeated).
///
/// **Performance**, ratios to a baseline measured in the same process, as the chapter's README
/// explains (an instructor may scale the bars: COURSE_PERF_SCALE): transpose_tiled at least 0.75 of
/// the device-to-device copy peak on 8192 x 8192 floats
/// (TransposeTiledPerf.ReachesThreeQuartersOfCopyPeakAt8192). The transpose is exact.
#pragma once

#include <cuda_runtime.h>

/// Side of the square tile one thread block moves (elements).
constexpr int kTransposeTile = 32;
/// Rows of threads in the starter's blocks: kTransposeTile x kTransposeBlockRows threads, each
/// moving kTransposeTile / kTransposeBlockRows elements of its tile. A suggestion, not a rule.
constexpr int kTransposeBlockRows = 8;

/// Given (chapters/06-transpose/given/transpose_naive.cu): reads `in` along rows, which is
/// coalesced, and writes `out` down columns, which is not: every element of a warp's write
/// lands in a different 32-byte segment. The baseline the tiled version has to beat.
void transpose_naive(const float* in, float* out, int rows, int cols, cudaStream_t stream);

/// Exercise (chapters/06-transpose/transpose.cu): the same result, with both the global
/// reads and the global writes coalesced, by staging each tile in shared memory. The
/// tile is padded by one column so that reading a column of it is free of bank conflicts.
///
/// Rules, checked from what runs (TransposeTiledTechnique, and a call of TransposeTiledPerf
/// drawn at random, at its size): only kernels of your own (no
/// library, no cudaMemcpy), at least kTransposeTile x kTransposeTile floats of shared memory per
/// block, everything on `stream`; writes stay inside `out` (the tests put guard zones around
/// it); and every element goes through that tile: counted while the kernels run, they store at
/// least the matrix's bytes into shared memory and load as many back
/// (TransposeTiledCountedTechnique.EveryElementGoesThroughTheSharedTile). The block's shape and the
/// elements per thread are yours to choose.
void transpose_tiled(const float* in, float* out, int rows, int cols, cudaStream_t stream);

/// @file matmul.h
/// @brief Chapter 05 contract: matrix multiplication through shared memory.
///
/// All matrices are row-major arrays of float in device memory, with no padding between
/// rows. C = A·B takes A (M x K) and B (K x N) to C (M x N); C = A·Aᵀ takes A (M x K) to
/// C (M x M). The functions enqueue work on `stream` and return; the caller synchronises and
/// checks errors.
///
/// **Domain** (every function here, the given ones too): M, N, K from 1 to 2^30 (not only
/// multiples of the tile; sizes below 1 are not promised), as long as A, B and C fit in device
/// memory together. So C may have more rows or columns than a grid's y dimension holds
/// (65535 blocks: MatmulTiled/GridLimits, 8,500,000 x 1 and 1 x 2^21 + 4) and more than 2^31
/// elements (...DeviceWide: C 65537 x 32768, A 70000 x 32768, B 70000 x 32768; for A·Aᵀ C 46341
/// x 46341 and A 1024 x 2^21 + 64): index in 64 bits. For A·Aᵀ the M x M floats of C must fit in
/// device memory, which keeps M below 200,000 on today's GPUs.
/// Pointers may be views at any float's address, not only 16-byte aligned (...Views); only the
/// elements of A and B are read, whatever the floats around them hold, NaN included
/// (MatmulTiledViews.OnlyTheOperandsAreRead, AatTiledViews.OnlyTheOperandIsRead); C does
/// not overlap A or B. Calls are independent: a later call with other sizes or pointers owes
/// nothing to an earlier one (...Repeated).
///
/// **Performance**, ratios to a baseline measured in the same process, as the chapter's README
/// explains (an instructor may scale the bars: COURSE_PERF_SCALE): matmul_tiled at least 1.3 times
/// the given matmul_naive (MatmulTiledPerf.AtLeast1_3xNaiveAt4096); aat_tiled at least 8 times the
/// given aat_naive, and 15 times with a tile free of bank conflicts (AatTiledPerf.AtLeast8xNaive,
/// AatTiledPerf.AtLeast15xNaiveWithPaddedTile); matmul_register_tiled at least 0.4 of cuBLAS's FP32
/// SGEMM (MatmulRegisterTiledStretchPerf.AtLeast0_4xCublasAt4096).
///
/// **Accuracy**: every element within 1e-6 K + 1e-6 absolute plus 1e-5 relative of a
/// double-precision product: FP32 arithmetic (TF32 or half-precision tensor cores are not accurate
/// enough).
#pragma once

#include <cuda_runtime.h>

/// Side of the square tiles of exercises 1 and 2 (the starters use blocks of kMatmulTile x
/// kMatmulTile threads, one output element per thread; the shape is yours to choose).
constexpr int kMatmulTile = 32;

/// Given (given/matmul_naive.cu): one thread per element of C, reading a row of A and a
/// column of B straight from global memory; threadIdx.x runs along the columns of C, so the
/// reads of B are coalesced and those of A are broadcast.
void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream);

/// Exercise 1 (matmul_tiled.cu): C = A·B with kMatmulTile x kMatmulTile tiles of A and B
/// staged in shared memory, so that each element loaded from global memory is used
/// kMatmulTile times.
/// Rules, checked from what runs (MatmulTiledTechnique, and a call of MatmulTiledPerf drawn at
/// random, at its size): only kernels of your own (no cuBLAS,
/// no copies), at least two kMatmulTile^2 float tiles of shared memory per block, everything on
/// `stream`. Blocks of another shape, or several outputs per thread, are allowed.
/// Rule, counted while the kernels run (MatmulTiledCountedTechnique): A and B go through the
/// tiles: the kernels store at least the operands' bytes into shared memory and load at least as
/// many back, so a tile that is declared but never used does not count.
void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream);

/// Given (given/aat_naive.cu): C = A·Aᵀ, one thread per element, C[r][c] = row r of A
/// dotted with row c of A. Consecutive threads read rows c, c+1, ... of A: addresses K
/// floats apart, a strided access that wastes most of every sector it loads.
void aat_naive(const float* A, float* C, int M, int K, cudaStream_t stream);

/// Exercise 2 (aat_tiled.cu): C = A·Aᵀ with coalesced loads of both operands: the tile
/// of the second operand is read along rows of A and stored transposed in shared memory,
/// padded by one column so that the transposing store is free of bank conflicts.
/// Rules (AatTiledTechnique, AatTiledPerf): as for matmul_tiled; counted, A's bytes go through
/// the tiles (AatTiledCountedTechnique).
void aat_tiled(const float* A, float* C, int M, int K, cudaStream_t stream);

/// Exercise 3, stretch (matmul_register_tiled.cu): C = A·B where each thread computes a
/// small block of C (e.g. 8 x 8) in registers from shared-memory tiles, so that each value
/// read from shared memory feeds several multiply-adds. Launch configuration is yours.
/// Rules (MatmulRegisterTiledStretchTechnique, MatmulRegisterTiledStretchPerf): only kernels of
/// your own, shared-memory tiles (at least 4 KiB per block), everything on `stream`; counted
/// (MatmulRegisterTiledStretchCountedTechnique), A and B go through the tiles and each thread
/// reuses what it loads as a block of at least 4 outputs does: at most 5 bytes loaded from
/// shared memory per FP32 multiply-add executed (1 x 4 outputs: 5, 8 x 8: 1; one output: 8),
/// with at most 1.15 multiply-adds executed per product of C.
void matmul_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                           cudaStream_t stream);

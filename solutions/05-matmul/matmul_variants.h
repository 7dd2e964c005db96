/// @file matmul_variants.h
/// @brief Reference-only variants measured by the calibration program (not the contract).
#pragma once

#include <cuda_runtime.h>

/// C = A·Aᵀ with an unpadded transposed tile: the transposing store to shared memory has a
/// 32-way bank conflict. Kept to measure what the padding buys.
void aat_tiled_unpadded(const float* A, float* C, int M, int K, cudaStream_t stream);

/// C = A·B with 16 x 16 tiles, to compare tile sizes.
void matmul_tiled16(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream);

/// The plain register-tiled C = A·B (8 x 8 outputs per thread, 256 threads, 128 x 128 tiles,
/// double buffered through registers) with `tile_k` (8 or 16) along K per staged step, compiled to
/// fit `min_blocks` (1 or 2) blocks on one SM; other values do nothing.
void matmul_register_tiled_variant(int tile_k, int min_blocks, const float* A, const float* B, float* C, int M, int N,
                                   int K, cudaStream_t stream);

/// The warp-tiled C = A·B (16 x 8 outputs per thread, 128 x 256 tiles filled by asynchronous
/// copies) with `stages` steps in flight, `group_rows` block rows scheduled together, and its
/// barrier before a step's last k (`early_barrier`) or at the step's top: (4, 8, either), (4, 1,
/// true), (3, 8, true) and (2, 8, true) are built. Where the kernel does not apply (see the
/// reference) or for other values, the plain kernel runs.
void matmul_warp_tiled_variant(int stages, int group_rows, bool early_barrier, const float* A, const float* B, float* C,
                               int M, int N, int K, cudaStream_t stream);

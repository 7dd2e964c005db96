/// @file matmul_variants.h
/// @brief Reference-only variants measured by the calibration program (not the contract).
#pragma once

#include <cuda_runtime.h>

/// C = A·Aᵀ with an unpadded transposed tile: the transposing store to shared memory has a
/// 32-way bank conflict. Kept to measure what the padding buys.
void aat_tiled_unpadded(const float* A, float* C, int M, int K, cudaStream_t stream);

/// C = A·B with 16 x 16 tiles, to compare tile sizes.
void matmul_tiled16(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream);

/// The register-tiled C = A·B with `threads` per block (256: a thread computes 8 x 8 outputs;
/// 128: warp-tiled, 16 x 8), `tile_k` (8 or 16) along K per staged step, compiled to fit
/// `min_blocks` blocks on one SM: (256, 8|16, 1|2) and (128, 8, 1|2|3), (128, 16, 2) are built;
/// others do nothing.
void matmul_register_tiled_variant(int threads, int tile_k, int min_blocks, const float* A, const float* B, float* C,
                                   int M, int N, int K, cudaStream_t stream);

/// The register-tiled C = A·B (8 x 8 outputs per thread, 256 threads) with its tiles filled by
/// asynchronous copies, `stages` deep, `tile_k` along K per step, compiled for `min_blocks` blocks
/// per SM: (8, 3|4, 2), (16, 2|3, 2) and (16, 3, 1) are built; others do nothing. Falls back to
/// the reference kernel unless K and N are multiples of 4 and the matrices 16-byte aligned.
void matmul_async_tiled_variant(int tile_k, int stages, int min_blocks, const float* A, const float* B, float* C, int M,
                                int N, int K, cudaStream_t stream);

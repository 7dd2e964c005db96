/// @file matmul_variants.h
/// @brief Reference-only variants measured by the calibration program (not the contract).
#pragma once

#include <cuda_runtime.h>

/// C = A·Aᵀ with an unpadded transposed tile: the transposing store to shared memory has a
/// 32-way bank conflict. Kept to measure what the padding buys.
void aat_tiled_unpadded(const float* A, float* C, int M, int K, cudaStream_t stream);

/// C = A·B with 16 x 16 tiles, to compare tile sizes.
void matmul_tiled16(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream);

/// The register-tiled C = A·B with `tile_k` (8 or 16) along K per staged step, compiled to fit
/// `min_blocks` (1 or 2) blocks on one SM; other values do nothing.
void matmul_register_tiled_variant(int tile_k, int min_blocks, const float* A, const float* B, float* C, int M, int N,
                                   int K, cudaStream_t stream);

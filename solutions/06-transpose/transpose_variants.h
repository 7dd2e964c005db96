/// @file transpose_variants.h
/// @brief Reference-only variants used by the calibration program (not part of the contract).
#pragma once

#include <cuda_runtime.h>

/// The tiled transpose as the starter lays it out: a padded [32][33] tile moved by 32 x 8
/// threads (4 elements per thread each way). The reference moves 64 x 64 tiles instead.
void transpose_tiled_32(const float* in, float* out, int rows, int cols, cudaStream_t stream);

/// The same with an unpadded [32][32] tile: reading a tile column makes all 32 threads of a
/// warp hit one bank. Kept to measure what the padding buys.
void transpose_tiled_unpadded(const float* in, float* out, int rows, int cols, cudaStream_t stream);

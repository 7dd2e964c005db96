/// @file transpose_variants.h
/// @brief Reference-only variants used by the calibration program (not part of the contract).
#pragma once

#include <cuda_runtime.h>

/// The tiled transpose with an unpadded [32][32] tile: reading a tile column makes all 32
/// threads of a warp hit one bank. Kept to measure what the padding buys.
void transpose_tiled_unpadded(const float* in, float* out, int rows, int cols, cudaStream_t stream);

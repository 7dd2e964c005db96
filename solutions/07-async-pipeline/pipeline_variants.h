/// @file pipeline_variants.h
/// @brief Reference-only helpers of chapter 07 (calibration program; not the contract).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// The pipelined kernel with `stages` stages (1, 2, 3, 4, 6, 8, 10 or 12), one block per SM.
void mirror_tiles_pipelined_stages(int stages, const float* in, float* out, size_t n, cudaStream_t stream);

/// The bulk-copy kernel with `stages` stages (4, 8, 10 or 11), one block per SM; compute
/// capability 9.0 only.
void mirror_tiles_bulk_stages(int stages, const float* in, float* out, size_t n, cudaStream_t stream);

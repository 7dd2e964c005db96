/// @file pipeline_variants.h
/// @brief Reference-only helpers of chapter 07 (calibration program; not the contract).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// The pipelined kernel with `stages` stages (1, 2, 3, 4, 6 or 8), one block per SM.
void mirror_tiles_pipelined_stages(int stages, const float* in, float* out, size_t n, cudaStream_t stream);

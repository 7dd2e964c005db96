/// @file pipeline_variants.h
/// @brief Reference-only helpers of chapter 07 (calibration program; not the contract).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// The pipelined kernel with `stages` stages (1, 2, 3, 4, 6, 8, 10 or 12), one block per SM.
void mirror_tiles_pipelined_stages(int stages, const float* in, float* out, size_t n, cudaStream_t stream);

/// The bulk-copy kernel with `stages` stages of `tiles_per_stage` tiles each (one bulk copy per
/// tile, one block-wide barrier per stage), waiting on each stage with a plain try_wait loop
/// (`spin`) or with cuda::barrier::wait_parity; one block per SM; compute capability 9.0 only.
/// Returns false, launching nothing, for a combination that is not built: (4|8|10|11, 1, false),
/// (2|4|10|11, 1, true), (4|5, 2, true), (5, 2, false), (3, 3, true), (2, 4, true).
bool mirror_tiles_bulk_variant(int stages, int tiles_per_stage, bool spin, const float* in, float* out, size_t n,
                               cudaStream_t stream);

// Reference solution of chapter 06: tiled transpose through a padded shared-memory tile.
#include "transpose.h"
#ifdef COURSE_REFERENCE_VARIANTS  // the calibration program's build only
#include "transpose_variants.h"
#endif

namespace {

template <int kPad>
__global__ void transpose_tiled_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       int rows, int cols) {
  // kPad = 1 shifts each tile row by one bank, so a column read is conflict-free.
  __shared__ float tile[kTransposeTile][kTransposeTile + kPad];

  const int in_col = blockIdx.x * kTransposeTile + threadIdx.x;
  const int in_row0 = blockIdx.y * kTransposeTile + threadIdx.y;
  if (in_col < cols) {
#pragma unroll
    for (int dy = 0; dy < kTransposeTile; dy += kTransposeBlockRows) {
      const int row = in_row0 + dy;
      if (row < rows) tile[threadIdx.y + dy][threadIdx.x] = in[static_cast<size_t>(row) * cols + in_col];
    }
  }

  __syncthreads();

  // Swap the block coordinates: the tile at (by, bx) of `in` goes to (bx, by) of `out`.
  const int out_col = blockIdx.y * kTransposeTile + threadIdx.x;   // < rows
  const int out_row0 = blockIdx.x * kTransposeTile + threadIdx.y;  // < cols
  if (out_col < rows) {
#pragma unroll
    for (int dy = 0; dy < kTransposeTile; dy += kTransposeBlockRows) {
      const int row = out_row0 + dy;
      if (row < cols) out[static_cast<size_t>(row) * rows + out_col] = tile[threadIdx.x][threadIdx.y + dy];
    }
  }
}

template <int kPad>
void launch_tiled(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(kTransposeTile, kTransposeBlockRows);
  const dim3 grid((cols + kTransposeTile - 1) / kTransposeTile, (rows + kTransposeTile - 1) / kTransposeTile);
  transpose_tiled_kernel<kPad><<<grid, block, 0, stream>>>(in, out, rows, cols);
}

}  // namespace

// (tools/fixtures builds this file without the padding to check the threshold.)
#ifndef REFERENCE_TRANSPOSE_PAD
#define REFERENCE_TRANSPOSE_PAD 1
#endif

void transpose_tiled(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  launch_tiled<REFERENCE_TRANSPOSE_PAD>(in, out, rows, cols, stream);
}

#ifdef COURSE_REFERENCE_VARIANTS
void transpose_tiled_unpadded(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  launch_tiled<0>(in, out, rows, cols, stream);
}
#endif

// Reference solution of chapter 06: tiled transpose through a padded shared-memory tile.
#include "transpose.h"
#ifdef COURSE_REFERENCE_VARIANTS  // the calibration program's build only
#include "transpose_variants.h"
#endif

namespace {

// A kSide x kSide tile moved by kSide x kRows threads, each moving kSide / kRows elements in
// each direction. The reference takes 64 x 64 tiles and 64 x 4 threads: 16 loads in flight per
// thread instead of the starter's 4 (32 x 32, 32 x 8), which a faster memory needs to stay busy
// (see the README's table: an H200 reaches 0.85 of its copy peak with 32 x 32 tiles, 0.93 with
// 64 x 64).
template <int kSide, int kRows, int kPad>
__global__ void __launch_bounds__(kSide * kRows)
    transpose_tiled_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  // kPad = 1 shifts each tile row by one bank, so a column read is conflict-free.
  __shared__ float tile[kSide][kSide + kPad];

  // The tiles are numbered along the grid's x dimension, row of tiles by row of tiles (the order
  // a 2-D grid runs them in): gridDim.y stops at 65535 blocks, 4,194,240 rows of 64-row tiles.
  const int tiles_x = (cols + kSide - 1) / kSide;
  const int tile_x = static_cast<int>(blockIdx.x % tiles_x), tile_y = static_cast<int>(blockIdx.x / tiles_x);
  const int in_col = tile_x * kSide + threadIdx.x;
  const int in_row0 = tile_y * kSide + threadIdx.y;
  if (in_col < cols) {
#pragma unroll
    for (int dy = 0; dy < kSide; dy += kRows) {
      const int row = in_row0 + dy;
      if (row < rows) tile[threadIdx.y + dy][threadIdx.x] = in[static_cast<size_t>(row) * cols + in_col];
    }
  }

  __syncthreads();

  // Swap the tile coordinates: the tile at (tile_y, tile_x) of `in` goes to (tile_x, tile_y) of `out`.
  const int out_col = tile_y * kSide + threadIdx.x;   // < rows
  const int out_row0 = tile_x * kSide + threadIdx.y;  // < cols
  if (out_col < rows) {
#pragma unroll
    for (int dy = 0; dy < kSide; dy += kRows) {
      const int row = out_row0 + dy;
      if (row < cols) out[static_cast<size_t>(row) * rows + out_col] = tile[threadIdx.x][threadIdx.y + dy];
    }
  }
}

template <int kSide, int kRows, int kPad>
void launch_tiled(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(kSide, kRows);
  const unsigned grid = static_cast<unsigned>((cols + kSide - 1) / kSide) * static_cast<unsigned>((rows + kSide - 1) / kSide);
  transpose_tiled_kernel<kSide, kRows, kPad><<<grid, block, 0, stream>>>(in, out, rows, cols);
}

}  // namespace

// (tools/fixtures builds this file with other tiles, e.g. unpadded, to check the threshold.)
#ifndef REFERENCE_TRANSPOSE_SIDE
#define REFERENCE_TRANSPOSE_SIDE 64
#define REFERENCE_TRANSPOSE_ROWS 4
#endif
#ifndef REFERENCE_TRANSPOSE_PAD
#define REFERENCE_TRANSPOSE_PAD 1
#endif

void transpose_tiled(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  launch_tiled<REFERENCE_TRANSPOSE_SIDE, REFERENCE_TRANSPOSE_ROWS, REFERENCE_TRANSPOSE_PAD>(in, out, rows, cols, stream);
}

#ifdef COURSE_REFERENCE_VARIANTS
void transpose_tiled_32(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  launch_tiled<kTransposeTile, kTransposeBlockRows, 1>(in, out, rows, cols, stream);
}
void transpose_tiled_unpadded(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  launch_tiled<kTransposeTile, kTransposeBlockRows, 0>(in, out, rows, cols, stream);
}
#endif

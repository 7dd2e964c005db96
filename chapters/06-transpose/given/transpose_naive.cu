// Given code: the naive transpose the chapter starts from. Not an exercise.
#include "transpose.h"

namespace {

// Each block covers a kTransposeTile x kTransposeTile tile, like the tiled version, so the
// two differ only in how they touch memory. threadIdx.x runs along a row of `in`.
__global__ void transpose_naive_kernel(const float* in, float* out, int rows, int cols) {
  // Tiles numbered along the grid's x dimension (gridDim.y stops at 65535 blocks).
  const int tiles_x = (cols + kTransposeTile - 1) / kTransposeTile;
  const int tile_x = static_cast<int>(blockIdx.x % tiles_x), tile_y = static_cast<int>(blockIdx.x / tiles_x);
  const int col = tile_x * kTransposeTile + threadIdx.x;
  const int row0 = tile_y * kTransposeTile + threadIdx.y;
  if (col >= cols) return;
  for (int dy = 0; dy < kTransposeTile; dy += kTransposeBlockRows) {
    const int row = row0 + dy;
    if (row < rows) out[static_cast<size_t>(col) * rows + row] = in[static_cast<size_t>(row) * cols + col];
  }
}

}  // namespace

void transpose_naive(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(kTransposeTile, kTransposeBlockRows);
  const dim3 grid(((cols + kTransposeTile - 1) / kTransposeTile) * ((rows + kTransposeTile - 1) / kTransposeTile));
  transpose_naive_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
}

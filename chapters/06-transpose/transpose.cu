// Chapter 06 exercise: a tiled transpose through shared memory.
// Edit this file only. Read README.md beside it first; the tests are in tests/06-transpose.
//
//   ctest --preset student -R 06-transpose     (after: cmake --workflow --preset grade)
#include "transpose.h"

namespace {

// One block transposes one kTransposeTile x kTransposeTile tile of `in`.
// Block: kTransposeTile x kTransposeBlockRows threads (32 x 8), so each thread moves
// kTransposeTile / kTransposeBlockRows = 4 elements, one every kTransposeBlockRows rows.
// The tiles are numbered along the grid's x dimension, row of tiles by row of tiles (gridDim.y
// stops at 65535 blocks, too few for the rows the contract allows): this block's tile is tile
// column tile_x and tile row tile_y of `in`.
__global__ void transpose_tiled_kernel(const float* in, float* out, int rows, int cols) {
  const int tiles_x = (cols + kTransposeTile - 1) / kTransposeTile;  // tiles in a row of `in`
  [[maybe_unused]] const int tile_x = static_cast<int>(blockIdx.x % tiles_x);
  [[maybe_unused]] const int tile_y = static_cast<int>(blockIdx.x / tiles_x);

  // TODO(1): Declare the tile in shared memory: kTransposeTile rows of kTransposeTile + 1
  //          floats. The extra column shifts each row by one bank, so that a column of
  //          the tile lies in 32 different banks.

  // TODO(2): Load this block's tile of `in`: the block's tile starts at row
  //          tile_y * kTransposeTile and column tile_x * kTransposeTile; let
  //          threadIdx.x run along a row (coalesced reads), loop over the tile's rows in
  //          steps of kTransposeBlockRows, and skip elements outside the matrix.

  // TODO(3): Wait until the whole tile is in shared memory.

  // TODO(4): Write the tile to `out` transposed: this block's output tile starts at row
  //          tile_x * kTransposeTile and column tile_y * kTransposeTile of `out`
  //          (which has `cols` rows of `rows` elements). Let threadIdx.x run along a row
  //          of `out` again (coalesced writes), read the tile down a column, and skip
  //          elements outside the matrix.
}

}  // namespace

void transpose_tiled(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(kTransposeTile, kTransposeBlockRows);
  const unsigned grid = static_cast<unsigned>((cols + kTransposeTile - 1) / kTransposeTile) *
                        static_cast<unsigned>((rows + kTransposeTile - 1) / kTransposeTile);  // tiles of `in`
  transpose_tiled_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
}

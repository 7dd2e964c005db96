// Chapter 05, exercise 1: C = A·B with shared-memory tiles. Edit this file only.
// Read README.md beside it first; tests: ctest --preset student -R 05-matmul
#include "matmul.h"

namespace {

// One block computes one kMatmulTile x kMatmulTile tile of C, one element per thread:
// row = blockIdx.y * kMatmulTile + threadIdx.y, col = blockIdx.x * kMatmulTile + threadIdx.x.
__global__ void matmul_tiled_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  // TODO(1): Declare two kMatmulTile x kMatmulTile tiles in shared memory, one for A and
  //          one for B, and a float accumulator for this thread's element of C.

  // TODO(2): Loop over the tiles along K (there are ceil(K / kMatmulTile) of them). In each
  //          step, every thread loads one element of A's tile (row `row`, column
  //          t * kMatmulTile + threadIdx.x) and one of B's tile (row t * kMatmulTile +
  //          threadIdx.y, column `col`). Load 0 for elements outside the matrices, so the
  //          partial tiles at the edges add nothing.

  // TODO(3): Wait until both tiles are complete, add the kMatmulTile products of this
  //          thread's row of A's tile and column of B's tile, then wait again before the
  //          next step overwrites the tiles.

  // TODO(4): Write the accumulator to C, if (row, col) lies inside C.
}

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const dim3 block(kMatmulTile, kMatmulTile);
  const dim3 grid((N + kMatmulTile - 1) / kMatmulTile, (M + kMatmulTile - 1) / kMatmulTile);
  matmul_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}

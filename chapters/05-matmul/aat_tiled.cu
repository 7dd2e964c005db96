// Chapter 05, exercise 2: C = A·Aᵀ with coalesced loads and a padded transposed tile.
// Edit this file only. Read README.md beside it first; tests: ctest --preset student -R 05-matmul
#include "matmul.h"

namespace {

// One block computes one kMatmulTile x kMatmulTile tile of C (M x M), one element per thread:
// row = blockIdx.y * kMatmulTile + threadIdx.y, col = blockIdx.x * kMatmulTile + threadIdx.x.
// C[row][col] = sum over k of A[row][k] * A[col][k].
__global__ void aat_tiled_kernel(const float* A, float* C, int M, int K) {
  // TODO(1): Declare a tile for the first operand, rowTile[kMatmulTile][kMatmulTile], and a
  //          transposed tile for the second, padded by one column:
  //          colTile[kMatmulTile][kMatmulTile + 1].

  // TODO(2): Loop over the tiles along K. Load rowTile[threadIdx.y][threadIdx.x] from
  //          A[row][t * kMatmulTile + threadIdx.x]. For the second operand, read A along a
  //          row too (coalesced): the thread at (threadIdx.y, threadIdx.x) reads
  //          A[blockIdx.x * kMatmulTile + threadIdx.y][t * kMatmulTile + threadIdx.x] and stores
  //          it transposed, in colTile[threadIdx.x][threadIdx.y]. Load 0 outside A.

  // TODO(3): Wait for both tiles, accumulate rowTile[threadIdx.y][i] * colTile[i][threadIdx.x]
  //          over i, and wait again before the next step.

  // TODO(4): Write the result to C[row][col] if it lies inside C.
}

}  // namespace

void aat_tiled(const float* A, float* C, int M, int K, cudaStream_t stream) {
  if (M <= 0 || K <= 0) return;
  const dim3 block(kMatmulTile, kMatmulTile);
  const dim3 grid((M + kMatmulTile - 1) / kMatmulTile, (M + kMatmulTile - 1) / kMatmulTile);
  aat_tiled_kernel<<<grid, block, 0, stream>>>(A, C, M, K);
}

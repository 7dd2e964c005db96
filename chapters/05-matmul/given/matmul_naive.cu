// Given code: the naive kernels of chapter 05. Not an exercise.
#include "matmul.h"

namespace {

// The blocks' tiles of C are numbered along the grid's x dimension, row of tiles by row of tiles
// (the order a 2-D grid runs them in): gridDim.y stops at 65535 blocks.
__global__ void matmul_naive_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  const int tiles_n = (N + kMatmulTile - 1) / kMatmulTile;
  const int row = static_cast<int>(blockIdx.x / tiles_n) * kMatmulTile + threadIdx.y;
  const int col = static_cast<int>(blockIdx.x % tiles_n) * kMatmulTile + threadIdx.x;
  if (row >= M || col >= N) return;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum += A[static_cast<size_t>(row) * K + k] * B[static_cast<size_t>(k) * N + col];
  C[static_cast<size_t>(row) * N + col] = sum;
}

__global__ void aat_naive_kernel(const float* A, float* C, int M, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= M) return;
  float sum = 0.0f;
  // A[col * K + k]: neighbouring threads are K floats apart (strided).
  for (int k = 0; k < K; ++k) sum += A[static_cast<size_t>(row) * K + k] * A[static_cast<size_t>(col) * K + k];
  C[static_cast<size_t>(row) * M + col] = sum;
}

dim3 grid_for(int rows, int cols) {
  return dim3((cols + kMatmulTile - 1) / kMatmulTile, (rows + kMatmulTile - 1) / kMatmulTile);
}

}  // namespace

void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const dim3 tiles = grid_for(M, N);
  matmul_naive_kernel<<<tiles.x * tiles.y, dim3(kMatmulTile, kMatmulTile), 0, stream>>>(A, B, C, M, N, K);
}

void aat_naive(const float* A, float* C, int M, int K, cudaStream_t stream) {
  if (M <= 0 || K <= 0) return;
  aat_naive_kernel<<<grid_for(M, M), dim3(kMatmulTile, kMatmulTile), 0, stream>>>(A, C, M, K);
}

// Reference solution of chapter 05, exercise 1: C = A·B with shared-memory tiles.
#include "matmul.h"
#ifdef COURSE_REFERENCE_VARIANTS  // the calibration program's build only
#include "matmul_variants.h"
#endif

namespace {

template <int kTile>
__global__ void matmul_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile];
  // The tiles of C are numbered along the grid's x dimension, row of tiles by row of tiles (the
  // order a 2-D grid runs them in): gridDim.y stops at 65535 blocks, 2,097,120 rows of C.
  const int tiles_n = (N + kTile - 1) / kTile;
  const int row = static_cast<int>(blockIdx.x / tiles_n) * kTile + threadIdx.y;
  const int col = static_cast<int>(blockIdx.x % tiles_n) * kTile + threadIdx.x;
  float sum = 0.0f;

  for (int k0 = 0; k0 < K; k0 += kTile) {
    const int a_col = k0 + threadIdx.x;
    const int b_row = k0 + threadIdx.y;
    // Zeros outside the matrices: the partial tiles at the edges then add nothing.
    a_tile[threadIdx.y][threadIdx.x] = (row < M && a_col < K) ? A[static_cast<size_t>(row) * K + a_col] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = (b_row < K && col < N) ? B[static_cast<size_t>(b_row) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTile; ++i) sum += a_tile[threadIdx.y][i] * b_tile[i][threadIdx.x];
    __syncthreads();  // the next step overwrites the tiles
  }
  if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = sum;
}

template <int kTile>
void launch(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const dim3 block(kTile, kTile);
  const unsigned grid = static_cast<unsigned>((N + kTile - 1) / kTile) * static_cast<unsigned>((M + kTile - 1) / kTile);
  matmul_tiled_kernel<kTile><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  launch<kMatmulTile>(A, B, C, M, N, K, stream);
}

#ifdef COURSE_REFERENCE_VARIANTS
void matmul_tiled16(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  launch<16>(A, B, C, M, N, K, stream);
}
#endif

// Reference solution of chapter 05, exercise 3: register-tiled C = A·B.
//
// A block of 256 threads computes a 128 x 128 tile of C; each thread an 8 x 8 block of it in
// registers. Per step of 8 along K, the block stages A's 128 x 8 tile (transposed, so that a
// thread reads its 8 values of A as two float4) and B's 8 x 128 tile in shared memory, double
// buffered, so that the global loads of the next step overlap the arithmetic of this one.
// Each value read from shared memory feeds 8 multiply-adds.
#include <cstdint>

#include "matmul.h"

namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kTileK = 8;
constexpr int kThreads = 256;
constexpr int kPadA = 4;  // keeps the transposing store conflict-free and rows 16-byte aligned

// A thread's 8 rows are {4*ty .. 4*ty+3} and {64+4*ty .. 64+4*ty+3}, its 8 columns likewise
// with tx: a quarter-warp's float4 reads of a tile row are then 128 contiguous bytes, free of
// bank conflicts, and the float4 stores to C are coalesced.
template <bool kVectorized>
__global__ void __launch_bounds__(kThreads) register_tiled_kernel(const float* __restrict__ A,
                                                                  const float* __restrict__ B,
                                                                  float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) float a_tile[2][kTileK][kBlockM + kPadA];
  __shared__ __align__(16) float b_tile[2][kTileK][kBlockN];

  const int tid = threadIdx.x;
  const int tx = tid % 16;
  const int ty = tid / 16;
  const int m0 = blockIdx.y * kBlockM;
  const int n0 = blockIdx.x * kBlockN;

  // This thread's share of the loads: one float4 of A (row a_row, columns a_k..a_k+3) and
  // one of B (row b_k, columns b_n..b_n+3).
  const int a_row = tid / 2;
  const int a_k = (tid % 2) * 4;
  const int b_k = tid / 32;
  const int b_n = (tid % 32) * 4;

  float a_next[4];
  float b_next[4];
  auto load_global = [&](int k0) {
    const int gm = m0 + a_row;
    const int gk = k0 + a_k;
    const int gbk = k0 + b_k;
    const int gn = n0 + b_n;
    if constexpr (kVectorized) {
      // K % 4 == 0 and N % 4 == 0: a float4 lies wholly inside or wholly outside.
      float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
      float4 b = make_float4(0.f, 0.f, 0.f, 0.f);
      if (gm < M && gk < K) a = *reinterpret_cast<const float4*>(A + static_cast<size_t>(gm) * K + gk);
      if (gbk < K && gn < N) b = *reinterpret_cast<const float4*>(B + static_cast<size_t>(gbk) * N + gn);
      a_next[0] = a.x, a_next[1] = a.y, a_next[2] = a.z, a_next[3] = a.w;
      b_next[0] = b.x, b_next[1] = b.y, b_next[2] = b.z, b_next[3] = b.w;
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        a_next[i] = (gm < M && gk + i < K) ? A[static_cast<size_t>(gm) * K + gk + i] : 0.0f;
        b_next[i] = (gbk < K && gn + i < N) ? B[static_cast<size_t>(gbk) * N + gn + i] : 0.0f;
      }
    }
  };
  auto store_shared = [&](int buffer) {
#pragma unroll
    for (int i = 0; i < 4; ++i) a_tile[buffer][a_k + i][a_row] = a_next[i];
    *reinterpret_cast<float4*>(&b_tile[buffer][b_k][b_n]) = make_float4(b_next[0], b_next[1], b_next[2], b_next[3]);
  };

  float acc[8][8] = {};
  load_global(0);
  store_shared(0);
  __syncthreads();

  int buffer = 0;
  for (int k0 = 0; k0 < K; k0 += kTileK) {
    const bool has_next = k0 + kTileK < K;
    if (has_next) load_global(k0 + kTileK);  // in flight while we compute

#pragma unroll
    for (int k = 0; k < kTileK; ++k) {
      float a[8], b[8];
      const float4 a_lo = *reinterpret_cast<const float4*>(&a_tile[buffer][k][4 * ty]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&a_tile[buffer][k][64 + 4 * ty]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&b_tile[buffer][k][4 * tx]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&b_tile[buffer][k][64 + 4 * tx]);
      a[0] = a_lo.x, a[1] = a_lo.y, a[2] = a_lo.z, a[3] = a_lo.w;
      a[4] = a_hi.x, a[5] = a_hi.y, a[6] = a_hi.z, a[7] = a_hi.w;
      b[0] = b_lo.x, b[1] = b_lo.y, b[2] = b_lo.z, b[3] = b_lo.w;
      b[4] = b_hi.x, b[5] = b_hi.y, b[6] = b_hi.z, b[7] = b_hi.w;
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }

    // The other buffer was last read before the previous barrier: safe to overwrite.
    if (has_next) store_shared(buffer ^ 1);
    __syncthreads();
    buffer ^= 1;
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + (i < 4 ? 4 * ty + i : 64 + 4 * ty + (i - 4));
    if (row >= M) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = n0 + half * 64 + 4 * tx;
      float* out = C + static_cast<size_t>(row) * N + col;
      const float* v = &acc[i][half * 4];
      if constexpr (kVectorized) {
        if (col < N) *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < N) out[j] = v[j];
      }
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

void matmul_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                           cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const dim3 grid((N + kBlockN - 1) / kBlockN, (M + kBlockM - 1) / kBlockM);
  // float4 loads and stores need rows that start on 16-byte boundaries.
  if (K % 4 == 0 && N % 4 == 0 && aligned16(A) && aligned16(B) && aligned16(C))
    register_tiled_kernel<true><<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
  else
    register_tiled_kernel<false><<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

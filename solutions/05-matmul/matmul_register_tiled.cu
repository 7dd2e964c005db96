// Reference solution of chapter 05, exercise 3: register-tiled C = A·B.
//
// A block of 256 threads computes a 128 x 128 tile of C; each thread an 8 x 8 block of it in
// registers. Per step of kTileK along K, the block stages A's 128 x kTileK tile (transposed, so that a
// thread reads its 8 values of A as two float4) and B's kTileK x 128 tile in shared memory, double
// buffered, so that the global loads of the next step overlap the arithmetic of this one.
// Each value read from shared memory feeds 8 multiply-adds.
#include <cuda_pipeline.h>

#include <cstdint>

#include "matmul.h"
#ifdef COURSE_REFERENCE_VARIANTS  // the calibration program's build only
#include "matmul_variants.h"
#endif

// The reference's depth of a staged step along K, and how many blocks the compiler must fit on
// one SM (__launch_bounds__: 2 caps the registers at 128 per thread). Two blocks per SM hide
// each other's waits: 0.84 of cuBLAS on an H200 against 0.50 for one block (130 registers, a
// few too many for two), and a K step of 16 spills. The calibration program measures all four.
#ifndef REFERENCE_REGISTER_TILE_K
#define REFERENCE_REGISTER_TILE_K 8
#endif
#ifndef REFERENCE_REGISTER_MIN_BLOCKS
#define REFERENCE_REGISTER_MIN_BLOCKS 2
#endif

namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kThreads = 256;
constexpr int kPadA = 4;  // keeps the transposing store conflict-free and rows 16-byte aligned

// A thread's 8 rows are {4*ty .. 4*ty+3} and {64+4*ty .. 64+4*ty+3}, its 8 columns likewise
// with tx: a quarter-warp's float4 reads of a tile row are then 128 contiguous bytes, free of
// bank conflicts, and the float4 stores to C are coalesced.
template <bool kVectorized, int kTileK, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks) register_tiled_kernel(const float* __restrict__ A,
                                                                              const float* __restrict__ B,
                                                                              float* __restrict__ C, int M, int N,
                                                                              int K) {
  static_assert(kTileK % 8 == 0, "each thread loads whole float4s of both tiles");
  constexpr int kLoads = kTileK / 8;  // float4s of A, and of B, per thread per step
  __shared__ __align__(16) float a_tile[2][kTileK][kBlockM + kPadA];
  __shared__ __align__(16) float b_tile[2][kTileK][kBlockN];

  const int tid = threadIdx.x;
  const int tx = tid % 16;
  const int ty = tid / 16;
  const int m0 = blockIdx.y * kBlockM;
  const int n0 = blockIdx.x * kBlockN;

  // This thread's share of the loads: kLoads float4s of A (row a_row[l], columns a_k[l] ..
  // a_k[l] + 3) and as many of B (row b_k[l], columns b_n[l] .. b_n[l] + 3).
  int a_row[kLoads], a_k[kLoads], b_k[kLoads], b_n[kLoads];
#pragma unroll
  for (int l = 0; l < kLoads; ++l) {
    const int f = tid + l * kThreads;
    a_row[l] = f / (kTileK / 4);
    a_k[l] = (f % (kTileK / 4)) * 4;
    b_k[l] = f / (kBlockN / 4);
    b_n[l] = (f % (kBlockN / 4)) * 4;
  }

  float a_next[kLoads][4];
  float b_next[kLoads][4];
  auto load_global = [&](int k0) {
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      const int gm = m0 + a_row[l];
      const int gk = k0 + a_k[l];
      const int gbk = k0 + b_k[l];
      const int gn = n0 + b_n[l];
      if constexpr (kVectorized) {
        // K % 4 == 0 and N % 4 == 0: a float4 lies wholly inside or wholly outside.
        float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
        float4 b = make_float4(0.f, 0.f, 0.f, 0.f);
        if (gm < M && gk < K) a = *reinterpret_cast<const float4*>(A + static_cast<size_t>(gm) * K + gk);
        if (gbk < K && gn < N) b = *reinterpret_cast<const float4*>(B + static_cast<size_t>(gbk) * N + gn);
        a_next[l][0] = a.x, a_next[l][1] = a.y, a_next[l][2] = a.z, a_next[l][3] = a.w;
        b_next[l][0] = b.x, b_next[l][1] = b.y, b_next[l][2] = b.z, b_next[l][3] = b.w;
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          a_next[l][i] = (gm < M && gk + i < K) ? A[static_cast<size_t>(gm) * K + gk + i] : 0.0f;
          b_next[l][i] = (gbk < K && gn + i < N) ? B[static_cast<size_t>(gbk) * N + gn + i] : 0.0f;
        }
      }
    }
  };
  auto store_shared = [&](int buffer) {
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
#pragma unroll
      for (int i = 0; i < 4; ++i) a_tile[buffer][a_k[l] + i][a_row[l]] = a_next[l][i];
      *reinterpret_cast<float4*>(&b_tile[buffer][b_k[l]][b_n[l]]) =
          make_float4(b_next[l][0], b_next[l][1], b_next[l][2], b_next[l][3]);
    }
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

// The warp-tiled form (cuBLAS's FP32 kernels take this shape): 128 threads, 4 warps of 64 x 64
// outputs each, a thread 16 x 8 of them (rows wr*64 + 16*i + 4*lr + r, columns wc*64 + 32*j +
// 4*lc + c, for i < 4, j < 2, r, c < 4, warp (wr, wc), lane (lr, lc) of 4 x 8). Per step along
// K a thread reads 4 float4 of A and 2 of B (each one shared-memory wavefront per warp) for 128
// multiply-adds, against 4 for 64 above.
template <bool kVectorized, int kTileK, int kMinBlocks>
__global__ void __launch_bounds__(128, kMinBlocks) warp_tiled_kernel(const float* __restrict__ A,
                                                                     const float* __restrict__ B,
                                                                     float* __restrict__ C, int M, int N, int K) {
  constexpr int kWarpThreads = 128;
  static_assert(kTileK % 4 == 0, "each thread loads whole float4s of both tiles");
  constexpr int kLoads = kTileK / 4;  // float4s of A, and of B, per thread per step
  __shared__ __align__(16) float a_tile[2][kTileK][kBlockM + kPadA];
  __shared__ __align__(16) float b_tile[2][kTileK][kBlockN];

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int row_base = (warp / 2) * 64 + 4 * (lane / 8);
  const int col_base = (warp % 2) * 64 + 4 * (lane % 8);
  const int m0 = blockIdx.y * kBlockM;
  const int n0 = blockIdx.x * kBlockN;

  int a_row[kLoads], a_k[kLoads], b_k[kLoads], b_n[kLoads];
#pragma unroll
  for (int l = 0; l < kLoads; ++l) {
    const int f = tid + l * kWarpThreads;
    a_row[l] = f / (kTileK / 4);
    a_k[l] = (f % (kTileK / 4)) * 4;
    b_k[l] = f / (kBlockN / 4);
    b_n[l] = (f % (kBlockN / 4)) * 4;
  }

  float4 a_next[kLoads], b_next[kLoads];
  auto load_global = [&](int k0) {
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      const int gm = m0 + a_row[l];
      const int gk = k0 + a_k[l];
      const int gbk = k0 + b_k[l];
      const int gn = n0 + b_n[l];
      if constexpr (kVectorized) {
        a_next[l] = gm < M && gk < K ? *reinterpret_cast<const float4*>(A + static_cast<size_t>(gm) * K + gk)
                                     : make_float4(0.f, 0.f, 0.f, 0.f);
        b_next[l] = gbk < K && gn < N ? *reinterpret_cast<const float4*>(B + static_cast<size_t>(gbk) * N + gn)
                                      : make_float4(0.f, 0.f, 0.f, 0.f);
      } else {
        float a[4], b[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          a[i] = (gm < M && gk + i < K) ? A[static_cast<size_t>(gm) * K + gk + i] : 0.0f;
          b[i] = (gbk < K && gn + i < N) ? B[static_cast<size_t>(gbk) * N + gn + i] : 0.0f;
        }
        a_next[l] = make_float4(a[0], a[1], a[2], a[3]);
        b_next[l] = make_float4(b[0], b[1], b[2], b[3]);
      }
    }
  };
  auto store_shared = [&](int buffer) {
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      a_tile[buffer][a_k[l] + 0][a_row[l]] = a_next[l].x;
      a_tile[buffer][a_k[l] + 1][a_row[l]] = a_next[l].y;
      a_tile[buffer][a_k[l] + 2][a_row[l]] = a_next[l].z;
      a_tile[buffer][a_k[l] + 3][a_row[l]] = a_next[l].w;
      *reinterpret_cast<float4*>(&b_tile[buffer][b_k[l]][b_n[l]]) = b_next[l];
    }
  };

  float acc[16][8] = {};
  load_global(0);
  store_shared(0);
  __syncthreads();

  int buffer = 0;
  for (int k0 = 0; k0 < K; k0 += kTileK) {
    const bool has_next = k0 + kTileK < K;
    if (has_next) load_global(k0 + kTileK);  // in flight while we compute

#pragma unroll
    for (int k = 0; k < kTileK; ++k) {
      float a[16], b[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(&a_tile[buffer][k][row_base + 16 * i]);
        a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(&b_tile[buffer][k][col_base + 32 * j]);
        b[4 * j] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < 16; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }

    // The other buffer was last read before the previous barrier: safe to overwrite.
    if (has_next) store_shared(buffer ^ 1);
    __syncthreads();
    buffer ^= 1;
  }

#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const int row = m0 + row_base + 16 * (i / 4) + i % 4;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int col = n0 + col_base + 32 * j;
      float* out = C + static_cast<size_t>(row) * N + col;
      const float* v = &acc[i][4 * j];
      if constexpr (kVectorized) {
        if (col < N) *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (col + c < N) out[c] = v[c];
      }
    }
  }
}

#ifdef COURSE_REFERENCE_VARIANTS
// Calibration only: the same 8 x 8 outputs per thread, but the tiles filled by asynchronous copies
// (chapter 07), kStages of them in flight, one barrier per step; A kept as it lies (rows of K),
// read as float4 along K, four steps of K at a time. Needs K % 4 == 0, N % 4 == 0 and 16-byte
// aligned matrices (the launcher checks). Shared memory is dynamic (more than 48 KiB may be asked).
template <int kTileK, int kStages, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks) async_tiled_kernel(const float* __restrict__ A,
                                                                           const float* __restrict__ B,
                                                                           float* __restrict__ C, int M, int N, int K) {
  constexpr int kRowA = kTileK + 4;  // padded row of A's tile (floats), 16-byte multiple
  constexpr int kStageFloats = kBlockM * kRowA + kTileK * kBlockN;
  constexpr int kLoads = kTileK / 8;  // float4s of A, and of B, per thread per step
  extern __shared__ __align__(16) float smem[];
  auto a_tile = [&](int stage) { return smem + stage * kStageFloats; };
  auto b_tile = [&](int stage) { return smem + stage * kStageFloats + kBlockM * kRowA; };

  const int tid = threadIdx.x;
  const int tx = tid % 16;
  const int ty = tid / 16;
  const int m0 = blockIdx.y * kBlockM;
  const int n0 = blockIdx.x * kBlockN;
  const int steps = (K + kTileK - 1) / kTileK;

  auto load = [&](int step) {
    if (step < steps) {
      const int k0 = step * kTileK;
      float* a = a_tile(step % kStages);
      float* b = b_tile(step % kStages);
#pragma unroll
      for (int l = 0; l < kLoads; ++l) {
        const int f = tid + l * kThreads;
        const int row = f / (kTileK / 4), kc = (f % (kTileK / 4)) * 4;
        const bool a_in = m0 + row < M && k0 + kc < K;
        __pipeline_memcpy_async(a + row * kRowA + kc, a_in ? A + static_cast<size_t>(m0 + row) * K + k0 + kc : A, 16,
                                a_in ? 0 : 16);
        const int bk = f / (kBlockN / 4), bn = (f % (kBlockN / 4)) * 4;
        const bool b_in = k0 + bk < K && n0 + bn < N;
        __pipeline_memcpy_async(b + bk * kBlockN + bn, b_in ? B + static_cast<size_t>(k0 + bk) * N + n0 + bn : B, 16,
                                b_in ? 0 : 16);
      }
    }
    __pipeline_commit();  // an empty batch past the end keeps the wait count right
  };

  float acc[8][8] = {};
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) load(s);

  for (int step = 0; step < steps; ++step) {
    __pipeline_wait_prior(kStages - 2);  // this thread's copies of `step` have landed
    __syncthreads();                     // everyone's have, and everyone is done with step - 1
    load(step + kStages - 1);            // into the stage that step - 1 used
    const float* a = a_tile(step % kStages);
    const float* b = b_tile(step % kStages);
#pragma unroll
    for (int kc = 0; kc < kTileK; kc += 4) {
      float4 a4[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int row = i < 4 ? 4 * ty + i : 64 + 4 * ty + (i - 4);
        a4[i] = *reinterpret_cast<const float4*>(a + row * kRowA + kc);
      }
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const float4 b_lo = *reinterpret_cast<const float4*>(b + (kc + kk) * kBlockN + 4 * tx);
        const float4 b_hi = *reinterpret_cast<const float4*>(b + (kc + kk) * kBlockN + 64 + 4 * tx);
        const float bv[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const float av = kk == 0 ? a4[i].x : kk == 1 ? a4[i].y : kk == 2 ? a4[i].z : a4[i].w;
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[i][j] += av * bv[j];
        }
      }
    }
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + (i < 4 ? 4 * ty + i : 64 + 4 * ty + (i - 4));
    if (row >= M) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = n0 + half * 64 + 4 * tx;
      if (col < N)
        *reinterpret_cast<float4*>(C + static_cast<size_t>(row) * N + col) =
            make_float4(acc[i][half * 4], acc[i][half * 4 + 1], acc[i][half * 4 + 2], acc[i][half * 4 + 3]);
    }
  }
}
#endif

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <int kTileK, int kMinBlocks>
void launch_warp_tiled(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const dim3 grid((N + kBlockN - 1) / kBlockN, (M + kBlockM - 1) / kBlockM);
  if (K % 4 == 0 && N % 4 == 0 && aligned16(A) && aligned16(B) && aligned16(C))
    warp_tiled_kernel<true, kTileK, kMinBlocks><<<grid, 128, 0, stream>>>(A, B, C, M, N, K);
  else
    warp_tiled_kernel<false, kTileK, kMinBlocks><<<grid, 128, 0, stream>>>(A, B, C, M, N, K);
}

template <int kTileK, int kMinBlocks>
void launch(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const dim3 grid((N + kBlockN - 1) / kBlockN, (M + kBlockM - 1) / kBlockM);
  // float4 loads and stores need rows that start on 16-byte boundaries.
  if (K % 4 == 0 && N % 4 == 0 && aligned16(A) && aligned16(B) && aligned16(C))
    register_tiled_kernel<true, kTileK, kMinBlocks><<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
  else
    register_tiled_kernel<false, kTileK, kMinBlocks><<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

}  // namespace

void matmul_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                           cudaStream_t stream) {
  launch<REFERENCE_REGISTER_TILE_K, REFERENCE_REGISTER_MIN_BLOCKS>(A, B, C, M, N, K, stream);
}

#ifdef COURSE_REFERENCE_VARIANTS
namespace {
template <int kTileK, int kStages, int kMinBlocks>
void launch_async(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if (!(K % 4 == 0 && N % 4 == 0 && aligned16(A) && aligned16(B) && aligned16(C)))
    return launch<kTileK, kMinBlocks>(A, B, C, M, N, K, stream);
  constexpr size_t kBytes = sizeof(float) * kStages * (kBlockM * (kTileK + 4) + kTileK * kBlockN);
  auto* kernel = async_tiled_kernel<kTileK, kStages, kMinBlocks>;
  (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kBytes));
  const dim3 grid((N + kBlockN - 1) / kBlockN, (M + kBlockM - 1) / kBlockM);
  kernel<<<grid, kThreads, kBytes, stream>>>(A, B, C, M, N, K);
}
}  // namespace

void matmul_async_tiled_variant(int tile_k, int stages, int min_blocks, const float* A, const float* B, float* C, int M,
                                int N, int K, cudaStream_t stream) {
  if (tile_k == 8 && stages == 3 && min_blocks == 2) return launch_async<8, 3, 2>(A, B, C, M, N, K, stream);
  if (tile_k == 8 && stages == 4 && min_blocks == 2) return launch_async<8, 4, 2>(A, B, C, M, N, K, stream);
  if (tile_k == 16 && stages == 2 && min_blocks == 2) return launch_async<16, 2, 2>(A, B, C, M, N, K, stream);
  if (tile_k == 16 && stages == 3 && min_blocks == 2) return launch_async<16, 3, 2>(A, B, C, M, N, K, stream);
  if (tile_k == 16 && stages == 3 && min_blocks == 1) return launch_async<16, 3, 1>(A, B, C, M, N, K, stream);
}

void matmul_register_tiled_variant(int threads, int tile_k, int min_blocks, const float* A, const float* B, float* C,
                                   int M, int N, int K, cudaStream_t stream) {
  if (threads == 256 && tile_k == 8 && min_blocks == 1) return launch<8, 1>(A, B, C, M, N, K, stream);
  if (threads == 256 && tile_k == 8 && min_blocks == 2) return launch<8, 2>(A, B, C, M, N, K, stream);
  if (threads == 256 && tile_k == 16 && min_blocks == 1) return launch<16, 1>(A, B, C, M, N, K, stream);
  if (threads == 256 && tile_k == 16 && min_blocks == 2) return launch<16, 2>(A, B, C, M, N, K, stream);
  if (threads == 128 && tile_k == 8 && min_blocks == 1) return launch_warp_tiled<8, 1>(A, B, C, M, N, K, stream);
  if (threads == 128 && tile_k == 8 && min_blocks == 2) return launch_warp_tiled<8, 2>(A, B, C, M, N, K, stream);
  if (threads == 128 && tile_k == 8 && min_blocks == 3) return launch_warp_tiled<8, 3>(A, B, C, M, N, K, stream);
  if (threads == 128 && tile_k == 16 && min_blocks == 2) return launch_warp_tiled<16, 2>(A, B, C, M, N, K, stream);
}
#endif

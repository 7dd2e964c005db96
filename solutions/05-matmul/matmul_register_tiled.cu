// Reference solution of chapter 05, exercise 3: register-tiled C = A·B.
//
// Two kernels, one technique: each thread accumulates a block of C in registers from tiles of A
// and B staged in shared memory, so that each value read from shared memory feeds several
// multiply-adds.
//
// - register_tiled_kernel, the plain form and the one that takes any input: a block of 256
//   threads computes a 128 x 128 tile of C, each thread an 8 x 8 block of it. Per step of
//   kTileK along K it stages A's 128 x kTileK tile (transposed, so that a thread reads its 8
//   values of A as two float4) and B's kTileK x 128 tile, double buffered through registers, so
//   that the global loads of the next step overlap the arithmetic of this one. 0.83-0.85 of
//   cuBLAS at 4096^3 on the H100 and the H200.
// - warp_tiled_kernel, used where its conditions hold (see matmul_register_tiled): cuBLAS's
//   shape. A block of 256 threads computes a 128 x 256 tile, each warp 64 x 64 of it, each
//   thread 16 x 8 (128 accumulators: 6 shared-memory reads per 128 multiply-adds), the tiles
//   filled by asynchronous copies (chapter 07) four steps deep. 0.92 of cuBLAS on the H100 and
//   the H200.
#include <cuda_pipeline.h>

#include <climits>
#include <cstdint>

#include "matmul.h"
#ifdef COURSE_REFERENCE_VARIANTS  // the calibration program's build only
#include "matmul_variants.h"
#endif

// The plain kernel's depth of a staged step along K, and how many blocks the compiler must fit
// on one SM (__launch_bounds__: 2 caps the registers at 128 per thread). Two blocks per SM hide
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
  // The tiles of C numbered along the grid's x dimension, row of tiles by row of tiles (the order
  // a 2-D grid runs them in): gridDim.y stops at 65535 blocks, 8,388,480 rows of C.
  const int tiles_n = (N + kBlockN - 1) / kBlockN;
  const int m0 = static_cast<int>(blockIdx.x / tiles_n) * kBlockM;
  const int n0 = static_cast<int>(blockIdx.x % tiles_n) * kBlockN;

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

// cuBLAS's shape for FP32 (its kernel at 4096^3 computes 256 x 128 tiles with 8 warps, 128
// outputs per thread, three stages of asynchronous copies). Here a block of 256 threads computes
// a 128 x 256 tile of C: warps 2 (rows) x 4 (columns) of 64 x 64, a lane (lm, ln) of 4 x 8 the
// rows wr*64 + 16*i + 4*lm + r and columns wc*64 + 32*j + 4*ln + c (i < 4, j < 2, r, c < 4). Per k
// a thread reads 4 float4 of A's tile and 2 of B's, each a single shared-memory wavefront per
// warp, for 128 multiply-adds.
//
// The tiles are filled by asynchronous copies (no registers in between), kStages steps of
// kWarpTileK deep: B's rows as 16-byte copies, A's 128 x kWarpTileK tile transposed by 4-byte
// copies (a warp reads 2 rows x 64 bytes, whole sectors). Every thread's copies start from
// 32-bit offsets against a per-block base, so the copies cost few registers and instructions:
// rows of A and columns of B past the edge are clamped to the last ones (they feed only outputs
// that are never stored), and only a step that crosses the end of K zero-fills.
//
// One barrier per step, placed before the step's last k: the next step's first values of A and B
// are read from shared memory while the last k's multiply-adds run. kGroupRows block rows are
// scheduled together, so that the blocks resident at once share the columns of B they read.
constexpr int kWarpBlockM = 128, kWarpBlockN = 256, kWarpTileK = 16, kWarpStages = 4, kWarpGroupRows = 8;

// The warp-tiled kernel's shared memory, kStages steps of A's transposed tile and B's tile.
constexpr int kWarpPitchA = kWarpBlockM + 4;  // keeps the transposing copies conflict-free
constexpr int kWarpStageFloats = kWarpTileK * kWarpPitchA + kWarpTileK * kWarpBlockN;
constexpr size_t warp_tiled_shared_bytes(int stages) { return sizeof(float) * stages * kWarpStageFloats; }

template <int kStages, int kGroupRows, bool kEarlyBarrier>
__global__ void __launch_bounds__(kThreads, 1) warp_tiled_kernel(const float* __restrict__ A,
                                                                 const float* __restrict__ B,
                                                                 float* __restrict__ C, int M, int N, int K) {
  constexpr int BM = kWarpBlockM, BN = kWarpBlockN, BK = kWarpTileK;
  constexpr int kPitchA = kWarpPitchA, kStageFloats = kWarpStageFloats;
  constexpr int kLoadsA = BM * BK / kThreads;      // 4-byte copies of A per thread per step
  constexpr int kLoadsB = BK * BN / 4 / kThreads;  // 16-byte copies of B per thread per step
  constexpr int kRowsA = kThreads / BK;            // rows of A between a thread's copies
  constexpr int kRowsB = kThreads * 4 / BN;        // rows of B between a thread's copies
  extern __shared__ __align__(16) float stages[];

  // Block (bm, bn) from a 1-D grid, kGroupRows block rows at a time, column by column.
  const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
  const int group = blockIdx.x / (kGroupRows * grid_n);
  const int rows_in_group = min(grid_m - group * kGroupRows, kGroupRows);
  const int in_group = blockIdx.x % (kGroupRows * grid_n);
  const int m0 = (group * kGroupRows + in_group % rows_in_group) * BM;
  const int n0 = (in_group / rows_in_group) * BN;

  const int tid = threadIdx.x;
  const int steps = (K + BK - 1) / BK;

  // This thread's copies: A's column a_k of rows a_r + l*kRowsA, B's row b_k + l*kRowsB at b_n.
  const int a_k = tid % BK, a_r = tid / BK;
  const float* a_block = A + static_cast<size_t>(m0) * K + a_k;
  int a_offset[kLoadsA];
#pragma unroll
  for (int l = 0; l < kLoadsA; ++l) a_offset[l] = min(a_r + l * kRowsA, M - 1 - m0) * K;
  const int a_to = a_k * kPitchA + a_r;
  const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;
  const float* b_block = B + min(n0 + b_n, N - 4);
  const int b_to = BK * kPitchA + b_k * BN + b_n;

  auto copy_step = [&](int step, float* stage) {
    if (step < steps) {
      const int k0 = step * BK;
      const float* a = a_block + k0;
      const float* b = b_block + static_cast<size_t>(k0 + b_k) * N;
      if (k0 + BK <= K) {
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) __pipeline_memcpy_async(stage + a_to + l * kRowsA, a + a_offset[l], 4);
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l)
          __pipeline_memcpy_async(stage + b_to + l * kRowsB * BN, b + l * kRowsB * N, 16);
      } else {  // the last step, past the end of K: zeros
        const bool a_in = k0 + a_k < K;
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l)
          __pipeline_memcpy_async(stage + a_to + l * kRowsA, a_in ? a + a_offset[l] : A, 4, a_in ? 0 : 4);
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
          const bool b_in = k0 + b_k + l * kRowsB < K;
          __pipeline_memcpy_async(stage + b_to + l * kRowsB * BN, b_in ? b + l * kRowsB * N : B, 16, b_in ? 0 : 16);
        }
      }
    }
    __pipeline_commit();  // an empty batch past the end keeps the count of batches in flight right
  };

  const int warp = tid / 32, lane = tid % 32;
  const int row_base = (warp / 4) * 64 + (lane / 8) * 4;
  const int col_base = (warp % 4) * 64 + (lane % 8) * 4;
  float acc[16][8] = {};

  // The 16 values of A and 8 of B that this thread needs at depth k of a stage.
  auto read_k = [&](const float* stage, int k, float (&a)[16], float (&b)[8]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(stage + k * kPitchA + row_base + 16 * i);
      a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const float4 v = *reinterpret_cast<const float4*>(stage + BK * kPitchA + k * BN + col_base + 32 * j);
      b[4 * j] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
    }
  };
  auto multiply_add = [&](const float (&a)[16], const float (&b)[8]) {
#pragma unroll
    for (int i = 0; i < 16; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  };

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) copy_step(s, stages + s * kStageFloats);
  int read = 0, write = kStages - 1;
  if constexpr (kEarlyBarrier) {
    __pipeline_wait_prior(kStages - 2);  // step 0 has landed
    __syncthreads();
    float a[2][16], b[2][8];
    read_k(stages, 0, a[0], b[0]);
    for (int step = 0; step < steps; ++step) {
      // Every thread read the stage `write` for the last time before the previous barrier.
      copy_step(step + kStages - 1, stages + write * kStageFloats);
      write = write + 1 == kStages ? 0 : write + 1;
      const float* stage = stages + read * kStageFloats;
#pragma unroll
      for (int k = 0; k < BK - 1; ++k) {
        read_k(stage, k + 1, a[(k + 1) % 2], b[(k + 1) % 2]);
        multiply_add(a[k % 2], b[k % 2]);
      }
      __pipeline_wait_prior(kStages - 2);  // step + 1 has landed, this thread's copies of it
      __syncthreads();                     // and everyone's
      read = read + 1 == kStages ? 0 : read + 1;
      if (step + 1 < steps) read_k(stages + read * kStageFloats, 0, a[BK % 2], b[BK % 2]);
      multiply_add(a[(BK - 1) % 2], b[(BK - 1) % 2]);
    }
  } else {  // calibration: the barrier at the top of each step, before any of its reads
    for (int step = 0; step < steps; ++step) {
      __pipeline_wait_prior(kStages - 2);  // step has landed
      __syncthreads();                     // everyone's copies, and everyone is done with step - 1
      copy_step(step + kStages - 1, stages + write * kStageFloats);
      write = write + 1 == kStages ? 0 : write + 1;
      const float* stage = stages + read * kStageFloats;
      read = read + 1 == kStages ? 0 : read + 1;
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        float a[16], b[8];
        read_k(stage, k, a, b);
        multiply_add(a, b);
      }
    }
  }

#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const int row = m0 + row_base + 16 * (i / 4) + i % 4;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int col = n0 + col_base + 32 * j;
      if (col < N)  // N % 4 == 0: a float4 lies wholly inside or wholly outside
        *reinterpret_cast<float4*>(C + static_cast<size_t>(row) * N + col) =
            make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <int kTileK, int kMinBlocks>
void launch(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const unsigned grid =
      static_cast<unsigned>((N + kBlockN - 1) / kBlockN) * static_cast<unsigned>((M + kBlockM - 1) / kBlockM);
  // float4 loads and stores need rows that start on 16-byte boundaries.
  if (K % 4 == 0 && N % 4 == 0 && aligned16(A) && aligned16(B) && aligned16(C))
    register_tiled_kernel<true, kTileK, kMinBlocks><<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
  else
    register_tiled_kernel<false, kTileK, kMinBlocks><<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

// Launches the warp-tiled kernel and returns true where it applies: B's rows and C's in whole
// float4 (N % 4 == 0, 16-byte aligned), offsets within a block's rows that fit in an int, enough
// shared memory per block (GPUs of compute capability 7.5 have 64 KiB), and enough 128 x 256
// blocks to keep half the SMs busy (at 1000^2 the 128 x 128 tiles are 1.7x faster, at 2048^2 the
// large ones 1.1x on the H100).
template <int kStages, int kGroupRows, bool kEarlyBarrier>
bool launch_warp_tiled(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  constexpr size_t kSharedBytes = warp_tiled_shared_bytes(kStages);
  if (N % 4 != 0 || !aligned16(B) || !aligned16(C)) return false;
  if (K >= INT_MAX / kWarpBlockM || N >= INT_MAX / kWarpTileK) return false;
  const long long blocks = 1LL * ((M + kWarpBlockM - 1) / kWarpBlockM) * ((N + kWarpBlockN - 1) / kWarpBlockN);
  int device = 0, sms = 0, shared_optin = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess)
    return false;
  if (static_cast<size_t>(shared_optin) < kSharedBytes || 2 * blocks < sms || blocks > INT_MAX) return false;
  auto* kernel = warp_tiled_kernel<kStages, kGroupRows, kEarlyBarrier>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSharedBytes)) !=
      cudaSuccess)
    return false;
  kernel<<<static_cast<unsigned>(blocks), kThreads, kSharedBytes, stream>>>(A, B, C, M, N, K);
  return true;
}

}  // namespace

void matmul_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                           cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if (launch_warp_tiled<kWarpStages, kWarpGroupRows, true>(A, B, C, M, N, K, stream)) return;
  launch<REFERENCE_REGISTER_TILE_K, REFERENCE_REGISTER_MIN_BLOCKS>(A, B, C, M, N, K, stream);
}

#ifdef COURSE_REFERENCE_VARIANTS
void matmul_warp_tiled_variant(int stages, int group_rows, bool early_barrier, const float* A, const float* B, float* C,
                               int M, int N, int K, cudaStream_t stream) {
  bool ran = false;
  if (stages == 4 && group_rows == 8 && early_barrier) ran = launch_warp_tiled<4, 8, true>(A, B, C, M, N, K, stream);
  if (stages == 4 && group_rows == 8 && !early_barrier) ran = launch_warp_tiled<4, 8, false>(A, B, C, M, N, K, stream);
  if (stages == 4 && group_rows == 1 && early_barrier) ran = launch_warp_tiled<4, 1, true>(A, B, C, M, N, K, stream);
  if (stages == 3 && group_rows == 8 && early_barrier) ran = launch_warp_tiled<3, 8, true>(A, B, C, M, N, K, stream);
  if (stages == 2 && group_rows == 8 && early_barrier) ran = launch_warp_tiled<2, 8, true>(A, B, C, M, N, K, stream);
  if (!ran) launch<8, 2>(A, B, C, M, N, K, stream);
}

void matmul_register_tiled_variant(int tile_k, int min_blocks, const float* A, const float* B, float* C, int M, int N,
                                   int K, cudaStream_t stream) {
  if (tile_k == 8 && min_blocks == 1) return launch<8, 1>(A, B, C, M, N, K, stream);
  if (tile_k == 8 && min_blocks == 2) return launch<8, 2>(A, B, C, M, N, K, stream);
  if (tile_k == 16 && min_blocks == 1) return launch<16, 1>(A, B, C, M, N, K, stream);
  if (tile_k == 16 && min_blocks == 2) return launch<16, 2>(A, B, C, M, N, K, stream);
}
#endif

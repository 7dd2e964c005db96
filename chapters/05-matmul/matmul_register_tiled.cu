// Chapter 05, exercise 3 (stretch, optional): register tiling. Edit this file only.
// Read README.md beside it first; tests: ctest --preset student -R 05-matmul
//
// The launch configuration is yours: change the constants, the block shape and the grid
// below as your kernel needs.
#include "matmul.h"

namespace {

constexpr int kBlockM = 64;   // rows of C per block
constexpr int kBlockN = 64;   // columns of C per block
constexpr int kTileK = 16;    // depth of the shared-memory tiles
constexpr int kThreadM = 4;   // rows of C per thread
constexpr int kThreadN = 4;   // columns of C per thread
constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);  // 256
static_assert(kBlockM % kThreadM == 0 && kBlockN % kThreadN == 0 && kTileK > 0, "tile shapes must divide");

__global__ void __launch_bounds__(kThreads) matmul_register_tiled_kernel(const float* A, const float* B,
                                                                          float* C, int M, int N, int K) {
  // TODO(1): Shared tiles of A (kBlockM x kTileK) and B (kTileK x kBlockN), and a
  //          kThreadM x kThreadN array of accumulators in registers (index it only with
  //          compile-time constants, in fully unrolled loops, or it goes to local memory).

  // TODO(2): Loop over K in steps of kTileK: all kThreads threads cooperate to load both tiles
  //          (several elements each, coalesced, 0 outside the matrices), then wait.

  // TODO(3): For each k of the tile, load kThreadM values of A's tile and kThreadN of B's
  //          into registers and do the kThreadM * kThreadN multiply-adds of their outer
  //          product. Wait before the next tiles are loaded.

  // TODO(4): Write the kThreadM x kThreadN results to C, skipping those outside C.
}

}  // namespace

void matmul_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                           cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const dim3 grid((N + kBlockN - 1) / kBlockN, (M + kBlockM - 1) / kBlockM);
  matmul_register_tiled_kernel<<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

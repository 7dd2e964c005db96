// Threshold check: "tiled" C = A·B that is really the naive kernel. Correct, so only the
// tiled-vs-naive perf test may fail (1.0x of naive, 1.3x needed).
#include "matmul.h"

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  matmul_naive(A, B, C, M, N, K, stream);
}

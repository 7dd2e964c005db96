// Reference solution of chapter 04, exercise 2: a warp per row, shuffles for the last sum.
#include "coalescing.h"

namespace {

constexpr int kWarpsPerBlock = 8;

__global__ void row_sums_kernel(const float* __restrict__ matrix, float* __restrict__ sums, int rows, int cols) {
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;  // a whole warp leaves together: the shuffles below see all 32 lanes
  const float* line = matrix + static_cast<std::size_t>(row) * cols;
  // Four independent partial sums keep more loads in flight per lane.
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  int c = lane;
  for (; c + 96 < cols; c += 128) {
    s0 += line[c];
    s1 += line[c + 32];
    s2 += line[c + 64];
    s3 += line[c + 96];
  }
  for (; c < cols; c += 32) s0 += line[c];
  float sum = (s0 + s1) + (s2 + s3);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) sums[row] = sum;
}

}  // namespace

void row_sums_coalesced(const float* matrix, float* sums, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0) return;
  row_sums_kernel<<<(rows + kWarpsPerBlock - 1) / kWarpsPerBlock, 32 * kWarpsPerBlock, 0, stream>>>(matrix, sums,
                                                                                                  rows, cols);
}

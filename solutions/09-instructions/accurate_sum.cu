// Reference solution of chapter 09, exercise 2: every addition in double, one rounding at the end.
// n = 0 gives 0 (one block of no values); NaN and infinities propagate as IEEE additions do.
#include <algorithm>

#include "instructions.h"

namespace {

constexpr int kBlock = 256;

__device__ double block_sum(double value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  __shared__ double warp_sums[kBlock / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
  __syncthreads();
  value = threadIdx.x < kBlock / 32 ? warp_sums[threadIdx.x] : 0.0;
  if (threadIdx.x < 32)
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;  // in thread 0
}

// Loop rounds a thread adds into one chunk before the chunk goes into its sum: every value
// passes through at most kChunkRounds + (rounds / kChunkRounds) + ~40 roundings in double, so the
// error stays below 2^-42 of the sum of magnitudes for n <= 2^32 on any GPU (instructions.h).
constexpr int kChunkRounds = 1024;

__global__ void partial_sums_kernel(const float* __restrict__ in, std::size_t n, double* __restrict__ partial) {
  // A float converts to double exactly, and a double carries 29 more bits than a float: each
  // addition here errs by at most 2^-53 of its result, far below the float result's last bit
  // unless the values cancel by many orders of magnitude.
  double sum = 0.0;
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  // Four loads in flight per thread.
  while (i + 3 * stride < n) {
    double chunk = 0.0;
    for (int round = 0; round < kChunkRounds && i + 3 * stride < n; ++round, i += 4 * stride) {
      const float a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
      chunk += (static_cast<double>(a) + b) + (static_cast<double>(c) + d);
    }
    sum += chunk;
  }
  for (; i < n; i += stride) sum += in[i];
  sum = block_sum(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

__global__ void final_sum_kernel(const double* __restrict__ partial, int count, float* result) {
  double sum = 0.0;
  for (int b = threadIdx.x; b < count; b += kBlock) sum += partial[b];
  sum = block_sum(sum);
  if (threadIdx.x == 0) *result = static_cast<float>(sum);  // the only rounding to float
}

}  // namespace

void sum_accurate(const float* in, std::size_t n, float* result, double* workspace, cudaStream_t stream) {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const std::size_t wanted = std::max<std::size_t>(1, std::min<std::size_t>(sms * 8, (n + kBlock - 1) / kBlock));
  const int blocks = static_cast<int>(std::min<std::size_t>(wanted, kSumWorkspaceDoubles));
  partial_sums_kernel<<<blocks, kBlock, 0, stream>>>(in, n, workspace);
  final_sum_kernel<<<1, kBlock, 0, stream>>>(workspace, blocks, result);
}

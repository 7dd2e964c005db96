// Given code of chapter 02: the light kernel and the sequential version. Not an exercise.
#include "transfers.h"

namespace {
__global__ void light_kernel_body(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    out[i] = 2.0f * in[i] + 1.0f;
}
}  // namespace

void light_kernel(const float* device_in, float* device_out, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  const size_t blocks = (n + 255) / 256;
  light_kernel_body<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(device_in, device_out, n);
}

void process_sequential(const float* host_in, float* host_out, float* device_in, float* device_out, size_t n,
                        cudaStream_t stream) {
  const size_t bytes = n * sizeof(float);
  cudaMemcpyAsync(device_in, host_in, bytes, cudaMemcpyHostToDevice, stream);
  light_kernel(device_in, device_out, n, stream);
  cudaMemcpyAsync(host_out, device_out, bytes, cudaMemcpyDeviceToHost, stream);
}

// Given code of chapter 11. Compiled into the chapter's library, with its architectures.
#include "deploy.h"

#define COURSE_STRINGIFY2(...) #__VA_ARGS__
#define COURSE_STRINGIFY(...) COURSE_STRINGIFY2(__VA_ARGS__)

const char* chapter_cuda_arch_list() {
#ifdef __CUDA_ARCH_LIST__
  return COURSE_STRINGIFY(__CUDA_ARCH_LIST__);
#else
  return "";
#endif
}

namespace {
__global__ void report_arch_kernel(int* out) {
#ifdef __CUDA_ARCH__
  *out = __CUDA_ARCH__;
#endif
}

__global__ void heavy_kernel_body(const float* __restrict__ in, float* __restrict__ out, size_t n, int iterations) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    float x = in[i];
    for (int k = 0; k < iterations; ++k) x = fmaf(x, 0.999f, 0.001f);
    out[i] = x;
  }
}
}  // namespace

int running_cuda_arch() {
  int* device_value = nullptr;
  int value = 0;
  if (cudaMalloc(&device_value, sizeof(int)) != cudaSuccess) return 0;
  report_arch_kernel<<<1, 1>>>(device_value);
  if (cudaGetLastError() == cudaSuccess && cudaMemcpy(&value, device_value, sizeof value, cudaMemcpyDeviceToHost) != cudaSuccess)
    value = 0;
  cudaFree(device_value);
  return value;
}

cudaError_t probe_kernel_attributes(cudaFuncAttributes* attributes) {
  return cudaFuncGetAttributes(attributes, report_arch_kernel);
}

void heavy_kernel(const float* device_in, float* device_out, size_t n, int iterations, cudaStream_t stream) {
  if (n == 0) return;
  const size_t blocks = (n + 255) / 256;
  heavy_kernel_body<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(device_in, device_out, n,
                                                                                                 iterations);
}

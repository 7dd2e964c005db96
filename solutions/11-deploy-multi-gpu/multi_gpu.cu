// Reference solution of chapter 11, exercise 2: one computation over several GPUs.
#include <vector>

#include "deploy.h"

cudaError_t compute_on_devices(const float* host_in, float* host_out, size_t n, int iterations, const int* devices,
                               int device_count) {
  if (n == 0 || device_count < 1) return cudaSuccess;
  // Every id must name a device, whether or not its part is empty: checked before anything is
  // allocated, so that nothing is left to release.
  int visible = 0;
  const cudaError_t counted = cudaGetDeviceCount(&visible);
  if (counted != cudaSuccess) return counted;
  for (int d = 0; d < device_count; ++d)
    if (devices[d] < 0 || devices[d] >= visible) return cudaErrorInvalidDevice;
  int caller_device = 0;
  cudaError_t first_error = cudaGetDevice(&caller_device);
  auto keep = [&](cudaError_t status) {
    if (first_error == cudaSuccess) first_error = status;
  };

  struct Part {
    cudaStream_t stream = nullptr;
    float* in = nullptr;
    float* out = nullptr;
  };
  std::vector<Part> parts(device_count);
  // Enqueue everything first, so that all devices work at the same time.
  for (int d = 0; d < device_count; ++d) {
    const size_t begin = n * d / device_count, end = n * (d + 1) / device_count, count = end - begin;
    if (count == 0) continue;
    Part& p = parts[d];
    // Nothing more for a device that cannot be made current or given a stream.
    cudaError_t status = cudaSetDevice(devices[d]);
    if (status == cudaSuccess) status = cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking);
    if (status == cudaSuccess) status = cudaMallocAsync(&p.in, count * sizeof(float), p.stream);
    if (status == cudaSuccess) status = cudaMallocAsync(&p.out, count * sizeof(float), p.stream);
    keep(status);
    if (first_error != cudaSuccess) break;
    keep(cudaMemcpyAsync(p.in, host_in + begin, count * sizeof(float), cudaMemcpyHostToDevice, p.stream));
    heavy_kernel(p.in, p.out, count, iterations, p.stream);
    keep(cudaGetLastError());
    keep(cudaMemcpyAsync(host_out + begin, p.out, count * sizeof(float), cudaMemcpyDeviceToHost, p.stream));
  }
  // Then wait for each device and release what it used.
  for (int d = 0; d < device_count; ++d) {
    Part& p = parts[d];
    if (p.stream == nullptr) continue;
    keep(cudaSetDevice(devices[d]));
    if (p.in) keep(cudaFreeAsync(p.in, p.stream));
    if (p.out) keep(cudaFreeAsync(p.out, p.stream));
    keep(cudaStreamSynchronize(p.stream));
    keep(cudaStreamDestroy(p.stream));
  }
  keep(cudaSetDevice(caller_device));
  return first_error;
}

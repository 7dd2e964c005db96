// Calibration of chapter 10: the given hot-and-streaming kernel with and without a persisting
// window, for hot tables of several sizes and several hit ratios, 1 GiB streamed.
// Usage: build/calibrate_l2_persistence
#include <algorithm>
#include <cstdio>
#include <vector>

#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "l2_persistence.h"

namespace {

float time_ms(cudaStream_t stream, const float* hot, std::size_t hot_count, const float* in, float* out,
              std::size_t count) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int run = 0; run < 11; ++run) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    enqueue_hot_and_streaming(hot, hot_count, in, out, count, stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (run > 0) times.push_back(ms);  // the first run warms up
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main() {
  const std::size_t count = std::size_t{256} << 20;  // 1 GiB streamed in, 1 GiB out
  course::DeviceBuffer<float> in(count), out(count);
  CUDA_CHECK(cudaMemset(in.data(), 0, in.bytes()));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("%s\n\n| hot table | no window (ms) | window (ms) | speed-up | window's hit ratio |\n"
              "| ---: | ---: | ---: | ---: | ---: |\n", course::device_line().c_str());
  for (std::size_t mib : {4, 16, 24, 32, 48, 64, 96}) {
    const std::size_t hot_count = (mib << 20) / sizeof(float);
    course::DeviceBuffer<float> hot(hot_count);
    CUDA_CHECK(cudaMemset(hot.data(), 0, hot.bytes()));
    const float plain = time_ms(stream, hot.data(), hot_count, in.data(), out.data(), count);
    const L2WindowPlan plan = set_persisting_window(stream, hot.data(), hot.bytes());
    const float windowed = time_ms(stream, hot.data(), hot_count, in.data(), out.data(), count);
    clear_persisting_window(stream);
    std::printf("| %zu MiB | %.3f | %.3f | %.3f | %.3f |\n", mib, plain, windowed, plain / windowed, plan.hit_ratio);
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

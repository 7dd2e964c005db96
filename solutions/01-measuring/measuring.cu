// Reference solution of chapter 01: host and event timers, theoretical and effective bandwidth.
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "measuring.h"

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(status));
}

}  // namespace

double host_elapsed_ms(const EnqueueWork& enqueue, cudaStream_t stream) {
  // Earlier work on the stream must not count: start from an idle stream.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const auto start = std::chrono::steady_clock::now();
  enqueue(stream);
  // Launches return at once: the work has finished only when the stream is idle again.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

float event_elapsed_ms(const EnqueueWork& enqueue, cudaStream_t stream) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaEventRecord(start, stream), "cudaEventRecord");
  enqueue(stream);
  check(cudaEventRecord(stop, stream), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float milliseconds = 0.0f;
  check(cudaEventElapsedTime(&milliseconds, start, stop), "cudaEventElapsedTime");
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  return milliseconds;
}

double theoretical_bandwidth_gbps(double memory_clock_khz, int bus_width_bits) {
  // !(x > 0) is true for NaN too, which every comparison calls false.
  if (!(memory_clock_khz > 0) || !std::isfinite(memory_clock_khz) || bus_width_bits <= 0) return 0.0;
  return memory_clock_khz * 1e3 * 2.0 * (bus_width_bits / 8.0) / 1e9;
}

double effective_bandwidth_gbps(double bytes_read, double bytes_written, double milliseconds) {
  if (!(milliseconds > 0) || !std::isfinite(milliseconds)) return 0.0;
  if (!(bytes_read >= 0) || !std::isfinite(bytes_read) || !(bytes_written >= 0) || !std::isfinite(bytes_written))
    return 0.0;
  return (bytes_read + bytes_written) / 1e9 / (milliseconds / 1e3);
}

// Calibration of chapter 01: what each timer reports for work of known duration, on this GPU,
// and the device-to-device copy against the theoretical bandwidth.
// Usage: build/calibrate_measuring [--csv FILE]   (FILE: kernel_ms,host_ms,event_ms,unsynchronised_ms)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "measuring.h"

int main(int argc, char** argv) {
  std::FILE* csv = nullptr;
  if (argc == 3 && std::strcmp(argv[1], "--csv") == 0) {
    csv = std::fopen(argv[2], "w");
    if (csv == nullptr) return 1;
    std::fprintf(csv, "kernel_ms,host_ms,event_ms,unsynchronised_ms\n");
  }
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("%s\n\n| kernel runs (ms) | host timer (ms) | event timer (ms) | host, no synchronisation (ms) |\n"
              "| ---: | ---: | ---: | ---: |\n", course::device_line().c_str());
  for (double ms : {0.01, 0.1, 1.0, 10.0, 100.0}) {
    auto work = [ms](cudaStream_t s) { enqueue_busy_wait(ms, s); };
    (void)event_elapsed_ms(work, stream);  // warm-up
    const double host = host_elapsed_ms(work, stream);
    const float event = event_elapsed_ms(work, stream);
    // What a timer that forgets to synchronise sees: the launch only.
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto start = std::chrono::steady_clock::now();
    work(stream);
    const double launch = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::printf("| %g | %.4f | %.4f | %.4f |\n", ms, host, event, launch);
    if (csv) std::fprintf(csv, "%g,%.4f,%.4f,%.4f\n", ms, host, event, launch);
  }
  const auto& device = course::current_device();
  const double theoretical = theoretical_bandwidth_gbps(device.memory_clock_khz, device.memory_bus_bits);
  course::DeviceBuffer<float> a(std::size_t{256} << 20), b(std::size_t{256} << 20);
  CUDA_CHECK(cudaMemset(a.data(), 0, a.bytes()));
  auto copy = [&](cudaStream_t s) {
    CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice, s));
  };
  (void)event_elapsed_ms(copy, stream);
  float best = 1e30f;
  for (int i = 0; i < 10; ++i) best = std::min(best, event_elapsed_ms(copy, stream));
  const double effective = effective_bandwidth_gbps(a.bytes(), b.bytes(), best);
  std::printf("\nmemory clock %d kHz, bus %d bits: theoretical %.1f GB/s; 1 GiB device-to-device copy %.3f ms = "
              "%.1f GB/s effective (%.3f of theoretical)\n", device.memory_clock_khz, device.memory_bus_bits,
              theoretical, best, effective, theoretical > 0 ? effective / theoretical : 0.0);
  CUDA_CHECK(cudaStreamDestroy(stream));
  if (csv) std::fclose(csv);
  return 0;
}

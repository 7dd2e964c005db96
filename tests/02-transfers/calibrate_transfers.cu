// Calibration of chapter 02 (not a test): pageable vs pinned transfers, and the sequential
// vs staged pipeline for several chunk counts. Usage: calibrate_transfers [--csv FILE]
#include <cstdio>
#include <cstring>
#include <vector>

#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/timing.h"
#include "transfers.h"

int main(int argc, char** argv) {
  const char* csv_path = nullptr;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv_path = argv[++i];
  if (const auto why = course::gpu_unavailable_reason()) {
    std::printf("calibrate_transfers: %s\n", why->c_str());
    return 0;
  }
  try {
    const size_t n = size_t{1} << 26, bytes = n * sizeof(float);
    std::printf("device: %s, %d copy engines; 256 MiB\n", course::device_line().c_str(),
                course::current_device().async_engine_count);
    std::FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
    if (csv) std::fprintf(csv, "what,chunks,ms,gbps\n");
    std::vector<float> pageable(n, 1.0f);
    course::PinnedHostBuffer<float> pinned_in(n), pinned_out(n);
    std::memset(pinned_in.data(), 0, bytes);
    course::DeviceBuffer<float> device_in(n), device_out(n);
    course::Stream stream;

    auto copy_row = [&](const char* what, void* dst, const void* src, cudaMemcpyKind kind) {
      const auto t = course::time_on_host([&] { CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind)); }, 2, 10);
      const double gbps = bytes / 1e9 / (t.median_ms / 1e3);
      std::printf("%-40s %9.2f ms %8.1f GB/s\n", what, t.median_ms, gbps);
      if (csv) std::fprintf(csv, "%s,0,%.3f,%.2f\n", what, t.median_ms, gbps);
    };
    copy_row("H2D pageable", device_in.data(), pageable.data(), cudaMemcpyHostToDevice);
    copy_row("H2D pinned", device_in.data(), pinned_in.data(), cudaMemcpyHostToDevice);
    copy_row("D2H pageable", pageable.data(), device_out.data(), cudaMemcpyDeviceToHost);
    copy_row("D2H pinned", pinned_out.data(), device_out.data(), cudaMemcpyDeviceToHost);

    const auto sequential = course::time_on_host([&] {
      process_sequential(pinned_in.data(), pinned_out.data(), device_in.data(), device_out.data(), n, stream);
    });
    std::printf("%-40s %9.2f ms %8.3f x sequential\n", "sequential (one stream)", sequential.median_ms, 1.0);
    if (csv) std::fprintf(csv, "sequential,1,%.3f,0\n", sequential.median_ms);
    std::vector<cudaStream_t> streams(4);
    for (auto& s : streams) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int chunks : {4, 8, 16, 32, 64}) {
      const auto t = course::time_on_host([&] {
        process_staged(pinned_in.data(), pinned_out.data(), device_in.data(), device_out.data(), n, streams.data(), 4,
                       chunks);
      });
      char label[64];
      std::snprintf(label, sizeof label, "staged, 4 streams, %d chunks", chunks);
      std::printf("%-40s %9.2f ms %8.3f x sequential\n", label, t.median_ms, t.median_ms / sequential.median_ms);
      if (csv) std::fprintf(csv, "staged 4 streams,%d,%.3f,0\n", chunks, t.median_ms);
    }
    for (auto s : streams) cudaStreamDestroy(s);
    if (csv) std::fclose(csv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "calibrate_transfers: %s\n", error.what());
    return 1;
  }
  return 0;
}

// Calibration of chapter 03 (not a test): zero-copy reads, coalesced and not, against the
// pinned cudaMemcpy of the same bytes. Usage: calibrate_zero_copy [--csv FILE]
#include <cstdio>
#include <cstring>

#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/timing.h"
#include "zero_copy.h"

int main(int argc, char** argv) {
  const char* csv_path = nullptr;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv_path = argv[++i];
  if (const auto why = course::gpu_unavailable_reason()) {
    std::printf("calibrate_zero_copy: %s\n", why->c_str());
    return 0;
  }
  try {
    const size_t n = size_t{1} << 26, bytes = n * sizeof(float);
    std::printf("device: %s; 256 MiB\n", course::device_line().c_str());
    std::FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
    if (csv) std::fprintf(csv, "variant,gbps,fraction_of_pinned_memcpy\n");
    MappedBuffer mapped(bytes);
    std::memset(mapped.host(), 0, bytes);
    course::DeviceBuffer<float> out(n);
    course::Stream stream;
    const double peak = course::measure_pinned_h2d_peak_gbps();
    std::printf("%-36s %8.1f GB/s %7.3f\n", "pinned cudaMemcpy H2D", peak, 1.0);
    if (csv) std::fprintf(csv, "pinned memcpy H2D,%.1f,1.000\n", peak);
    const float* in = static_cast<const float*>(mapped.device());
    auto row = [&](const char* name, void (*run)(const float*, float*, size_t, cudaStream_t)) {
      const auto t = course::time_on_stream([&](cudaStream_t s) { run(in, out.data(), n, s); }, stream, 2, 10);
      const double gbps = bytes / 1e9 / (t.median_ms / 1e3);
      std::printf("%-36s %8.1f GB/s %7.3f\n", name, gbps, gbps / peak);
      if (csv) std::fprintf(csv, "%s,%.1f,%.3f\n", name, gbps, gbps / peak);
    };
    row("zero-copy coalesced (reference)", scale_from_host);
    row("zero-copy chunk per thread (given)", scale_from_host_chunked);
    if (csv) std::fclose(csv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "calibrate_zero_copy: %s\n", error.what());
    return 1;
  }
  return 0;
}

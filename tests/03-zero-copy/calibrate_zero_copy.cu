// Calibration of chapter 03 (not a test): zero-copy reads, coalesced and not, against the
// pinned cudaMemcpy of the same bytes. Usage: calibrate_zero_copy [--csv FILE]
#include <cstdio>
#include <cstring>

#include "course/calibration.h"
#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/timing.h"
#include "zero_copy.h"

int main(int argc, char** argv) {
  return course::run_calibration(argc, argv, "calibrate_zero_copy", [](const course::CalibrationArgs& args) {
    std::FILE* csv = args.csv();

    const size_t n = size_t{1} << 26, bytes = n * sizeof(float);
    std::printf("256 MiB read once\n");
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
  });
}

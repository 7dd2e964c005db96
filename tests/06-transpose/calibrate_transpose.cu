// Calibration of chapter 06 (not a test): prints naive / unpadded / padded / memcpy for the
// GPU it runs on, at sizes past and inside the L2. Usage: calibrate_transpose [--csv FILE]
#include <cstdio>
#include <stdexcept>
#include <cstring>
#include <string>
#include <vector>

#include "course/calibration.h"
#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/perf.h"
#include "course/random.h"
#include "course/timing.h"
#include "transpose.h"
#include "transpose_variants.h"

namespace {

using Transpose = void (*)(const float*, float*, int, int, cudaStream_t);

bool is_transpose(const std::vector<float>& in, const std::vector<float>& out, int n) {
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c)
      if (out[static_cast<size_t>(c) * n + r] != in[static_cast<size_t>(r) * n + c]) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  return course::run_calibration(argc, argv, "calibrate_transpose", [](const course::CalibrationArgs& args) {
    std::FILE* csv = args.csv();
    if (csv) std::fprintf(csv, "n,variant,gbps,fraction_of_memcpy\n");
    std::printf("%-6s %-22s %10s %10s %8s\n", "n", "variant", "GB/s", "x memcpy", "spread");

    const struct { const char* name; Transpose run; } variants[] = {
        {"naive", transpose_naive},
        {"32x32 tile unpadded", transpose_tiled_unpadded},
        {"32x32 tile padded", transpose_tiled_32},
        {"64x64 tile padded", transpose_tiled},
    };
    course::Stream stream;
    for (int n : {2048, 4096, 8192}) {
      const size_t count = static_cast<size_t>(n) * n;
      const double bytes = static_cast<double>(count) * sizeof(float);
      const auto input = course::random_floats(count, 1);
      course::DeviceBuffer<float> in(input);
      course::DeviceBuffer<float> out(count);

      const auto copy = course::time_on_stream(
          [&](cudaStream_t s) {
            CUDA_CHECK(cudaMemcpyAsync(out.data(), in.data(), count * sizeof(float),
                                       cudaMemcpyDeviceToDevice, s));
          },
          stream);
      const double copy_gbps = course::effective_bandwidth_gbps(bytes, bytes, copy.median_ms);
      std::printf("%-6d %-22s %10.1f %10.3f %7.1f%%\n", n, "cudaMemcpy D2D", copy_gbps, 1.0,
                  100 * copy.relative_spread());
      if (csv) std::fprintf(csv, "%d,memcpy,%.1f,1.000\n", n, copy_gbps);

      for (const auto& v : variants) {
        out.poison();
        v.run(in.data(), out.data(), n, n, stream);
        CUDA_CHECK_LAUNCH(v.name);
        if (!is_transpose(input, out.download(), n)) {
          throw std::runtime_error(std::string(v.name) + ": wrong result at n = " + std::to_string(n));
        }
        const auto t = course::time_on_stream([&](cudaStream_t s) { v.run(in.data(), out.data(), n, n, s); },
                                              stream);
        const double gbps = course::effective_bandwidth_gbps(bytes, bytes, t.median_ms);
        std::printf("%-6d %-22s %10.1f %10.3f %7.1f%%\n", n, v.name, gbps, gbps / copy_gbps,
                    100 * t.relative_spread());
        if (csv) std::fprintf(csv, "%d,%s,%.1f,%.3f\n", n, v.name, gbps, gbps / copy_gbps);
      }
    }
  });
}

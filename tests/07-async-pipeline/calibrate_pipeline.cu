// Calibration of chapter 07 (not a test): synchronous vs 1..12 pipeline stages vs 4..11 stages of bulk copies
// vs cudaMemcpy, one block per SM. Usage: calibrate_pipeline [--csv FILE]
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>

#include "course/calibration.h"
#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/perf.h"
#include "course/random.h"
#include "course/timing.h"
#include "pipeline.h"
#include "pipeline_variants.h"

int main(int argc, char** argv) {
  return course::run_calibration(argc, argv, "calibrate_pipeline", [](const course::CalibrationArgs& args) {
    std::FILE* csv = args.csv();

    const size_t n = size_t{1} << 26;
    const double bytes = static_cast<double>(n) * sizeof(float);
    std::printf("%d blocks of %d threads (one per SM), 2^26 floats\n", pipeline_grid_size(), kPipelineThreads);
    if (csv) std::fprintf(csv, "variant,stages,gbps,fraction_of_memcpy\n");
    course::DeviceBuffer<float> in(course::random_floats(n, 1)), out(n);
    course::Stream stream;

    const auto copy = course::time_on_stream(
        [&](cudaStream_t s) { CUDA_CHECK(cudaMemcpyAsync(out.data(), in.data(), n * 4, cudaMemcpyDeviceToDevice, s)); },
        stream);
    const double peak = course::effective_bandwidth_gbps(bytes, bytes, copy.median_ms);
    std::printf("%-26s %10s %10s %8s\n", "variant", "GB/s", "x memcpy", "spread");
    auto row = [&](const std::string& name, int stages, const std::function<void(cudaStream_t)>& run) {
      const auto t = course::time_on_stream(run, stream);
      const double gbps = course::effective_bandwidth_gbps(bytes, bytes, t.median_ms);
      std::printf("%-26s %10.1f %10.3f %7.1f%%\n", name.c_str(), gbps, gbps / peak, 100 * t.relative_spread());
      if (csv) std::fprintf(csv, "%s,%d,%.1f,%.3f\n", name.c_str(), stages, gbps, gbps / peak);
    };
    row("cudaMemcpy D2D", 0, [&](cudaStream_t s) {
      CUDA_CHECK(cudaMemcpyAsync(out.data(), in.data(), n * 4, cudaMemcpyDeviceToDevice, s));
    });
    row("synchronous (given)", 1, [&](cudaStream_t s) { mirror_tiles_sync(in.data(), out.data(), n, s); });
    for (int stages : {1, 2, 3, 4, 6, 8, 10, 12})
      row("memcpy_async " + std::to_string(stages) + " stage" + (stages > 1 ? "s" : ""), stages,
          [&](cudaStream_t s) { mirror_tiles_pipelined_stages(stages, in.data(), out.data(), n, s); });
    if (course::current_device().compute_major >= 9) {
      // Every bulk variant's output must equal the synchronous kernel's (same arithmetic).
      mirror_tiles_sync(in.data(), out.data(), n, stream);
      CUDA_CHECK_LAUNCH("mirror_tiles_sync");
      const auto expected = out.download();
      row("bulk copy (reference)", 0, [&](cudaStream_t s) { mirror_tiles_bulk(in.data(), out.data(), n, s); });
      struct Bulk {
        int stages, tiles_per_stage;
        bool spin;
      };
      for (const Bulk v : {Bulk{2, 1, true}, Bulk{4, 1, true}, Bulk{4, 1, false}, Bulk{8, 1, false}, Bulk{10, 1, false}, Bulk{11, 1, false},
                           Bulk{10, 1, true}, Bulk{11, 1, true}, Bulk{4, 2, true}, Bulk{5, 2, true},
                           Bulk{5, 2, false}, Bulk{3, 3, true}, Bulk{2, 4, true}}) {
        auto run = [&](cudaStream_t s) {
          if (!mirror_tiles_bulk_variant(v.stages, v.tiles_per_stage, v.spin, in.data(), out.data(), n, s))
            throw std::runtime_error("bulk variant not built");
        };
        out.poison();
        run(stream);
        CUDA_CHECK_LAUNCH("bulk variant");
        if (out.download() != expected) throw std::runtime_error("a bulk variant's output differs");
        row("bulk copy (TMA) " + std::to_string(v.stages) + " stages x " + std::to_string(v.tiles_per_stage) +
                " tile" + (v.tiles_per_stage > 1 ? "s" : "") + (v.spin ? " try_wait" : " wait_parity"),
            v.stages * v.tiles_per_stage, run);
      }
    }
  });
}

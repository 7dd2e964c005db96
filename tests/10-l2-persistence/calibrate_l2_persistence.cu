// Calibration of chapter 10 (not a test): the given hot-and-streaming kernel (1 GiB streamed in
// and out while sweeping a hot table) without and with a persisting window, first as the
// reference plans it for hot tables of several sizes, then with the hit ratio forced to several
// values at the largest carve-out; last, for comparison, the hot table read at random places.
// Usage: calibrate_l2_persistence [--csv FILE]
//   (FILE: access,hot_mib,hit_ratio,planned,no_window_ms,window_ms,speedup)
#include <algorithm>
#include <cstdio>

#include "course/calibration.h"
#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/timing.h"
#include "l2_persistence.h"

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// The same work, but each element adds a pseudo-random entry of the hot table: every line of the
// table is read again long before the stream could evict it.
__global__ void hot_gather_kernel(const float* __restrict__ hot, unsigned hot_count, const float* __restrict__ in,
                                  float* __restrict__ out, unsigned count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    out[i] = in[i] + hot[(i * 2654435761u) % hot_count];
}

int device_attribute(cudaDeviceAttr which) {
  int device = 0;
  int value = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&value, which, device));
  return value;
}

// A window over the whole hot table with a chosen carve-out and hit ratio.
void set_window(cudaStream_t stream, const void* hot, std::size_t bytes, std::size_t carve_out, float hit_ratio,
                cudaAccessProperty miss) {
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, carve_out));
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = const_cast<void*>(hot);
  value.accessPolicyWindow.num_bytes =
      std::min(bytes, static_cast<std::size_t>(device_attribute(cudaDevAttrMaxAccessPolicyWindowSize)));
  value.accessPolicyWindow.hitRatio = hit_ratio;
  value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  value.accessPolicyWindow.missProp = miss;
  CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
}

// One row of the table: the hot table read in order (the given kernel) or at random, and the
// window as the reference plans it or with a chosen carve-out and hit ratio.
struct Setting {
  bool at_random;
  std::size_t hot_mib;
  bool planned;
  std::size_t carve_out_mib;  // when not planned; 0 = the device's maximum
  float hit_ratio;            // when not planned
  cudaAccessProperty miss = cudaAccessPropertyStreaming;  // when not planned
  std::size_t window_mib = 0;                             // when not planned; 0 = the whole hot table
};

}  // namespace

int main(int argc, char** argv) {
  return course::run_calibration(argc, argv, "calibrate_l2_persistence", [](const course::CalibrationArgs& args) {
    std::FILE* csv = args.csv();
    if (csv) std::fprintf(csv, "access,hot_mib,window_mib,carve_out_mib,hit_ratio,miss,planned,no_window_ms,window_ms,speedup\n");
    const int max_persisting = device_attribute(cudaDevAttrMaxPersistingL2CacheSize);
    if (max_persisting == 0) {
      std::printf("this GPU has no persisting L2 (compute capability < 8.0): nothing to measure\n");
      return;
    }
    std::printf("L2 %d MiB; persisting carve-out at most %.1f MiB; windows of at most %d MiB\n",
                static_cast<int>(course::current_device().l2_bytes >> 20), max_persisting / double(kMiB),
                device_attribute(cudaDevAttrMaxAccessPolicyWindowSize) >> 20);
    const std::size_t count = std::size_t{256} << 20;  // 1 GiB streamed in, 1 GiB out
    course::DeviceBuffer<float> in(count, "in"), out(count, "out");
    CUDA_CHECK(cudaMemset(in.data(), 0, in.bytes()));
    course::Stream stream;
    std::printf("\n| hot table read | hot table | window | carve-out | hit ratio | misses | no window (ms) | "
                "window (ms) | speed-up |\n| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |\n");
    const int sms = course::current_device().sm_count;
    auto measure = [&](const Setting& setting) {
      const std::size_t hot_count = setting.hot_mib * kMiB / sizeof(float);
      course::DeviceBuffer<float> hot(hot_count, "hot");
      CUDA_CHECK(cudaMemset(hot.data(), 0, hot.bytes()));
      auto work = [&](cudaStream_t s) {
        if (setting.at_random) {
          hot_gather_kernel<<<sms * 8, 256, 0, s>>>(hot.data(), static_cast<unsigned>(hot_count), in.data(),
                                                    out.data(), static_cast<unsigned>(count));
        } else {
          enqueue_hot_and_streaming(hot.data(), hot_count, in.data(), out.data(), count, s);
        }
      };
      const auto plain = course::time_on_stream(work, stream, 2, 11);
      float ratio = setting.hit_ratio;
      std::size_t carve_out = setting.carve_out_mib ? setting.carve_out_mib * kMiB : max_persisting;
      if (setting.planned) {
        const L2WindowPlan plan = set_persisting_window(stream, hot.data(), hot.bytes());
        ratio = plan.hit_ratio;
        carve_out = plan.carve_out_bytes;
      } else {
        set_window(stream, hot.data(), setting.window_mib ? setting.window_mib * kMiB : hot.bytes(), carve_out, ratio,
                   setting.miss);
      }
      const auto windowed = course::time_on_stream(work, stream, 2, 11);
      clear_persisting_window(stream);
      const double speedup = plain.median_ms / windowed.median_ms;
      const char* access = setting.at_random ? "at random" : "in order";
      const char* miss = setting.planned ? "planned" : setting.miss == cudaAccessPropertyNormal ? "normal" : "streaming";
      const std::size_t window_mib = setting.window_mib ? setting.window_mib : setting.hot_mib;
      std::printf("| %s | %zu MiB | %zu MiB | %.1f MiB%s | %.3f | %s | %.3f | %.3f | %.3f |\n", access,
                  setting.hot_mib, window_mib, carve_out / double(kMiB), setting.planned ? " (planned)" : "", ratio,
                  miss, plain.median_ms, windowed.median_ms, speedup);
      if (csv) std::fprintf(csv, "%s,%zu,%zu,%.2f,%.3f,%s,%d,%.3f,%.3f,%.3f\n", access, setting.hot_mib, window_mib,
                            carve_out / double(kMiB), ratio, miss, setting.planned ? 1 : 0, plain.median_ms,
                            windowed.median_ms, speedup);
    };
    // 1. As planned, hot tables from well inside the L2 to twice its size.
    for (std::size_t mib : {4, 8, 12, 16, 20, 24, 28, 32, 48, 64, 96}) measure({false, mib, true, 0, 0.0f});
    // 2. The hit ratio, at the planned carve-out.
    for (std::size_t mib : {16, 24})
      for (float ratio : {0.25f, 0.5f, 0.75f, 1.0f}) measure({false, mib, false, mib, ratio});
    // 3. The carve-out, with the hit ratio that fills it (at most 1).
    for (std::size_t mib : {16, 24})
      for (std::size_t carve : {8, 16, 20, 24, 25, 26, 28, 30, 0})
        if (carve * kMiB <= static_cast<std::size_t>(max_persisting))
          measure({false, mib, false, carve, std::min(1.0f, (carve ? carve * kMiB : max_persisting) /
                                                                float(mib * kMiB))});
    // 4. Hot tables larger than a carve-out of half the L2: a window over all of it with the hit
    //    ratio that fills the carve-out (misses streaming, or normal), or a window over its first
    //    carve-out bytes only, all of them persisting.
    const std::size_t half_l2_mib = course::current_device().l2_bytes / kMiB / 2;
    for (std::size_t mib : {25, 26, 28, 32, 48, 64, 96}) {
      const float ratio = float(half_l2_mib) / float(mib);
      measure({false, mib, false, half_l2_mib, ratio, cudaAccessPropertyStreaming});
      measure({false, mib, false, half_l2_mib, ratio, cudaAccessPropertyNormal});
      measure({false, mib, false, half_l2_mib, 1.0f, cudaAccessPropertyStreaming, half_l2_mib});
    }
    // 5. The hot table read at random places, as planned.
    for (std::size_t mib : {4, 16, 32, 64}) measure({true, mib, true, 0, 0.0f});
  });
}

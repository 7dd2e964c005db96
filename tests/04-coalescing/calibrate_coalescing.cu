// Calibration of chapter 04: offset and stride copies, AoS against SoA, row sums one thread
// per row against a warp per row. Usage: build/calibrate_coalescing
#include <cstdio>
#include <vector>

#include "coalescing.h"
#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/timing.h"

namespace {

__global__ void offset_copy(const float* in, float* out, std::size_t count, int offset) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x + offset;
  if (i < count) out[i] = in[i];
}

__global__ void stride_copy(const float* in, float* out, std::size_t count, int stride) {
  const std::size_t i = (blockIdx.x * std::size_t{blockDim.x} + threadIdx.x) * stride;
  if (i < count) out[i] = in[i];
}

}  // namespace

int main() {
  const std::size_t count = std::size_t{1} << 28;  // 1 GiB of floats
  course::DeviceBuffer<float> in(count), out(count);
  CUDA_CHECK(cudaMemset(in.data(), 0, in.bytes()));
  course::Stream stream;
  const double peak = course::measure_copy_peak_gbps();
  std::printf("%s; device-to-device copy peak %.1f GB/s\n\n| access | GB/s (useful bytes) | x copy peak |\n"
              "| --- | ---: | ---: |\n", course::device_line().c_str(), peak);
  const std::size_t threads = count - 64;
  for (int offset : {0, 1, 2, 4, 8, 16, 32}) {
    const auto t = course::time_on_stream([&](cudaStream_t s) {
      offset_copy<<<static_cast<unsigned>((threads + 255) / 256), 256, 0, s>>>(in.data(), out.data(), count, offset);
    }, stream);
    const double gbps = 2.0 * threads * sizeof(float) / 1e9 / (t.median_ms / 1e3);
    std::printf("| offset %d | %.1f | %.3f |\n", offset, gbps, gbps / peak);
  }
  for (int stride : {1, 2, 4, 8, 16, 32}) {
    const std::size_t moved = count / stride;
    const auto t = course::time_on_stream([&](cudaStream_t s) {
      stride_copy<<<static_cast<unsigned>((moved + 255) / 256), 256, 0, s>>>(in.data(), out.data(), count, stride);
    }, stream);
    const double gbps = 2.0 * moved * sizeof(float) / 1e9 / (t.median_ms / 1e3);
    std::printf("| stride %d | %.1f | %.3f |\n", stride, gbps, gbps / peak);
  }
  const std::size_t n = std::size_t{1} << 25;
  course::DeviceBuffer<Particle> aos(n);
  CUDA_CHECK(cudaMemset(aos.data(), 0, aos.bytes()));
  std::vector<course::DeviceBuffer<float>> fields;
  for (int f = 0; f < 6; ++f) fields.emplace_back(n);
  for (auto& f : fields) CUDA_CHECK(cudaMemset(f.data(), 0, f.bytes()));
  ParticlesSoA soa{fields[0].data(), fields[1].data(), fields[2].data(), fields[3].data(), fields[4].data(),
                   fields[5].data(), n};
  const auto t_aos = course::time_on_stream([&](cudaStream_t s) { advance_aos(aos.data(), n, 0.01f, s); }, stream);
  const auto t_soa = course::time_on_stream([&](cudaStream_t s) { advance_soa(soa, 0.01f, s); }, stream);
  const double useful = 36.0 * n / 1e9;
  std::printf("| particles, array of structures | %.1f | %.3f |\n", useful / (t_aos.median_ms / 1e3),
              useful / (t_aos.median_ms / 1e3) / peak);
  std::printf("| particles, structure of arrays | %.1f | %.3f |\n", useful / (t_soa.median_ms / 1e3),
              useful / (t_soa.median_ms / 1e3) / peak);
  const int rows = 16384, cols = 16384;
  course::DeviceBuffer<float> sums(rows);
  const auto t_naive = course::time_on_stream(
      [&](cudaStream_t s) { row_sums_naive(in.data(), sums.data(), rows, cols, s); }, stream);
  const auto t_warp = course::time_on_stream(
      [&](cudaStream_t s) { row_sums_coalesced(in.data(), sums.data(), rows, cols, s); }, stream);
  const double read = 4.0 * rows * cols / 1e9;
  std::printf("| row sums, a thread per row | %.1f | %.3f |\n", read / (t_naive.median_ms / 1e3),
              read / (t_naive.median_ms / 1e3) / peak);
  std::printf("| row sums, a warp per row | %.1f | %.3f |\n", read / (t_warp.median_ms / 1e3),
              read / (t_warp.median_ms / 1e3) / peak);
  return 0;
}

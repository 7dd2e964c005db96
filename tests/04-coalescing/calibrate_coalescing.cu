// Calibration of chapter 04 (not a test): offset and stride copies, the particles as an array
// of structures and as a structure of arrays, and the row sums from one thread per row to a
// warp per row with more loads in flight. Every rate counts useful bytes only.
// Usage: calibrate_coalescing [--csv FILE]   (FILE: group,variant,gbps,fraction_of_copy)
#include <cstdio>
#include <vector>

#include "coalescing.h"
#include "course/calibration.h"
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

// The structure of arrays with one particle per thread (the starter's plan): the reference
// moves four per thread with 16-byte loads and stores.
__global__ void advance_soa_one_per_thread(ParticlesSoA p, float dt) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= p.count) return;
  p.x[i] += p.vx[i] * dt;
  p.y[i] += p.vy[i] * dt;
  p.z[i] += p.vz[i] * dt;
}

// A warp per row with one running sum per lane: each lane waits for a load before the next.
// kReadOnly routes the loads through the read-only path explicitly (__ldg).
template <bool kReadOnly>
__global__ void row_sums_one_sum(const float* matrix, float* sums, int rows, int cols) {
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * 8 + threadIdx.x / 32;
  if (row >= rows) return;
  const float* line = matrix + static_cast<std::size_t>(row) * cols;
  float sum = 0.0f;
  for (int c = lane; c < cols; c += 32) sum += kReadOnly ? __ldg(line + c) : line[c];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) sums[row] = sum;
}

}  // namespace

int main(int argc, char** argv) {
  return course::run_calibration(argc, argv, "calibrate_coalescing", [](const course::CalibrationArgs& args) {
    std::FILE* csv = args.csv();
    if (csv) std::fprintf(csv, "group,variant,gbps,fraction_of_copy\n");
    const std::size_t count = std::size_t{1} << 28;  // 1 GiB of floats, 20 times the H100's L2
    course::DeviceBuffer<float> in(count, "in"), out(count, "out");
    CUDA_CHECK(cudaMemset(in.data(), 0, in.bytes()));
    course::Stream stream;
    const double peak = course::measure_copy_peak_gbps();
    std::printf("device-to-device copy peak %.1f GB/s\n\n| access | GB/s (useful bytes) | x copy peak |\n"
                "| --- | ---: | ---: |\n", peak);
    auto report = [&](const char* group, const std::string& variant, double useful_bytes,
                      const course::TimingStats& t) {
      const double gbps = useful_bytes / 1e9 / (t.median_ms / 1e3);
      std::printf("| %s | %.1f | %.3f |\n", variant.c_str(), gbps, gbps / peak);
      if (csv) std::fprintf(csv, "%s,%s,%.1f,%.3f\n", group, variant.c_str(), gbps, gbps / peak);
    };

    const std::size_t threads = count - 64;
    for (int offset : {0, 1, 2, 4, 8, 16, 32}) {
      const auto t = course::time_on_stream([&](cudaStream_t s) {
        offset_copy<<<static_cast<unsigned>((threads + 255) / 256), 256, 0, s>>>(in.data(), out.data(), count, offset);
      }, stream);
      report("offset", "offset " + std::to_string(offset), 2.0 * threads * sizeof(float), t);
    }
    for (int stride : {1, 2, 4, 8, 16, 32}) {
      const std::size_t moved = count / stride;
      const auto t = course::time_on_stream([&](cudaStream_t s) {
        stride_copy<<<static_cast<unsigned>((moved + 255) / 256), 256, 0, s>>>(in.data(), out.data(), count, stride);
      }, stream);
      report("stride", "stride " + std::to_string(stride), 2.0 * moved * sizeof(float), t);
    }

    const std::size_t n = std::size_t{1} << 25;
    course::DeviceBuffer<Particle> aos(n, "particles");
    CUDA_CHECK(cudaMemset(aos.data(), 0, aos.bytes()));
    std::vector<course::DeviceBuffer<float>> fields;
    for (int f = 0; f < 6; ++f) fields.emplace_back(n, "field");
    for (auto& f : fields) CUDA_CHECK(cudaMemset(f.data(), 0, f.bytes()));
    const ParticlesSoA soa{fields[0].data(), fields[1].data(), fields[2].data(), fields[3].data(), fields[4].data(),
                           fields[5].data(), n};
    const double useful = 36.0 * n;  // 24 bytes read, 12 written per particle
    report("particles", "array of structures",
           useful, course::time_on_stream([&](cudaStream_t s) { advance_aos(aos.data(), n, 0.01f, s); }, stream));
    report("particles", "structure of arrays: one per thread", useful, course::time_on_stream([&](cudaStream_t s) {
      advance_soa_one_per_thread<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(soa, 0.01f);
    }, stream));
    report("particles", "structure of arrays",
           useful, course::time_on_stream([&](cudaStream_t s) { advance_soa(soa, 0.01f, s); }, stream));

    const int rows = 16384, cols = 16384;
    course::DeviceBuffer<float> sums(rows, "sums");
    const double read = 4.0 * rows * cols;
    const unsigned warp_blocks = (rows + 7) / 8;
    report("row sums", "a thread per row", read, course::time_on_stream([&](cudaStream_t s) {
      row_sums_naive(in.data(), sums.data(), rows, cols, s);
    }, stream));
    report("row sums", "a warp per row: 1 sum per lane", read, course::time_on_stream([&](cudaStream_t s) {
      row_sums_one_sum<false><<<warp_blocks, 256, 0, s>>>(in.data(), sums.data(), rows, cols);
    }, stream));
    report("row sums", "a warp per row: 1 sum per lane (__ldg)", read, course::time_on_stream([&](cudaStream_t s) {
      row_sums_one_sum<true><<<warp_blocks, 256, 0, s>>>(in.data(), sums.data(), rows, cols);
    }, stream));
    report("row sums", "a warp per row: 4 sums per lane", read, course::time_on_stream([&](cudaStream_t s) {
      row_sums_coalesced(in.data(), sums.data(), rows, cols, s);
    }, stream));
    CUDA_CHECK(cudaGetLastError());
  });
}

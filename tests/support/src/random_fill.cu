// random_floats on the GPU: element i of course::random_floats(count, seed, lo, hi), written by a
// kernel of the judge's own (a perf test refills a large input before every timed call).
#include "course/cuda_check.h"
#include "course/random.h"

namespace course {

namespace {
constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

__host__ __device__ inline std::uint64_t mixed(std::uint64_t seed, std::size_t index) {
  std::uint64_t z = seed + (index + 1) * kGolden;  // the splitmix64 state of element `index`
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__global__ void fill_kernel(float* out, std::size_t count, std::uint64_t seed, float lo, float scale) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x)
    // Rounded multiply and add, as the host computes it (no fused multiply-add).
    out[i] = __fadd_rn(lo, __fmul_rn(static_cast<float>(mixed(seed, i) >> 40), scale));
}
}  // namespace

float random_float_at(std::uint64_t seed, std::size_t index, float lo, float hi) {
  const float scale = (hi - lo) / 16777216.0f;
  return lo + static_cast<float>(mixed(seed, index) >> 40) * scale;
}

void fill_random_floats(float* device, std::size_t count, std::uint64_t seed, float lo, float hi, cudaStream_t stream) {
  if (count == 0) return;
  const float scale = (hi - lo) / 16777216.0f;
  fill_kernel<<<1024, 256, 0, stream>>>(device, count, seed, lo, scale);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace course

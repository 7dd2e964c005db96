// A kernel of known duration, of the judge's own: a test holds a stream back with it.
#include <cstdint>

#include "course/busy.h"
#include "course/cuda_check.h"

namespace course {

namespace {
__device__ std::uint64_t global_timer_ns() {
  std::uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void busy_kernel(std::uint64_t nanoseconds) {
  const std::uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < nanoseconds) __nanosleep(1000);
}
}  // namespace

void hold_stream(cudaStream_t stream, double milliseconds) {
  busy_kernel<<<1, 1, 0, stream>>>(static_cast<std::uint64_t>(milliseconds * 1e6));
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace course

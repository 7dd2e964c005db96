// Given: a kernel of known duration, to check a timer against.
#include <cstdint>

#include "measuring.h"

namespace {

__device__ uint64_t global_timer_ns() {
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// One thread spins until `nanoseconds` have passed on the GPU's global timer.
__global__ void busy_wait_kernel(uint64_t nanoseconds) {
  const uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < nanoseconds) {
    __nanosleep(1000);
  }
}

}  // namespace

void enqueue_busy_wait(double milliseconds, cudaStream_t stream) {
  busy_wait_kernel<<<1, 1, 0, stream>>>(static_cast<uint64_t>(milliseconds * 1e6));
}

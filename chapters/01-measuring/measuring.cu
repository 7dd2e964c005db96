// Chapter 01 exercises: timing enqueued GPU work, and the two bandwidth formulas.
// Edit this file only. Read README.md beside it first; the tests are in tests/01-measuring.
//
//   ctest --preset student -R 01-measuring     (after: cmake --workflow --preset grade)
#include <chrono>

#include "measuring.h"

double host_elapsed_ms(const EnqueueWork& enqueue, cudaStream_t stream) {
  // TODO(1): Wait until `stream` has finished the work already on it (cudaStreamSynchronize),
  //          so that it does not count; then read std::chrono::steady_clock.
  // TODO(2): Enqueue the work (call `enqueue(stream)` once), wait until `stream` has finished
  //          it, read the clock again and return the difference in milliseconds. Without that
  //          wait you would time only the launch, which returns at once.
  enqueue(stream);
  return 0.0;
}

float event_elapsed_ms(const EnqueueWork& enqueue, cudaStream_t stream) {
  // TODO(3): Create two events, record the first on `stream`, enqueue the work, record the
  //          second on `stream`.
  // TODO(4): Wait for the second event (cudaEventSynchronize), read the time between them
  //          (cudaEventElapsedTime), destroy both events and return the time.
  enqueue(stream);
  return 0.0f;
}

double theoretical_bandwidth_gbps(double memory_clock_khz, int bus_width_bits) {
  // TODO(5): clock in Hz x 2 transfers per clock x bus width in bytes, in GB/s (10^9 bytes/s).
  (void)memory_clock_khz;
  (void)bus_width_bits;
  return 0.0;
}

double effective_bandwidth_gbps(double bytes_read, double bytes_written, double milliseconds) {
  // TODO(6): bytes moved (read + written) / 10^9 / seconds.
  (void)bytes_read;
  (void)bytes_written;
  (void)milliseconds;
  return 0.0;
}

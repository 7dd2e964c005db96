// Threshold check: "staged" processing that is really the sequential version. Correct, so
// only the overlap perf test may fail (1.0x, 1.25x needed).
#include "transfers.h"

void process_staged(const float* host_in, float* host_out, float* device_in, float* device_out, size_t n,
                    const cudaStream_t* streams, int stream_count, int chunk_count) {
  if (n == 0 || stream_count < 1 || chunk_count < 1) return;
  process_sequential(host_in, host_out, device_in, device_out, n, streams[0]);
}

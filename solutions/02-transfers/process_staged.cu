// Reference solution of chapter 02, exercise 2: staged copy and execute over several streams.
#include "transfers.h"

void process_staged(const float* host_in, float* host_out, float* device_in, float* device_out, size_t n,
                    const cudaStream_t* streams, int stream_count, int chunk_count) {
  if (n == 0 || stream_count < 1 || chunk_count < 1) return;
  for (int c = 0; c < chunk_count; ++c) {
    // Chunk c is [c·n/chunks, (c+1)·n/chunks): sizes differ by at most one element.
    const size_t begin = n * c / chunk_count;
    const size_t end = n * (c + 1) / chunk_count;
    if (begin == end) continue;
    const size_t count = end - begin;
    const cudaStream_t stream = streams[c % stream_count];
    cudaMemcpyAsync(device_in + begin, host_in + begin, count * sizeof(float), cudaMemcpyHostToDevice, stream);
    light_kernel(device_in + begin, device_out + begin, count, stream);
    cudaMemcpyAsync(host_out + begin, device_out + begin, count * sizeof(float), cudaMemcpyDeviceToHost, stream);
  }
}

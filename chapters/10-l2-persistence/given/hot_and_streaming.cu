// Given: a kernel that reads a "hot" table again and again while streaming a large array.
#include <stdexcept>

#include "l2_persistence.h"

namespace {

// 32-bit indices: a 64-bit modulo would cost more than the memory traffic it indexes.
__global__ void hot_and_streaming_kernel(const float* __restrict__ hot, unsigned hot_count,
                                         const float* __restrict__ in, float* __restrict__ out, unsigned count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    // The whole table is swept once every hot_count elements: between two reads of one of its
    // lines, the rest of the table and 2 * hot_count * 4 bytes of stream pass through the L2.
    out[i] = in[i] + hot[i % hot_count];
  }
}

}  // namespace

void enqueue_hot_and_streaming(const float* hot, std::size_t hot_count, const float* in, float* out,
                               std::size_t stream_count, cudaStream_t stream) {
  if (hot_count == 0 || stream_count == 0) return;
  if (stream_count > 0xffffffffu - (1u << 24) || hot_count > stream_count)
    throw std::invalid_argument("enqueue_hot_and_streaming: stream_count must stay below 2^32 - 2^24 and "
                                "hot_count must not exceed it");
  int device = 0;
  int sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  hot_and_streaming_kernel<<<sms * 8, 256, 0, stream>>>(hot, static_cast<unsigned>(hot_count), in, out,
                                                        static_cast<unsigned>(stream_count));
}

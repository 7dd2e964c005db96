// Reference solution of chapter 08, exercise 3: scratch memory in stream order.
#include "execution_config.h"

void process_batches_async(const float* in, float* out, int batches, int batch_size, cudaStream_t stream) {
  if (batches <= 0 || batch_size <= 0) return;  // nothing to do; a kernel of 0 blocks would not launch
  for (int b = 0; b < batches; ++b) {
    float* scratch = nullptr;
    // Allocated and freed in stream order: no wait, and the next batch's cudaMallocAsync gets
    // the memory this one freed back from the pool.
    if (cudaMallocAsync(&scratch, sizeof(float) * batch_size, stream) != cudaSuccess) return;
    const std::size_t offset = static_cast<std::size_t>(b) * batch_size;
    launch_batch_first(in + offset, scratch, batch_size, stream);
    launch_batch_second(scratch, out + offset, batch_size, stream);
    cudaFreeAsync(scratch, stream);
  }
}

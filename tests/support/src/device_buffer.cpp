#include "course/device_buffer.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "course/parallel.h"

namespace course {

namespace {
constexpr std::size_t kStagingBytes = std::size_t{32} << 20;
constexpr std::size_t kStagedFrom = std::size_t{8} << 20;  // smaller copies go straight

// memcpy with several threads: one core copies pageable memory at a few GB/s.
void parallel_memcpy(void* destination, const void* source, std::size_t bytes) {
  auto* to = static_cast<unsigned char*>(destination);
  const auto* from = static_cast<const unsigned char*>(source);
  for_each_range(bytes, std::size_t{4} << 20, 8, [&](std::size_t, std::size_t begin, std::size_t end) {
    std::memcpy(to + begin, from + begin, end - begin);
  });
}
}  // namespace

void copy_through_pinned_staging(void* destination, const void* source, std::size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return;
  if (bytes < kStagedFrom) {
    CUDA_CHECK(cudaMemcpy(destination, source, bytes, kind));
    return;
  }
  static std::mutex mutex;
  static void* staging = nullptr;  // the program's own, kept until it exits
  const std::lock_guard<std::mutex> guard(mutex);
  if (staging == nullptr) CUDA_CHECK(cudaMallocHost(&staging, kStagingBytes));
  auto* to = static_cast<unsigned char*>(destination);
  const auto* from = static_cast<const unsigned char*>(source);
  for (std::size_t done = 0; done < bytes; done += kStagingBytes) {
    const std::size_t chunk = std::min(kStagingBytes, bytes - done);
    // cudaMemcpy on the legacy default stream: ordered after all earlier work, as before.
    if (kind == cudaMemcpyDeviceToHost) {
      CUDA_CHECK(cudaMemcpy(staging, from + done, chunk, cudaMemcpyDeviceToHost));
      parallel_memcpy(to + done, staging, chunk);
    } else {
      parallel_memcpy(staging, from + done, chunk);
      CUDA_CHECK(cudaMemcpy(to + done, staging, chunk, cudaMemcpyHostToDevice));
    }
  }
}

}  // namespace course

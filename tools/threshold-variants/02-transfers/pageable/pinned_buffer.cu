// Threshold check: a "PinnedBuffer" that allocates ordinary pageable memory. Every test that
// checks for pinned memory, or the upload's speed, must fail.
#include <cstdlib>
#include <utility>

#include "transfers.h"

PinnedBuffer::PinnedBuffer(size_t bytes) : data_(bytes ? std::malloc(bytes) : nullptr), bytes_(bytes) {}
PinnedBuffer::~PinnedBuffer() { std::free(data_); }
PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(bytes_, other.bytes_);
  return *this;
}
void upload(const PinnedBuffer& source, void* device_destination, size_t bytes, cudaStream_t stream) {
  cudaMemcpyAsync(device_destination, source.data(), bytes, cudaMemcpyHostToDevice, stream);
}

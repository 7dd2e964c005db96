// Reference solution of chapter 02, exercise 1: pinned host memory.
#include <stdexcept>
#include <string>
#include <utility>

#include "transfers.h"

PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes_ == 0) return;
  const cudaError_t status = cudaMallocHost(&data_, bytes_);
  if (status != cudaSuccess) {
    data_ = nullptr;
    bytes_ = 0;
    (void)cudaGetLastError();  // the failure is reported by the exception, not left for the next check
    throw std::runtime_error(std::string("cudaMallocHost failed: ") + cudaGetErrorString(status));
  }
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  std::swap(data_, other.data_);  // `other` releases what this held
  std::swap(bytes_, other.bytes_);
  return *this;
}

void upload(const PinnedBuffer& source, void* device_destination, size_t bytes, cudaStream_t stream) {
  cudaMemcpyAsync(device_destination, source.data(), bytes, cudaMemcpyHostToDevice, stream);
}

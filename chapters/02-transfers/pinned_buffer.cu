// Chapter 02, exercise 1: pinned host memory. Edit this file only.
// Read README.md beside it first; tests: ctest --preset student -R 02-transfers
#include <stdexcept>
#include <string>
#include <utility>

#include "transfers.h"

PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  // TODO(1): Allocate `bytes` bytes of page-locked host memory into data_ (cudaMallocHost or
  //          cudaHostAlloc). If the call fails, clear the error (cudaGetLastError) and throw
  //          std::runtime_error with cudaGetErrorString of it. Allocate nothing when bytes == 0.
}

PinnedBuffer::~PinnedBuffer() {
  // TODO(2): Release the memory with the call that matches the allocation (cudaFreeHost).
  //          Never throw from a destructor.
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  std::swap(data_, other.data_);  // `other` releases what this held
  std::swap(bytes_, other.bytes_);
  return *this;
}

void upload(const PinnedBuffer& source, void* device_destination, size_t bytes, cudaStream_t stream) {
  // TODO(3): Enqueue the copy of `bytes` bytes from source.data() to device_destination on
  //          `stream`, without waiting for it (cudaMemcpyAsync).
}

// Reference solution of chapter 03, exercise 1: mapped pinned host memory.
#include <stdexcept>
#include <string>

#include "zero_copy.h"

MappedBuffer::MappedBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes_ == 0) return;
  cudaError_t status = cudaHostAlloc(&host_, bytes_, cudaHostAllocMapped);
  if (status == cudaSuccess) status = cudaHostGetDevicePointer(&device_, host_, 0);
  if (status != cudaSuccess) {
    if (host_ != nullptr) cudaFreeHost(host_);
    host_ = device_ = nullptr;
    bytes_ = 0;
    (void)cudaGetLastError();  // the failure is reported by the exception, not left for the next check
    throw std::runtime_error(std::string("mapped host allocation failed: ") + cudaGetErrorString(status));
  }
}

MappedBuffer::~MappedBuffer() {
  if (host_ != nullptr) cudaFreeHost(host_);
}

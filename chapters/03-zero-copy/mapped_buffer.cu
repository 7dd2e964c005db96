// Chapter 03, exercise 1: mapped pinned host memory. Edit this file only.
// Read README.md beside it first; tests: ctest --preset student -R 03-zero-copy
#include <stdexcept>
#include <string>

#include "zero_copy.h"

MappedBuffer::MappedBuffer(size_t bytes) : bytes_(bytes) {
  // TODO(1): Allocate `bytes` bytes of pinned host memory that is mapped into the device's
  //          address space (cudaHostAlloc with the flag cudaHostAllocMapped) into host_.
  //          On failure clear the error (cudaGetLastError) and throw std::runtime_error with
  //          cudaGetErrorString of it; allocate nothing for 0 bytes.

  // TODO(2): Ask for the address a kernel must use for that memory (cudaHostGetDevicePointer)
  //          and keep it in device_. With unified virtual addressing it equals host_, but
  //          code that asks works everywhere.
}

MappedBuffer::~MappedBuffer() {
  // TODO(3): Release the memory (cudaFreeHost); never throw from a destructor.
}

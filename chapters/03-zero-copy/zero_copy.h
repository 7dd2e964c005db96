/// @file zero_copy.h
/// @brief Chapter 03 contract: kernels that read host memory directly (zero-copy).
///
/// **Performance**, ratios to a baseline measured in the same process, as the chapter's README
/// explains (an instructor may scale the bars: COURSE_PERF_SCALE): scale_from_host reads the host's
/// memory at least 0.7 times as fast as pinned host-to-device copies timed between its calls
/// (ScaleFromHostPerf.AtLeast0_7OfPinnedCopyPeak).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// Exercise 1 (mapped_buffer.cu): owns `bytes` bytes of pinned host memory that is mapped
/// into the device's address space, so that kernels can read and write it over the bus.
class MappedBuffer {
 public:
  /// Allocates mapped pinned memory; for 0 bytes none (host() and device() are nullptr, size() 0)
  /// (MappedBuffer.EmptyBufferHoldsNothing). If the allocation fails (e.g. 2^62 bytes), throws
  /// std::runtime_error whose what() names cudaHostAlloc's error (its cudaGetErrorString or
  /// cudaGetErrorName), and leaves no error for cudaGetLastError() to report
  /// (MappedBuffer.ThrowsWhenTheAllocationFails).
  explicit MappedBuffer(size_t bytes);
  ~MappedBuffer();
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;

  /// The memory as the host sees it.
  void* host() const { return host_; }
  /// The same memory as a kernel must address it (from cudaHostGetDevicePointer): each
  /// buffer's own (MappedBuffer.EachBufferHasItsOwnDeviceAddress).
  void* device() const { return device_; }
  size_t size() const { return bytes_; }  ///< Its size in bytes.

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
  size_t bytes_ = 0;
};

/// Given (given/zero_copy_given.cu): device_out[i] = 2 * in[i] + 1, where `mapped_in` is the
/// device address of mapped host memory, with each thread walking its own contiguous chunk
/// of the array: neighbouring threads are a chunk apart, so no access is coalesced.
void scale_from_host_chunked(const float* mapped_in, float* device_out, size_t n, cudaStream_t stream);

/// Exercise 2 (scale_from_host.cu): the same result, reading the mapped host memory once,
/// with consecutive threads reading consecutive elements (coalesced). n from 0 (nothing is
/// written, no error) up to 2^26, any n (not only multiples of 4 or of a block); each call
/// stands alone (ScaleFromHost, ScaleFromHostCalls.CallAfterCallWithOtherSizes). Sizes above
/// 2^26 are not promised: the size where 32-bit indices overflow (2^31 floats) needs 8 GiB of
/// mapped host memory per submission, too much for a class graded side by side. `mapped_in`
/// and `device_out` may be any addresses aligned to a float, not only the start of an
/// allocation (a view one float in: check the alignment before any vector load), and do not
/// overlap (ScaleFromHostCalls.OffsetViews).
///
/// Rules, checked from what runs (ScaleFromHostTechnique, and a call of ScaleFromHostPerf drawn
/// at random): a kernel of your own reads
/// `mapped_in` directly; no copy of any kind (no cudaMemcpy to stage it on the device);
/// everything on `stream`, on views one float into their buffers too
/// (ScaleFromHostTechnique.OffsetViewsStayOnTheGivenStream).
void scale_from_host(const float* mapped_in, float* device_out, size_t n, cudaStream_t stream);

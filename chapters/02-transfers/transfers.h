/// @file transfers.h
/// @brief Chapter 02 contract: pinned host memory, and overlapping transfers with computation.
///
/// **Performance**, ratios to a baseline measured in the same process, as the chapter's README
/// explains (an instructor may scale the bars: COURSE_PERF_SCALE): upload at least 0.8 of pinned
/// host-to-device copies timed between its calls (UploadPerf.AtLeast0_8OfPinnedPeak);
/// process_staged at most 0.8 of the time of the given process_sequential, i.e. at least 1.25 times
/// its rate (ProcessStagedPerf.AtMost0_8xSequentialTime). And 200 calls of process_staged leave at
/// most 8 MiB of device memory taken (ProcessStagedDeviceWide.RepeatedRunsLeakNoDeviceMemory).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// Exercise 1 (pinned_buffer.cu): owns `bytes` bytes of page-locked (pinned) host memory.
/// The DMA engines read pinned memory directly; pageable memory must first be copied by the
/// driver into a pinned staging area, which makes transfers from it slower and synchronous.
class PinnedBuffer {
 public:
  /// Allocates `bytes` bytes of pinned host memory; for 0, none (data() is nullptr, size() 0).
  /// If the allocation fails (e.g. 2^62 bytes, more than any host can pin), throws
  /// std::runtime_error with the CUDA error, and leaves no error for cudaGetLastError() to report
  /// (PinnedBuffer.ThrowsWhenTheAllocationFails).
  explicit PinnedBuffer(size_t bytes);
  /// Releases the memory.
  ~PinnedBuffer();
  /// Takes over `other`'s memory; `other` is left empty (nullptr, 0), and destroying it releases
  /// nothing (PinnedBuffer.MovedFromBufferCanBeDestroyed).
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  /// Takes over `other`'s memory; what this buffer held is released, at the latest when `other`
  /// is destroyed (PinnedBuffer.MoveAssignmentReleasesWhatTheTargetHeld). Moving a buffer onto
  /// itself leaves it as it was (PinnedBuffer.SelfMoveAssignmentKeepsTheMemory).
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return data_; }   ///< The memory, or nullptr when empty.
  size_t size() const { return bytes_; }  ///< Its size in bytes.

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

/// Exercise 1 (pinned_buffer.cu): copies the first `bytes` bytes of `source` to device memory
/// at `device_destination`, asynchronously on `stream` (the caller synchronises: no wait on the
/// host inside, UploadTechnique). `bytes` may be anything from 0 (nothing is copied) to
/// source.size(), and not a multiple of 4: nothing past `bytes` bytes of `device_destination` is
/// written (Upload.CopiesOnlyTheBytesAsked).
/// Rules, checked from what runs (UploadTechnique, and a call of UploadPerf drawn at random):
/// exactly one host-to-device copy, read from
/// pinned memory, on `stream`.
void upload(const PinnedBuffer& source, void* device_destination, size_t bytes, cudaStream_t stream);

/// Given (given/process.cu): the light kernel of exercise 2, out[i] = 2 * in[i] + 1 for
/// i < n, enqueued on `stream`.
void light_kernel(const float* device_in, float* device_out, size_t n, cudaStream_t stream);

/// Given (given/process.cu): host_out = light_kernel(host_in), in one stream: the whole
/// upload, then the kernel, then the whole download, one after another. `host_in` and
/// `host_out` are pinned; `device_in` and `device_out` hold n floats each.
void process_sequential(const float* host_in, float* host_out, float* device_in, float* device_out, size_t n,
                        cudaStream_t stream);

/// Exercise 2 (process_staged.cu): the same result, with the work cut into `chunk_count`
/// chunks spread round-robin over the `stream_count` streams the caller owns, so that the
/// upload of one chunk, the kernel of another and the download of a third run at the same
/// time. n need not divide evenly, and may be below chunk_count (empty chunks enqueue nothing,
/// not even a copy of 0 bytes: ProcessStagedTechnique.EmptyChunksEnqueueNothing); n = 0 enqueues
/// nothing (ProcessStagedCalls.EmptyInputEnqueuesNothing). What is tested, and so promised,
/// goes up to n = 2^24 + 3 (64 MiB in each of four buffers). n may be up to 2^31 - 1 (8 GiB in
/// each of four buffers): allowed, not tested (too large for a class graded side by side), so
/// keep sizes in bytes and offsets in size_t all the same.
/// stream_count >= 1 and chunk_count >= 1; either may exceed the other, and the chunk bounds
/// hold for any of them (257 chunks of 2^24 + 3 floats, where c * n passes 2^32:
/// Cases/ProcessStaged.MatchesCpu/N16777219Streams4Chunks257). Each call stands alone
/// (ProcessStagedCalls.SecondCallWithOtherSizes). Enqueues only: the caller synchronises every
/// stream (no cudaStreamSynchronize, cudaDeviceSynchronize or cudaEventSynchronize inside:
/// ProcessStagedTechnique.OnlyEnqueues).
/// Rules, checked from what runs (ProcessStagedTechnique, and a call of ProcessStagedPerf drawn
/// at random, at its size): per non-empty chunk c one upload from pinned memory, one light_kernel
/// and one download to pinned memory, all asynchronous and on streams[c % stream_count]
/// (ProcessStagedTechnique.ChunkCOnStreamCModuloTheCount, chunks counted from the start of the
/// data); when
/// n >= chunk_count >= stream_count, every given stream gets work; with fewer chunks than
/// streams, streams[chunk_count] and later get none
/// (ProcessStagedTechnique.FewerChunksThanStreamsUseTheFirstStreams).
void process_staged(const float* host_in, float* host_out, float* device_in, float* device_out, size_t n,
                    const cudaStream_t* streams, int stream_count, int chunk_count);

/// @file device_buffer.h
/// @brief Owners of device and pinned host memory for the tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "course/cuda_check.h"
#include "course/guards.h"
#include "course/host_memory.h"
#include "course/profile.h"

namespace course {

/// A blocking copy between pageable host memory and the device (`kind`: cudaMemcpyHostToDevice
/// or cudaMemcpyDeviceToHost). Large copies go in chunks through a pinned buffer of the
/// program's own, with several threads on the host side: a pageable 256 MiB copy took
/// 0.2 s on the lent H100, and the perf tests make many.
void copy_through_pinned_staging(void* destination, const void* source, std::size_t bytes, cudaMemcpyKind kind);

/// Owns `count` elements of device memory (cudaMalloc / cudaFree), between two guard zones
/// (guards.h) that CUDA_CHECK_LAUNCH checks after every call of student code. Move-only.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `count` elements (uninitialised); `name` is what messages call it.
  explicit DeviceBuffer(std::size_t count, const std::string& name = "a device buffer")
      : data_(static_cast<T*>(guarded_allocate(count * sizeof(T), sizeof(T), true, name))), count_(count) {}
  /// Allocates and uploads `host`.
  explicit DeviceBuffer(const std::vector<T>& host, const std::string& name = "a device buffer")
      : DeviceBuffer(host.size(), name) {
    upload(host);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Takes over `other`'s memory.
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  /// Swaps with `other`, which then frees what this held.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    swap(other);
    return *this;
  }
  ~DeviceBuffer() { guarded_free(data_, true); }
  /// Names the buffer in messages ("out", "C").
  DeviceBuffer& named(const std::string& name) {
    if (data_ != nullptr) guard_rename(reinterpret_cast<unsigned char*>(data_) - kGuardBytes, name);
    return *this;
  }

  T* data() { return data_; }                               ///< Device pointer.
  const T* data() const { return data_; }                   ///< Device pointer.
  std::size_t size() const { return count_; }               ///< Number of elements.
  std::size_t bytes() const { return count_ * sizeof(T); }  ///< Size in bytes.

  /// Copies `host` (exactly size() elements) to the device and waits for it.
  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
    const ProfileScope phase("DeviceBuffer upload");
    copy_through_pinned_staging(data_, host.data(), bytes(), cudaMemcpyHostToDevice);
    // A pageable cudaMemcpy may return before the data lands: finish it before any kernel.
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  /// Copies the contents back to the host.
  std::vector<T> download() const {
    const ProfileScope phase("DeviceBuffer download");
    std::vector<T> host = large_host_vector<T>(count_);
    copy_through_pinned_staging(host.data(), data_, bytes(), cudaMemcpyDeviceToHost);
    return host;
  }
  /// Fills every byte with 0xFF (a NaN for float and double), so that elements a kernel
  /// never writes are told apart from wrong values.
  void poison() {
    if (count_ > 0) CUDA_CHECK(cudaMemset(data_, 0xFF, bytes()));
    // cudaMemset is asynchronous: finish it, so it cannot overwrite what a kernel on
    // another stream writes next.
    CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

/// Owns `count` elements of page-locked (pinned) host memory (cudaMallocHost / cudaFreeHost),
/// for tests that need fast or asynchronous host transfers; guarded like DeviceBuffer. Move-only.
template <class T>
class PinnedHostBuffer {
 public:
  /// Allocates `count` pinned elements (uninitialised); `name` is what messages call it.
  explicit PinnedHostBuffer(std::size_t count, const std::string& name = "a pinned host buffer")
      : data_(static_cast<T*>(guarded_allocate(count * sizeof(T), sizeof(T), false, name))), count_(count) {}
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  /// Takes over `other`'s memory.
  PinnedHostBuffer(PinnedHostBuffer&& other) noexcept { swap(other); }
  /// Swaps with `other`, which then frees what this held.
  PinnedHostBuffer& operator=(PinnedHostBuffer&& other) noexcept {
    swap(other);
    return *this;
  }
  ~PinnedHostBuffer() { guarded_free(data_, false); }
  T* data() { return data_; }                               ///< Host pointer.
  const T* data() const { return data_; }                   ///< Host pointer.
  std::size_t size() const { return count_; }               ///< Number of elements.
  std::size_t bytes() const { return count_ * sizeof(T); }  ///< Size in bytes.
  T& operator[](std::size_t i) { return data_[i]; }              ///< Element i.
  const T& operator[](std::size_t i) const { return data_[i]; }  ///< Element i.

 private:
  void swap(PinnedHostBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

/// Owns a CUDA stream. It is a blocking stream: work on it is ordered after work on the
/// legacy default stream (plain cudaMemset, cudaMemcpy), which keeps the tests simple.
class Stream {
 public:
  /// A stream with `flags` (cudaStreamNonBlocking: not ordered with the legacy default stream).
  explicit Stream(unsigned flags = cudaStreamDefault) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, flags));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(stream_); }
  cudaStream_t get() const { return stream_; }       ///< The stream handle.
  operator cudaStream_t() const { return stream_; }  ///< Passes as a cudaStream_t.

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace course

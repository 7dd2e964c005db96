/// @file gpu.h
/// @brief Finding the GPU, describing it, and measuring its copy peak.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace course {

/// Why no GPU test can run here ("no CUDA device: <error>"), or nothing when a device is usable.
std::optional<std::string> gpu_unavailable_reason();

/// What the tests need to know about the current device.
struct DeviceInfo {
  std::string name;                    ///< e.g. "NVIDIA H100 80GB HBM3"
  int compute_major = 0;               ///< compute capability, major
  int compute_minor = 0;               ///< compute capability, minor
  int sm_count = 0;                    ///< multiprocessors
  std::size_t l2_bytes = 0;            ///< L2 cache size
  std::size_t global_memory_bytes = 0;  ///< device memory size
  int async_engine_count = 0;          ///< copy engines (asyncEngineCount)
  bool can_map_host_memory = false;    ///< zero-copy possible (canMapHostMemory)
};

/// Properties of the current device (read once per process).
const DeviceInfo& current_device();

/// One line naming the device, e.g. "NVIDIA H100 80GB HBM3 (cc 9.0, 132 SMs, 50 MiB L2)".
std::string device_line();

/// Device-to-device cudaMemcpy bandwidth in GB/s (bytes read + bytes written), measured
/// once per process on a 256 MiB buffer: the peak that bandwidth thresholds are ratios to.
double measure_copy_peak_gbps();

/// Host-to-device cudaMemcpy bandwidth from pinned memory in GB/s (bytes transferred),
/// measured once per process on 256 MiB: the peak of the host link for transfer thresholds.
double measure_pinned_h2d_peak_gbps();

}  // namespace course

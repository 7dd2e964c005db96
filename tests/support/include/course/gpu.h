/// @file gpu.h
/// @brief Finding the GPU, describing it, and measuring its copy peak.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "course/device_buffer.h"

namespace course {

/// Why no GPU test can run here ("no CUDA device: <error>"), or nothing when a device is usable.
std::optional<std::string> gpu_unavailable_reason();

/// The CPUs of a Linux CPU list, as sysfs writes one ("0-15,32-47"), in increasing order; empty
/// when `list` is not one. CPU only (unit tests).
std::vector<int> parse_cpu_list(const std::string& list);

/// The sysfs folder of the PCI device whose bus id CUDA gives ("0000:3B:00.0", or with NVML's
/// 8-digit domain "00000000:3B:00.0"): "/sys/bus/pci/devices/0000:3b:00.0"; empty when `bus_id`
/// is not one. CPU only (unit tests).
std::string pci_sysfs_folder(const std::string& bus_id);

/// Keeps the calling thread, and the threads it starts from now on, on the CPUs nearest the
/// current GPU (its PCI device's local_cpulist), where the machine has CPUs farther from it (a
/// machine of two sockets): pinned host memory is then placed, at first touch, in the memory
/// beside the GPU, and the GPU's reads of mapped host memory do not cross the link between the
/// sockets (2 x H100, 2026-11-27: every reference's mapped reads at 0.55 of its pinned copies, not
/// 0.93; not yet run with this). Returns what it did, for the log ("CPUs 0-15 of 0-31, those
/// nearest the GPU"), or nothing where every CPU is as near (the usual machine of one socket), the
/// list cannot be read, or the program sees several GPUs (chapter 11's: no one GPU to be near).
/// Called by main() once the driver has started, before the context.
std::optional<std::string> run_near_the_gpu();

/// Keeps the calling thread (and the threads it starts from now on) on those of `near` it may
/// run on now: "CPUs 0-15 of 0-31"; nothing, and no change, when that is every CPU it may run on
/// now or none of them. run_near_the_gpu's second half; CPU only (unit tests).
std::optional<std::string> keep_this_thread_on(const std::vector<int>& near);

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
  int clock_khz = 0;                   ///< peak SM clock (cudaDevAttrClockRate), 0 if not reported
  int memory_clock_khz = 0;            ///< peak memory clock (cudaDevAttrMemoryClockRate), 0 if not reported
  int memory_bus_bits = 0;             ///< memory bus width (cudaDevAttrGlobalMemoryBusWidth), 0 if not reported
};

/// FP32 lanes per multiprocessor for compute capability major.minor (64 or 128), or 0 when unknown.
int fp32_lanes_per_sm(int major, int minor);

/// DRAM bandwidth from the memory clock and bus width, 2 transfers per clock, in GB/s; 0 when
/// the driver does not report them (some new drivers leave the memory clock out).
double theoretical_dram_gbps(const DeviceInfo& device);

/// FP32 fused multiply-add peak (2 flops each) of all SMs at the peak clock, in TFLOP/s; 0 when unknown.
double fp32_peak_tflops(const DeviceInfo& device);

/// The highest effective bandwidth a kernel can honestly reach here, in GB/s: 1.25 x the measured
/// copy peak (a fast kernel may edge past cudaMemcpy), but never above the DRAM's theoretical
/// bandwidth when the driver reports it. Sets `name` to what the ceiling is.
double bandwidth_ceiling_gbps(std::string* name);

/// The same for the host link: 1.25 x the measured pinned host-to-device peak.
double host_link_ceiling_gbps(std::string* name);

/// A function that waits for the GPU work of every device whose primary context this program has
/// made, creating none, for the GPU turn's yielding thread (gpu_turn.h). It calls the driver only,
/// never the runtime: the thread it interrupts may be held at the turn's gate inside a runtime
/// call, holding the runtime's own locks. Made (with the runtime) after the program's first CUDA
/// call; empty when the driver's entry points cannot be had. Errors are left to the program's own
/// calls to report.
std::function<void()> driver_wait_for_every_device();

/// Properties of the current device (read once per process).
const DeviceInfo& current_device();

/// One line naming the device, e.g. "NVIDIA H100 80GB HBM3 (cc 9.0, 132 SMs, 50 MiB L2)".
std::string device_line();

/// Why a test that needs `need_bytes` of device memory cannot run when `free_bytes` are free on
/// `device`, e.g. this test needs 35.4 GB of free device memory (in and out of 2^31 - 1 floats),
/// 20.1 GB are free on (the device line). The parenthesis holds `what` (what the memory is for)
/// and is left out when `what` is empty. The numbers are in GB, written as GoogleTest writes a
/// double; the grader finds these skips by the words from needs to device memory (MEMORY_SKIP in
/// tools/course_grading/results.py), so they must not change. CPU only (unit tests).
std::string memory_shortfall_reason(std::size_t need_bytes, std::size_t free_bytes, const std::string& what,
                                    const std::string& device);

/// The reason to skip a test that needs `need_bytes` of free device memory (cudaMemGetInfo, on
/// the current device), as memory_shortfall_reason words it with device_line(); empty when that
/// much is free. `what` says what the memory is for (may be empty). Used by
/// COURSE_REQUIRE_FREE_MEMORY (testing.h), which skips the test.
std::string free_memory_shortfall(std::size_t need_bytes, const std::string& what);

/// Device-to-device cudaMemcpy bandwidth in GB/s (bytes read + bytes written), measured
/// once per process on a 256 MiB buffer: the peak that bandwidth thresholds are ratios to.
double measure_copy_peak_gbps();

/// Host-to-device cudaMemcpy bandwidth from pinned memory in GB/s (bytes transferred),
/// measured once per process on 256 MiB, the fastest of 20 copies: the peak of the host link
/// for transfer thresholds.
double measure_pinned_h2d_peak_gbps();

/// The host link's speed around a perf test's own calls: one pinned host-to-device copy of
/// `bytes` (the test's pinned buffer, never the submission's), timed with events, before each
/// call (from FreshCalls::change, the device idle). A test whose speed is the link's compares
/// its median with this median: both then see the same link, which on the lent H100 is bimodal
/// at times (24-31 GB/s for a while, 55 otherwise), so a peak taken earlier may not hold.
class PinnedCopyProbe {
 public:
  /// Allocates `bytes` of pinned host memory (every page touched) and as many on the device.
  explicit PinnedCopyProbe(std::size_t bytes);
  void time_one(cudaStream_t stream);  ///< one copy, timed with events; waits for it
  double median_gbps() const;          ///< bytes / median time, 0 before any copy
  /// How many copies have been timed.
  int copies() const { return static_cast<int>(times_ms_.size()); }

 private:
  PinnedHostBuffer<unsigned char> host_;
  DeviceBuffer<unsigned char> device_;
  std::vector<double> times_ms_;
};

}  // namespace course

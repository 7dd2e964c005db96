#include "course/gpu.h"
#include "course/profile.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <type_traits>
#include <utility>

#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu_turn.h"
#include "course/timing.h"

namespace course {

std::optional<std::string> gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    cudaGetLastError();  // clear it, so that it does not look like a failure of the test
    return std::string("no CUDA device: ") + cudaGetErrorString(code);
  }
  if (count == 0) return std::string("no CUDA device: none visible");
  return std::nullopt;
}

std::vector<int> parse_cpu_list(const std::string& list) {
  std::vector<int> cpus;
  std::string text = list;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (text.empty()) return {};
  if (text.back() == ',') return {};  // (getline drops an empty last range)
  std::istringstream ranges(text);
  std::string range;
  while (std::getline(ranges, range, ',')) {
    const auto dash = range.find('-');
    const std::string first_text = range.substr(0, dash);
    const std::string last_text = dash == std::string::npos ? first_text : range.substr(dash + 1);
    const auto digits = [](const std::string& word) {
      return !word.empty() && word.size() <= 6 &&
             std::all_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    if (!digits(first_text) || !digits(last_text)) return {};
    const int first = std::stoi(first_text), last = std::stoi(last_text);
    if (last < first) return {};
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string pci_sysfs_folder(const std::string& bus_id) {
  // domain:bus:device.function, all hexadecimal; sysfs names the domain with 4 digits, in lower case.
  const auto first = bus_id.find(':');
  if (first == std::string::npos || first < 4) return {};
  const std::string domain = bus_id.substr(first - 4, 4);
  std::string rest = bus_id.substr(first);  // ":3B:00.0"
  if (bus_id.substr(0, first - 4).find_first_not_of('0') != std::string::npos) return {};  // a domain past 16 bits
  if (rest.size() != 8 || rest[0] != ':' || rest[3] != ':' || rest[6] != '.') return {};
  std::string name = domain + rest;
  for (char& c : name) {
    if (c == ':' || c == '.') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return {};
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return "/sys/bus/pci/devices/" + name;
}

namespace {
std::string cpu_list_text(const std::vector<int>& cpus) {
  std::ostringstream out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out << (i ? "," : "") << cpus[i];
    if (j > i) out << "-" << cpus[j];
    i = j + 1;
  }
  return out.str();
}
}  // namespace

std::optional<std::string> run_near_the_gpu() {
  // A program of several GPUs (chapter 11's) has no one GPU to be near: its CPUs stay as they are.
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count != 1) {
    cudaGetLastError();
    return std::nullopt;
  }
  int device = 0;
  char bus_id[64] = {0};
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  const std::string folder = pci_sysfs_folder(bus_id);
  if (folder.empty()) return std::nullopt;
  std::ifstream file(folder + "/local_cpulist");
  std::string line;
  if (!file || !std::getline(file, line)) return std::nullopt;
  const std::optional<std::string> kept = keep_this_thread_on(parse_cpu_list(line));
  if (!kept) return std::nullopt;
  return *kept + ", those nearest the GPU (" + bus_id + ")";
}

std::optional<std::string> keep_this_thread_on(const std::vector<int>& near) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (near.empty() || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::nullopt;
  std::vector<int> now, kept;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) now.push_back(cpu);
  for (int cpu : near)
    if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &allowed)) kept.push_back(cpu);
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  if (kept.empty() || kept.size() == now.size()) return std::nullopt;  // all as near, or none of them ours
  cpu_set_t chosen;
  CPU_ZERO(&chosen);
  for (int cpu : kept) CPU_SET(cpu, &chosen);
  if (sched_setaffinity(0, sizeof chosen, &chosen) != 0) return std::nullopt;
  return "CPUs " + cpu_list_text(kept) + " of " + cpu_list_text(now);
}

const DeviceInfo& current_device() {
  static const DeviceInfo info = [] {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    DeviceInfo result;
    result.name = prop.name;
    result.compute_major = prop.major;
    result.compute_minor = prop.minor;
    result.sm_count = prop.multiProcessorCount;
    result.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
    result.global_memory_bytes = prop.totalGlobalMem;
    result.async_engine_count = prop.asyncEngineCount;
    result.can_map_host_memory = prop.canMapHostMemory != 0;
    // Attributes a driver may not report: a failure leaves 0 ("unknown"), never an error.
    auto attribute = [device](cudaDeviceAttr which) {
      int value = 0;
      if (cudaDeviceGetAttribute(&value, which, device) != cudaSuccess) {
        cudaGetLastError();
        value = 0;
      }
      return value;
    };
    result.clock_khz = attribute(cudaDevAttrClockRate);
    result.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate);
    result.memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
    return result;
  }();
  return info;
}

std::string device_line() {
  const DeviceInfo& d = current_device();
  std::ostringstream out;
  out << d.name << " (cc " << d.compute_major << "." << d.compute_minor << ", " << d.sm_count
      << " SMs, " << d.l2_bytes / (1024 * 1024) << " MiB L2)";
  return out.str();
}

std::string memory_shortfall_reason(std::size_t need_bytes, std::size_t free_bytes, const std::string& what,
                                    const std::string& device) {
  // ::testing::Message writes doubles as GTEST_SKIP() << does (17 significant digits), as the
  // chapters' tests wrote these reasons before this function.
  ::testing::Message reason;
  reason << "this test needs " << need_bytes / 1e9 << " GB of free device memory";
  if (!what.empty()) reason << " (" << what << ")";
  reason << ", " << free_bytes / 1e9 << " GB are free on " << device;
  return reason.GetString();
}

std::string free_memory_shortfall(std::size_t need_bytes, const std::string& what) {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes >= need_bytes) return "";
  return memory_shortfall_reason(need_bytes, free_bytes, what, device_line());
}

int fp32_lanes_per_sm(int major, int minor) {
  if (major == 7 || (major == 8 && minor == 0)) return 64;  // Volta, Turing, A100
  if (major == 6) return minor == 0 ? 64 : 128;
  if (major >= 8) return 128;  // GA10x, Ada, Hopper, Blackwell
  return 0;
}

double theoretical_dram_gbps(const DeviceInfo& d) {
  if (d.memory_clock_khz <= 0 || d.memory_bus_bits <= 0) return 0;
  return 2.0 * d.memory_clock_khz * 1e3 * (d.memory_bus_bits / 8.0) / 1e9;
}

double fp32_peak_tflops(const DeviceInfo& d) {
  const int lanes = fp32_lanes_per_sm(d.compute_major, d.compute_minor);
  if (lanes == 0 || d.clock_khz <= 0) return 0;
  return 2.0 * lanes * d.sm_count * d.clock_khz * 1e3 / 1e12;
}

double bandwidth_ceiling_gbps(std::string* name) {
  const double from_copy = 1.25 * measure_copy_peak_gbps();
  const double dram = theoretical_dram_gbps(current_device());
  if (dram > 0 && dram < from_copy) {
    if (name) *name = "the DRAM's theoretical bandwidth, 2 x memory clock x bus width";
    return dram;
  }
  if (name) *name = "1.25 x the device-to-device copy peak";
  return from_copy;
}

double host_link_ceiling_gbps(std::string* name) {
  if (name) *name = "1.25 x the pinned host-to-device copy peak";
  return 1.25 * measure_pinned_h2d_peak_gbps();
}

std::function<void()> driver_wait_for_every_device() {
  // The driver's functions, looked up through the runtime (the test programs do not link libcuda).
  // Its handles are plain integers and pointers here: CUresult, CUdevice, CUcontext.
  using Context = void*;
  struct Driver {
    int (*device_count)(int*) = nullptr;
    int (*device)(int*, int) = nullptr;
    int (*primary_state)(int, unsigned int*, int*) = nullptr;
    int (*primary_retain)(Context*, int) = nullptr;
    int (*primary_release)(int) = nullptr;
    int (*push)(Context) = nullptr;
    int (*pop)(Context*) = nullptr;
    int (*synchronize)() = nullptr;
  } driver;
  bool found_all = true;
  auto look_up = [&found_all](const char* name, auto& function) {
    void* address = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion(name, &address, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess || address == nullptr) {
      cudaGetLastError();
      found_all = false;
      return;
    }
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(address);
  };
  look_up("cuDeviceGetCount", driver.device_count);
  look_up("cuDeviceGet", driver.device);
  look_up("cuDevicePrimaryCtxGetState", driver.primary_state);
  look_up("cuDevicePrimaryCtxRetain", driver.primary_retain);
  look_up("cuDevicePrimaryCtxRelease", driver.primary_release);
  look_up("cuCtxPushCurrent", driver.push);
  look_up("cuCtxPopCurrent", driver.pop);
  look_up("cuCtxSynchronize", driver.synchronize);
  if (!found_all) return {};
  return [driver] {
    int count = 0;
    if (driver.device_count(&count) != 0) return;
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      int device = 0, active = 0;
      unsigned int flags = 0;
      if (driver.device(&device, ordinal) != 0 || driver.primary_state(device, &flags, &active) != 0 || !active)
        continue;  // no context there: no work of this program either
      Context context = nullptr;
      if (driver.primary_retain(&context, device) != 0) continue;
      if (driver.push(context) == 0) {
        (void)driver.synchronize();
        Context popped = nullptr;
        (void)driver.pop(&popped);
      }
      (void)driver.primary_release(device);
    }
  };
}

double measure_copy_peak_gbps() {
  static const double peak = [] {
    const ExclusiveGpuTurn alone;  // its warm-up too (course/gpu_turn.h)
    const ProfileScope phase("copy peak");
    // 256 MiB each way: five times the largest L2 of current GPUs, so DRAM is measured.
    constexpr std::size_t kBytes = std::size_t{256} << 20;
    DeviceBuffer<unsigned char> source(kBytes);
    DeviceBuffer<unsigned char> destination(kBytes);
    CUDA_CHECK(cudaMemset(source.data(), 1, kBytes));
    Stream stream;
    // Copy for 50 ms before timing: a process's first work may find the GPU's clocks still low
    // (an H100 process once measured 2440 GB/s here, 2900 in others), and a low peak inflates
    // every ratio to it and lowers the ceiling that rejects impossible rates.
    const auto warm_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    while (std::chrono::steady_clock::now() < warm_until) {
      CUDA_CHECK(cudaMemcpyAsync(destination.data(), source.data(), kBytes, cudaMemcpyDeviceToDevice, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    // Medians of 20 copies until two in a row agree within 3 % (at most 4), keeping the highest:
    // of the 24 processes that measured it in three H100 test runs, one still measured 2475 GB/s
    // after the warm-up, the others 2859-2920, and it reported a reference at 1.09 of that "peak".
    double gbps = 0;
    for (int round = 0, agreed = 0; round < 4 && !agreed; ++round) {
      const TimingStats t = time_on_stream(
          [&](cudaStream_t s) {
            CUDA_CHECK(cudaMemcpyAsync(destination.data(), source.data(), kBytes,
                                       cudaMemcpyDeviceToDevice, s));
          },
          stream, 3, 20);
      const double this_round = 2.0 * kBytes / 1e9 / (t.median_ms / 1e3);
      agreed = round > 0 && std::abs(this_round - gbps) <= 0.03 * std::max(this_round, gbps);
      if (round > 0 && !agreed && round < 3)
        std::printf("[  PEAK    ] device-to-device cudaMemcpy: %.1f GB/s, the best before %.1f: measuring again\n",
                    this_round, gbps);
      gbps = std::max(gbps, this_round);
    }
    std::printf("[  PEAK    ] device-to-device cudaMemcpy, 256 MiB: %.1f GB/s on %s\n", gbps,
                device_line().c_str());
    return gbps;
  }();
  return peak;
}

double measure_pinned_h2d_peak_gbps() {
  static const double peak = [] {
    const ExclusiveGpuTurn alone;
    const ProfileScope phase("pinned copy peak");
    constexpr std::size_t kBytes = std::size_t{256} << 20;
    PinnedHostBuffer<unsigned char> source(kBytes);
    std::memset(source.data(), 1, kBytes);  // touch every page before timing
    DeviceBuffer<unsigned char> destination(kBytes);
    Stream stream;
    // The fastest of 20: on the lent H100 the host link is bimodal at times (medians of 23.7
    // and 31.2 GB/s seen in 2 of 10 runs, against 55 otherwise), and a peak is the best the
    // link did, not its typical speed. A low peak would inflate every ratio to it.
    const TimingStats t = time_on_stream(
        [&](cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(destination.data(), source.data(), kBytes, cudaMemcpyHostToDevice, s));
        },
        stream, 5, 20, Repeat::all);
    const double gbps = kBytes / 1e9 / (t.min_ms / 1e3);
    std::printf("[  PEAK    ] pinned host-to-device cudaMemcpy, 256 MiB: %.1f GB/s (fastest of %d; median %.1f) on %s\n",
                gbps, t.repetitions, kBytes / 1e9 / (t.median_ms / 1e3), device_line().c_str());
    return gbps;
  }();
  return peak;
}

PinnedCopyProbe::PinnedCopyProbe(std::size_t bytes)
    : host_(bytes, "the link probe's pinned buffer"), device_(bytes, "the link probe's device buffer") {
  std::memset(host_.data(), 1, bytes);  // every page touched before timing
}

void PinnedCopyProbe::time_one(cudaStream_t stream) {
  const TimingStats t = time_on_stream(
      [&](cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyAsync(device_.data(), host_.data(), host_.bytes(), cudaMemcpyHostToDevice, s));
      },
      stream, 0, 1);
  times_ms_.push_back(t.median_ms);
}

double PinnedCopyProbe::median_gbps() const {
  if (times_ms_.empty()) return 0;
  const double median_ms = summarize_timings(times_ms_).median_ms;
  return median_ms > 0 ? host_.bytes() / 1e9 / (median_ms / 1e3) : 0;
}

}  // namespace course

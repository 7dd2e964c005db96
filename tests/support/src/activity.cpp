#include "course/activity.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cxxabi.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "course/cuda_check.h"

namespace course {

namespace {

#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using CopyRecord = CUpti_ActivityMemcpy6;
#else
using KernelRecord = CUpti_ActivityKernel9;
using CopyRecord = CUpti_ActivityMemcpy5;
#endif
using SetRecord = CUpti_ActivityMemset4;

std::mutex recorded_mutex;
Activity recorded;

void check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  throw std::runtime_error(std::string("CUPTI: ") + what + " failed: " + (text ? text : "unknown error") +
                           " (is another tool, such as compute-sanitizer or a profiler, using CUPTI?)");
}

const char* copy_kind(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "other";
  }
}

const char* memory_kind(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "managed";
    default: return "unknown";
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = std::size_t{4} << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard<std::mutex> lock(recorded_mutex);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const KernelRecord*>(record);
      KernelLaunch launch;
      launch.name = k->name ? k->name : "";
      launch.readable = demangle(launch.name);
      launch.grid[0] = k->gridX, launch.grid[1] = k->gridY, launch.grid[2] = k->gridZ;
      launch.block[0] = k->blockX, launch.block[1] = k->blockY, launch.block[2] = k->blockZ;
      launch.static_shared_bytes = k->staticSharedMemory;
      launch.dynamic_shared_bytes = k->dynamicSharedMemory;
      launch.stream_id = k->streamId;
      launch.device_id = k->deviceId;
      recorded.kernels.push_back(std::move(launch));
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* c = reinterpret_cast<const CopyRecord*>(record);
      recorded.copies.push_back({copy_kind(c->copyKind), memory_kind(c->srcKind), memory_kind(c->dstKind), c->bytes,
                                 c->streamId, c->deviceId});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
      const auto* c = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      recorded.copies.push_back({"PtoP", memory_kind(c->srcKind), memory_kind(c->dstKind), c->bytes, c->streamId,
                                 c->srcDeviceId});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const SetRecord*>(record);
      recorded.memsets.push_back({m->bytes, m->streamId});
    }
  }
  std::free(buffer);
}

const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};

// The bytes of this executable, read once: kernel names registered by its own code are in them.
const std::string& own_executable_bytes() {
  static const std::string bytes = [] {
    std::ifstream file("/proc/self/exe", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }();
  return bytes;
}

}  // namespace

std::string demangle(const std::string& symbol) {
  int status = 0;
  char* text = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return symbol;
  std::string result(text);
  std::free(text);
  return result;
}

bool is_own_kernel(const std::string& mangled, const std::string& readable, std::string* why) {
  std::string name = readable;
  if (name.rfind("void ", 0) == 0) name = name.substr(5);
  for (const char* library : {"cub::", "thrust::", "cutlass::", "cute::"}) {
    if (name.rfind(library, 0) == 0) {
      if (why) *why = std::string("a kernel of the ") + std::string(library, std::string(library).size() - 2) + " library";
      return false;
    }
  }
  // The host side registers each kernel of the program by its mangled name, a C string.
  if (own_executable_bytes().find(mangled + '\0') == std::string::npos) {
    if (why) *why = "not in this program's own code (a library's kernel, e.g. cuBLAS)";
    return false;
  }
  return true;
}

std::string Activity::summary() const {
  std::ostringstream out;
  out << kernels.size() << " kernel(s), " << copies.size() << " copy(ies), " << memsets.size() << " memset(s)";
  for (const auto& k : kernels)
    out << "\n  kernel " << k.readable << " grid (" << k.grid[0] << "," << k.grid[1] << "," << k.grid[2] << ") block ("
        << k.block[0] << "," << k.block[1] << "," << k.block[2] << ") shared " << k.static_shared_bytes << "+"
        << k.dynamic_shared_bytes << " B, stream " << k.stream_id << ", device " << k.device_id;
  for (const auto& c : copies)
    out << "\n  copy " << c.kind << " " << c.bytes << " B from " << c.source << " to " << c.destination << " memory, stream "
        << c.stream_id;
  for (const auto& m : memsets) out << "\n  memset " << m.bytes << " B, stream " << m.stream_id;
  return out.str();
}

Activity record_activity(const std::function<void()>& work) {
  static std::once_flag registered;
  std::call_once(registered, [] { check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "registering buffers"); });
  CUDA_CHECK(cudaDeviceSynchronize());
  {
    std::lock_guard<std::mutex> lock(recorded_mutex);
    recorded = Activity{};
  }
  for (auto kind : kKinds) check(cuptiActivityEnable(kind), "enabling activity records");
  try {
    work();
    // Unchecked: the caller's CUDA_CHECK_LAUNCH reports a failed launch with its name.
    cudaDeviceSynchronize();
  } catch (...) {
    for (auto kind : kKinds) cuptiActivityDisable(kind);
    throw;
  }
  for (auto kind : kKinds) check(cuptiActivityDisable(kind), "disabling activity records");
  check(cuptiActivityFlushAll(1), "flushing activity records");
  std::lock_guard<std::mutex> lock(recorded_mutex);
  return recorded;
}

Activity record_activity_on(void* stream, const std::function<void()>& work) {
  void* marker = nullptr;
  CUDA_CHECK(cudaMalloc(&marker, 4));
  Activity activity;
  try {
    activity = record_activity([&] {
      CUDA_CHECK(cudaMemsetAsync(marker, 0, 4, static_cast<cudaStream_t>(stream)));
      CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
      work();
    });
  } catch (...) {
    cudaFree(marker);
    throw;
  }
  CUDA_CHECK(cudaFree(marker));
  if (activity.memsets.empty()) throw std::runtime_error("CUPTI recorded no memset for the stream marker");
  activity.given_stream_id = activity.memsets.front().stream_id;
  activity.memsets.erase(activity.memsets.begin());
  return activity;
}

}  // namespace course

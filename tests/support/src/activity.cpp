#include "course/activity.h"
#include "course/gpu_turn.h"
#include "course/profile.h"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
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
      launch.start_ns = k->start, launch.end_ns = k->end;
      launch.registers_per_thread = k->registersPerThread;
      recorded.kernels.push_back(std::move(launch));
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* c = reinterpret_cast<const CopyRecord*>(record);
      recorded.copies.push_back({copy_kind(c->copyKind), memory_kind(c->srcKind), memory_kind(c->dstKind), c->bytes,
                                 c->streamId, c->deviceId, c->start, c->end});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
      const auto* c = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      recorded.copies.push_back({"PtoP", memory_kind(c->srcKind), memory_kind(c->dstKind), c->bytes, c->streamId,
                                 c->srcDeviceId, c->start, c->end});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const SetRecord*>(record);
      recorded.memsets.push_back({m->bytes, m->streamId});
    }
  }
  std::free(buffer);
}

const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};
// While instructions are counted: CUPTI's SASS metrics count nothing with concurrent-kernel
// records on (seen on an H100, CUDA 13.0: every count zero; enabled after them, the records
// are refused as not compatible), and count with the serial kernel records.
const CUpti_ActivityKind kCountingKinds[] = {CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                             CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};

// ------------------------------------------------------------------ runtime calls (callback API)

// CUDA 13's launches from <<<...>>> go through __cudaLaunchKernel, whose parameters CUPTI passes
// in the order of its declaration (crt/device_functions.h); the generated header has no struct
// for it. Same layout as cudaLaunchKernel's, with a cudaKernel_t first.
struct LaunchKernelHandleParams {
  const void* kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

struct CallRecording {
  std::mutex mutex;
  std::vector<RuntimeCall> calls;
  std::vector<LaunchArguments> read;
};
CallRecording& call_recording() {
  static CallRecording recording;
  return recording;
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// "cudaEventRecord_ptsz" -> "cudaEventRecord", "__cudaLaunchKernel" -> "cudaLaunchKernel".
std::string plain_name(const char* name) {
  std::string text = name ? name : "";
  if (text.rfind("__", 0) == 0) text = text.substr(2);
  for (const char* suffix : {"_ptsz", "_ptds"})
    if (ends_with(text, suffix)) text.resize(text.size() - std::strlen(suffix));
  return text;
}

void read_launch(RuntimeCall& call, const void* func, void** args, size_t shared, cudaStream_t stream,
                 const char* symbol, const std::vector<LaunchArguments>& read) {
  call.object = func;
  call.has_stream = true;
  call.stream = stream;
  call.value = static_cast<double>(shared);
  call.kernel = symbol ? demangle(symbol) : "";
  if (args == nullptr || call.kernel.empty()) return;
  for (const auto& wanted : read) {
    if (!ends_with(call.kernel, wanted.signature)) continue;
    // The signature says the first `pointers` parameters are pointers: args[i] points at each.
    for (int i = 0; i < wanted.pointers; ++i) {
      std::uintptr_t value = 0;
      std::memcpy(&value, args[i], sizeof(value));
      call.pointers.push_back(value);
    }
    return;
  }
}

// One runtime call that returned, while calls are recorded.
void record_runtime_call(CUpti_CallbackId id, const CUpti_CallbackData* info) {
  RuntimeCall call;
  call.name = plain_name(info->functionName);
  call.result = info->functionReturnValue ? *static_cast<const int*>(info->functionReturnValue) : 0;
  const bool ok = call.result == cudaSuccess;
  const void* p = info->functionParams;
  auto& recording = call_recording();
  switch (id) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020: {
      const auto* a = static_cast<const cudaEventCreate_v3020_params*>(p);
      if (ok && a->event) call.object = *a->event;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020: {
      const auto* a = static_cast<const cudaEventCreateWithFlags_v3020_params*>(p);
      if (ok && a->event) call.object = *a->event;
      call.kind = static_cast<int>(a->flags);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000: {
      const auto* a = static_cast<const cudaEventRecord_v3020_params*>(p);
      call.object = a->event, call.has_stream = true, call.stream = a->stream;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010: {
      const auto* a = static_cast<const cudaEventRecordWithFlags_v11010_params*>(p);
      call.object = a->event, call.has_stream = true, call.stream = a->stream, call.kind = static_cast<int>(a->flags);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020:
      call.object = static_cast<const cudaEventDestroy_v3020_params*>(p)->event;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
      call.object = static_cast<const cudaEventSynchronize_v3020_params*>(p)->event;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventElapsedTime_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventElapsedTime_v12080: {
      const auto* a = static_cast<const cudaEventElapsedTime_v12080_params*>(p);
      call.object = a->start, call.other = a->end;
      if (ok && a->ms) call.value = *a->ms;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
      call.has_stream = true, call.stream = static_cast<const cudaStreamSynchronize_v3020_params*>(p)->stream;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000: {
      const auto* a = static_cast<const cudaStreamWaitEvent_v3020_params*>(p);
      call.has_stream = true, call.stream = a->stream, call.other = a->event;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020: {
      const auto* a = static_cast<const cudaStreamCreate_v3020_params*>(p);
      if (ok && a->pStream) call.object = *a->pStream;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000: {
      const auto* a = static_cast<const cudaStreamCreateWithFlags_v5000_params*>(p);
      if (ok && a->pStream) call.object = *a->pStream;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050: {
      const auto* a = static_cast<const cudaStreamCreateWithPriority_v5050_params*>(p);
      if (ok && a->pStream) call.object = *a->pStream;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050:
      call.object = static_cast<const cudaStreamDestroy_v5050_params*>(p)->stream;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSetLimit_v3020: {
      const auto* a = static_cast<const cudaDeviceSetLimit_v3020_params*>(p);
      call.kind = static_cast<int>(a->limit), call.value = static_cast<double>(a->value);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSetAttribute_v11000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSetAttribute_ptsz_v11000: {
      const auto* a = static_cast<const cudaStreamSetAttribute_v11000_params*>(p);
      call.has_stream = true, call.stream = a->stream, call.kind = static_cast<int>(a->attr);
      if (a->attr == cudaStreamAttributeAccessPolicyWindow && a->param) {
        call.object = a->param->accessPolicyWindow.base_ptr;
        call.value = static_cast<double>(a->param->accessPolicyWindow.num_bytes);
      }
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020: {
      const auto* a = static_cast<const cudaMallocAsync_v11020_params*>(p);
      if (ok && a->devPtr) call.object = *a->devPtr;
      call.has_stream = true, call.stream = a->hStream, call.value = static_cast<double>(a->size);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020: {
      const auto* a = static_cast<const cudaMallocFromPoolAsync_v11020_params*>(p);
      if (ok && a->ptr) call.object = *a->ptr;
      call.has_stream = true, call.stream = a->stream, call.value = static_cast<double>(a->size);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000: {
      const auto* a = static_cast<const cudaMemcpyAsync_v3020_params*>(p);  // the _ptsz one is laid out alike
      call.object = a->dst, call.other = a->src, call.has_stream = true, call.stream = a->stream;
      call.value = static_cast<double>(a->count), call.kind = static_cast<int>(a->kind);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020: {
      const auto* a = static_cast<const cudaFreeAsync_v11020_params*>(p);
      call.object = a->devPtr, call.has_stream = true, call.stream = a->hStream;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6050: {
      const auto* a = static_cast<const cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6050_params*>(p);
      call.object = a->func, call.kind = a->blockSize, call.value = static_cast<double>(a->dynamicSMemSize);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000: {
      const auto* a = static_cast<const cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000_params*>(p);
      call.object = a->func, call.kind = a->blockSize, call.value = static_cast<double>(a->dynamicSMemSize);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyAvailableDynamicSMemPerBlock_v10200: {
      call.object = static_cast<const cudaOccupancyAvailableDynamicSMemPerBlock_v10200_params*>(p)->func;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000: {
      const auto* a = static_cast<const cudaLaunchKernel_v7000_params*>(p);
      read_launch(call, a->func, a->args, a->sharedMem, a->stream, info->symbolName, recording.read);
      break;
    }
#if defined(CUPTI_API_VERSION) && CUPTI_API_VERSION >= 130000
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000: {
      const auto* a = static_cast<const LaunchKernelHandleParams*>(p);
      read_launch(call, a->kernel, a->args, a->sharedMem, a->stream, info->symbolName, recording.read);
      break;
    }
#endif
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      const auto* a = static_cast<const cudaLaunchKernelExC_v11060_params*>(p);
      if (a->config)
        read_launch(call, a->func, a->args, a->config->dynamicSmemBytes, a->config->stream, info->symbolName,
                    recording.read);
      break;
    }
    default:
      break;
  }
  std::lock_guard<std::mutex> lock(recording.mutex);
  recording.calls.push_back(std::move(call));
}

// ------------------------------------------------------------------ the one subscriber
// CUPTI 13.0 allows one subscriber per program: the recording of runtime calls and the GPU
// turn's gate of every CUDA call (gpu_turn.h) share it.
struct ApiWatch {
  std::mutex mutex;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::atomic<bool> recording{false};
  std::atomic<bool> gating{false};
};
// Never destroyed: the CUDA calls of the program's exit still come through.
ApiWatch& api_watch() {
  static ApiWatch* watch = new ApiWatch;
  return *watch;
}

// Stream captures, for the GPU turn: a device-wide wait breaks a capture under way.
void note_capture(CUpti_CallbackId id, const CUpti_CallbackData* info) {
  const int result = info->functionReturnValue ? *static_cast<const int*>(info->functionReturnValue) : 0;
  switch (id) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000:
      if (result == cudaSuccess) cuda_capture_began();
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000:
      if (result != cudaErrorIllegalState) cuda_capture_ended();  // (that one: no capture to end)
      break;
    default:
      break;
  }
}

void CUPTIAPI on_api_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  ApiWatch& watch = api_watch();
  const bool gating = watch.gating.load();
  if (info->callbackSite == CUPTI_API_ENTER) {
    if (gating) cuda_call_begins();
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (watch.recording.load()) record_runtime_call(id, info);
    if (gating) note_capture(id, info);
  }
  if (gating) cuda_call_ends();
}

void subscribe(ApiWatch& watch) {
  if (watch.subscriber == nullptr)
    check(cuptiSubscribe(&watch.subscriber, on_api_call, nullptr), "subscribing to API callbacks");
}

// Turns the recording of runtime calls on (with the launches to read) or off.
void record_calls(bool on, const std::vector<LaunchArguments>& read = {}) {
  ApiWatch& watch = api_watch();
  const std::lock_guard<std::mutex> guard(watch.mutex);
  if (watch.subscriber == nullptr && !on) return;
  subscribe(watch);
  if (on) {
    auto& recording = call_recording();
    std::lock_guard<std::mutex> lock(recording.mutex);
    recording.calls.clear();
    recording.read = read;
  }
  watch.recording = on;
  if (!watch.gating)  // the gate keeps the runtime's callbacks on
    check(cuptiEnableDomain(on ? 1 : 0, watch.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API),
          on ? "enabling runtime API callbacks" : "disabling runtime API callbacks");
}

// record_calls(false) on the way out of a failure: nothing thrown.
void stop_recording_calls() noexcept {
  ApiWatch& watch = api_watch();
  const std::lock_guard<std::mutex> guard(watch.mutex);
  watch.recording = false;
  if (watch.subscriber != nullptr && !watch.gating)
    cuptiEnableDomain(0, watch.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
}

std::vector<RuntimeCall> recorded_calls() {
  auto& recording = call_recording();
  std::lock_guard<std::mutex> lock(recording.mutex);
  return recording.calls;
}

// The bytes of this executable, read once: kernel names registered by its own code are in them.
const std::string& own_executable_bytes() {
  static const std::string bytes = [] {
    std::ifstream file("/proc/self/exe", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }();
  return bytes;
}

}  // namespace

bool pass_cuda_calls_through_gpu_turn(std::string* why_not) {
  ApiWatch& watch = api_watch();
  const std::lock_guard<std::mutex> guard(watch.mutex);
  try {
    subscribe(watch);
    check(cuptiEnableDomain(1, watch.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "enabling runtime API callbacks");
    check(cuptiEnableDomain(1, watch.subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "enabling driver API callbacks");
  } catch (const std::exception& error) {
    if (why_not) *why_not = error.what();
    return false;
  }
  watch.gating = true;
  return true;
}

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

std::string Activity::calls_summary(std::size_t most) const {
  std::ostringstream out;
  out << calls.size() << " runtime call(s)";
  const std::size_t first = calls.size() > most ? calls.size() - most : 0;
  if (first > 0) out << ", the last " << most << ":";
  for (std::size_t i = first; i < calls.size(); ++i) {
    const auto& c = calls[i];
    out << "\n  " << i << ": " << c.name;
    if (!c.kernel.empty()) out << " " << c.kernel;
    if (c.has_stream) out << " stream " << c.stream;
    if (c.object) out << " of " << c.object;
    if (c.other) out << " and " << c.other;
    if (c.value != 0) out << " value " << c.value;
    if (c.result != cudaSuccess) out << " -> error " << c.result;
  }
  return out.str();
}

std::vector<RuntimeCall> Activity::calls_named(const std::string& name) const {
  std::vector<RuntimeCall> found;
  for (const auto& c : calls)
    if (c.name == name) found.push_back(c);
  return found;
}

namespace {

// `before` runs with the activity records on but not the runtime calls (the recording's own
// marker); `work` with both.
Activity record(const std::function<void()>& before, const std::function<void()>& work,
                const std::vector<LaunchArguments>& read, Counting counting) {
  static std::once_flag registered;
  std::call_once(registered, [] { check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "registering buffers"); });
  CUDA_CHECK(cudaDeviceSynchronize());
  {
    std::lock_guard<std::mutex> lock(recorded_mutex);
    recorded = Activity{};
  }
  bool counting_instructions = false;
  std::string not_counted = "not asked for";
  const auto& kinds = counting == Counting::instructions ? kCountingKinds : kKinds;
  const auto stop = [&] {
    stop_recording_calls();
    for (auto kind : kinds) cuptiActivityDisable(kind);
    if (counting_instructions) detail::stop_counting_instructions();
  };
  for (auto kind : kinds) check(cuptiActivityEnable(kind), "enabling activity records");
  ExecutedInstructions executed;
  // CUPTI's profiler counts for one process at a time: the exclusive GPU turn, from before the
  // counting starts until it has been read (not around the whole test: its inputs and checks
  // need not keep every other program off the GPU).
  std::optional<ExclusiveGpuTurn> counting_alone;
  try {
    if (before) before();
    if (counting == Counting::instructions) {
      counting_alone.emplace();
      CUDA_CHECK(cudaDeviceSynchronize());  // kernels are patched only while none is in flight
      counting_instructions = detail::start_counting_instructions(&not_counted);
    }
    record_calls(true, read);
    work();
    record_calls(false);
    // Unchecked: the caller's CUDA_CHECK_LAUNCH reports a failed launch with its name.
    cudaDeviceSynchronize();
    if (counting_instructions) {
      counting_instructions = false;
      executed = detail::stop_counting_instructions();
    } else {
      executed.why_not = not_counted;
    }
    counting_alone.reset();
  } catch (...) {
    stop();
    throw;
  }
  for (auto kind : kinds) check(cuptiActivityDisable(kind), "disabling activity records");
  check(cuptiActivityFlushAll(1), "flushing activity records");
  std::lock_guard<std::mutex> lock(recorded_mutex);
  Activity activity = recorded;
  activity.calls = recorded_calls();
  activity.executed = std::move(executed);
  // Every kernel that runs executes instructions: none counted means the counting failed.
  if (activity.executed.counted && activity.executed.instructions.empty() && !activity.kernels.empty()) {
    activity.executed.counted = false;
    activity.executed.why_not = "CUPTI counted no instruction of the " + std::to_string(activity.kernels.size()) +
                                " kernel(s) that ran";
  }
  return activity;
}

}  // namespace

Activity record_activity(const std::function<void()>& work, const std::vector<LaunchArguments>& read,
                         Counting counting) {
  const ProfileScope phase("record_activity (CUPTI)");
  return record(nullptr, work, read, counting);
}

Activity record_activity_on(void* stream, const std::function<void()>& work, const std::vector<LaunchArguments>& read,
                            Counting counting) {
  const ProfileScope phase("record_activity (CUPTI)");
  void* marker = nullptr;
  CUDA_CHECK(cudaMalloc(&marker, 4));
  Activity activity;
  try {
    activity = record(
        [&] {
          CUDA_CHECK(cudaMemsetAsync(marker, 0, 4, static_cast<cudaStream_t>(stream)));
          CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
        },
        work, read, counting);
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

std::map<std::string, double> TimelineFigures::named() const {
  return {{"timeline.span_ms", span_ms},
          {"timeline.copy_busy_pct", copy_busy_pct},
          {"timeline.kernel_busy_pct", kernel_busy_pct},
          {"timeline.overlap_pct", overlap_pct},
          {"timeline.kernel_hidden_pct", kernel_hidden_pct},
          {"timeline.both_ways_pct", both_ways_pct},
          {"timeline.host_link_bytes", host_link_bytes},
          {"timeline.host_link_gbps", host_link_gbps},
          {"timeline.pageable_copies", pageable_copies},
          {"timeline.copies", copies},
          {"timeline.kernels", kernels}};
}

TimelineFigures timeline_figures(const Activity& activity) {
  // One sweep over every start and end: between two consecutive instants the counts of running
  // kernels, uploads, downloads and other copies are constant, and each interval's length goes
  // to the states it is in.
  enum Lane { kernel, upload, download, other_copy, lanes };
  struct Edge {
    std::uint64_t at;
    int lane;
    int step;  // +1 start, -1 end
  };
  std::vector<Edge> edges;
  TimelineFigures figures;
  auto add = [&](std::uint64_t start, std::uint64_t end, int lane) {
    if (start == 0 || end <= start) return;
    edges.push_back({start, lane, +1});
    edges.push_back({end, lane, -1});
  };
  for (const auto& k : activity.kernels) add(k.start_ns, k.end_ns, kernel);
  for (const auto& c : activity.copies) {
    const int lane = c.kind == "HtoD" ? upload : c.kind == "DtoH" ? download : other_copy;
    add(c.start_ns, c.end_ns, lane);
    if (lane != other_copy) {
      figures.host_link_bytes += static_cast<double>(c.bytes);
      if (c.source == "pageable" || c.destination == "pageable") figures.pageable_copies += 1;
    }
  }
  figures.kernels = static_cast<double>(activity.kernels.size());
  figures.copies = static_cast<double>(activity.copies.size());
  if (edges.empty()) return figures;
  // Ends before starts at the same instant: back-to-back work does not count as overlapping.
  std::sort(edges.begin(), edges.end(),
            [](const Edge& a, const Edge& b) { return a.at != b.at ? a.at < b.at : a.step < b.step; });
  int running[lanes] = {0, 0, 0, 0};
  double copy_ns = 0, kernel_ns = 0, overlap_ns = 0, both_ways_ns = 0, host_copy_ns = 0;
  for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
    running[edges[i].lane] += edges[i].step;
    const double length = static_cast<double>(edges[i + 1].at - edges[i].at);
    const bool any_copy = running[upload] + running[download] + running[other_copy] > 0;
    const bool any_kernel = running[kernel] > 0;
    if (any_copy) copy_ns += length;
    if (any_kernel) kernel_ns += length;
    if (any_copy && any_kernel) overlap_ns += length;
    if (running[upload] > 0 && running[download] > 0) both_ways_ns += length;
    if (running[upload] + running[download] > 0) host_copy_ns += length;
  }
  const double span_ns = static_cast<double>(edges.back().at - edges.front().at);
  figures.span_ms = span_ns / 1e6;
  if (span_ns > 0) {
    figures.copy_busy_pct = 100 * copy_ns / span_ns;
    figures.kernel_busy_pct = 100 * kernel_ns / span_ns;
    figures.overlap_pct = 100 * overlap_ns / span_ns;
    figures.both_ways_pct = 100 * both_ways_ns / span_ns;
  }
  if (kernel_ns > 0) figures.kernel_hidden_pct = 100 * overlap_ns / kernel_ns;
  if (host_copy_ns > 0) figures.host_link_gbps = figures.host_link_bytes / host_copy_ns;  // bytes per ns = GB/s
  return figures;
}

SmLimits current_sm_limits() {
  SmLimits limits;
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    cudaGetLastError();  // (no device: nothing left behind for the tests' checks)
    return limits;
  }
  limits.sms = properties.multiProcessorCount;
  limits.max_warps = properties.maxThreadsPerMultiProcessor / properties.warpSize;
  limits.max_blocks = properties.maxBlocksPerMultiProcessor;
  limits.registers = properties.regsPerMultiprocessor;
  limits.shared_bytes = static_cast<long long>(properties.sharedMemPerMultiprocessor);
  limits.shared_reserved_per_block = static_cast<int>(properties.reservedSharedMemPerBlock);
  return limits;
}

std::map<std::string, double> LaunchFigures::named() const {
  return {{"launch.threads_per_block", threads_per_block},
          {"launch.blocks", blocks},
          {"launch.registers_per_thread", registers_per_thread},
          {"launch.shared_bytes_per_block", shared_bytes_per_block},
          {"launch.blocks_per_sm", blocks_per_sm},
          {"launch.occupancy_pct", occupancy_pct},
          {"launch.occupancy_pct_by_registers", occupancy_pct_by_registers},
          {"launch.occupancy_pct_by_shared", occupancy_pct_by_shared},
          {"launch.occupancy_pct_by_warps", occupancy_pct_by_warps},
          {"launch.occupancy_pct_by_block_count", occupancy_pct_by_block_count},
          {"launch.occupancy_pct_by_grid", occupancy_pct_by_grid},
          {"launch.waves", waves}};
}

LaunchFigures launch_figures(const KernelLaunch& kernel, const SmLimits& limits) {
  LaunchFigures f;
  const long long threads = kernel.threads_per_block();
  if (threads <= 0 || limits.sms <= 0 || limits.max_warps <= 0) return f;
  f.threads_per_block = static_cast<double>(threads);
  f.blocks = static_cast<double>(kernel.blocks());
  f.registers_per_thread = kernel.registers_per_thread;
  f.shared_bytes_per_block = kernel.shared_bytes();
  const long long warps_per_block = (threads + 31) / 32;
  const long long unbounded = limits.max_warps;  // more blocks than any bound allows
  auto round_up = [](long long value, long long unit) { return unit > 0 ? (value + unit - 1) / unit * unit : value; };
  // Blocks per SM under each bound alone.
  const long long by_warps = limits.max_warps / warps_per_block;
  const long long by_block_count = limits.max_blocks;
  long long by_registers = unbounded;
  if (kernel.registers_per_thread > 0) {
    const long long per_warp = round_up(32LL * kernel.registers_per_thread, limits.register_unit);
    by_registers = (limits.registers / per_warp) / warps_per_block;
  }
  long long by_shared = unbounded;
  if (kernel.shared_bytes() > 0) {
    const long long per_block = round_up(kernel.shared_bytes() + limits.shared_reserved_per_block, limits.shared_unit);
    by_shared = limits.shared_bytes / per_block;
  }
  const long long by_grid = (kernel.blocks() + limits.sms - 1) / limits.sms;
  auto pct = [&](long long blocks) {
    return 100.0 * static_cast<double>(std::min<long long>(limits.max_warps, blocks * warps_per_block)) / limits.max_warps;
  };
  f.occupancy_pct_by_warps = pct(by_warps);
  f.occupancy_pct_by_block_count = pct(by_block_count);
  f.occupancy_pct_by_registers = pct(by_registers);
  f.occupancy_pct_by_shared = pct(by_shared);
  f.occupancy_pct_by_grid = pct(by_grid);
  const long long resident = std::min({by_warps, by_block_count, by_registers, by_shared});
  f.blocks_per_sm = static_cast<double>(resident);
  f.occupancy_pct = pct(resident);
  if (resident > 0) f.waves = f.blocks / (static_cast<double>(resident) * limits.sms);
  return f;
}

}  // namespace course

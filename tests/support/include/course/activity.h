/// @file activity.h
/// @brief What a call of student code actually enqueued, recorded with CUPTI's activity API:
/// kernels (name, grid, block, shared memory, stream, device), copies and memsets. Technique
/// tests check an exercise's rules against this, never against the source text.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace course {

/// One kernel that ran.
struct KernelLaunch {
  std::string name;           ///< mangled, as the GPU knows it
  std::string readable;       ///< demangled
  int grid[3] = {0, 0, 0};    ///< blocks
  int block[3] = {0, 0, 0};   ///< threads per block
  int static_shared_bytes = 0;   ///< __shared__ arrays
  int dynamic_shared_bytes = 0;  ///< extern __shared__, from the launch
  std::uint32_t stream_id = 0;   ///< CUPTI's stream id
  std::uint32_t device_id = 0;   ///< the device it ran on
  int shared_bytes() const { return static_shared_bytes + dynamic_shared_bytes; }  ///< both kinds
  long long threads_per_block() const { return 1LL * block[0] * block[1] * block[2]; }  ///< block size
  long long blocks() const { return 1LL * grid[0] * grid[1] * grid[2]; }  ///< grid size
};

/// One copy that ran (cudaMemcpy*, in any form).
struct MemoryCopy {
  std::string kind;         ///< "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" or "other"
  std::string source;       ///< memory kind: "pageable", "pinned", "device", "managed", ...
  std::string destination;  ///< likewise
  std::uint64_t bytes = 0;  ///< size
  std::uint32_t stream_id = 0;  ///< CUPTI's stream id
  std::uint32_t device_id = 0;  ///< the device that did it
};

/// One memset that ran.
struct MemorySet {
  std::uint64_t bytes = 0;      ///< size
  std::uint32_t stream_id = 0;  ///< CUPTI's stream id
};

/// Everything recorded during one call.
struct Activity {
  std::vector<KernelLaunch> kernels;  ///< in the order they started
  std::vector<MemoryCopy> copies;     ///< in the order they started
  std::vector<MemorySet> memsets;     ///< in the order they started
  /// With record_activity_on: CUPTI's id of the stream the call was given.
  std::uint32_t given_stream_id = 0;
  /// One line per record, for failure messages.
  std::string summary() const;
};

/// Runs `work`, waits for the device, and returns what it enqueued. Throws std::runtime_error
/// when CUPTI cannot record (e.g. another tool, such as compute-sanitizer, holds it).
Activity record_activity(const std::function<void()>& work);

/// record_activity for a call that was given `stream`: a 4-byte memset enqueued on `stream`
/// first tells which CUPTI stream id it has (Activity::given_stream_id); that memset is not
/// among the records returned.
Activity record_activity_on(void* stream, const std::function<void()>& work);

/// Whether the kernel `mangled` is part of this program's own code (its name is registered in
/// this executable) and not a library's: cuBLAS and other libraries' kernels live in their own
/// shared objects, and CUB/Thrust kernels are named in their namespaces. Sets `why` when not.
bool is_own_kernel(const std::string& mangled, const std::string& readable, std::string* why);

/// The demangled form of a C++ symbol, or the symbol itself.
std::string demangle(const std::string& symbol);

}  // namespace course

/// @file activity.h
/// @brief What a call of student code actually did, recorded with CUPTI: the kernels, copies and
/// memsets it enqueued (the activity API: name, grid, block, shared memory, stream, device) and
/// the CUDA runtime calls it made, with their arguments (the callback API). Technique tests
/// check an exercise's rules against this, never against the source text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "course/executed.h"

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
  std::uint64_t start_ns = 0;    ///< when it started on the GPU (CUPTI's clock)
  std::uint64_t end_ns = 0;      ///< when it ended
  int registers_per_thread = 0;  ///< as compiled
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
  std::uint64_t start_ns = 0;   ///< when it started (CUPTI's clock)
  std::uint64_t end_ns = 0;     ///< when it ended
};

/// One memset that ran.
struct MemorySet {
  std::uint64_t bytes = 0;      ///< size
  std::uint32_t stream_id = 0;  ///< CUPTI's stream id
};

/// One call of the CUDA runtime API made during the recorded work, with the arguments that the
/// course's rules look at (unset fields stay 0 / null for calls that do not have them).
struct RuntimeCall {
  std::string name;              ///< e.g. "cudaEventRecord" (per-thread-stream variants without "_ptsz")
  int result = 0;                ///< the cudaError_t it returned
  bool has_stream = false;       ///< whether the call takes a stream argument
  const void* stream = nullptr;  ///< that stream (nullptr: the legacy default stream)
  /// What the call is about: the event (recorded, created, destroyed, synchronised, the start
  /// of cudaEventElapsedTime), the stream (created, destroyed), the pointer (cudaMallocAsync,
  /// cudaFreeAsync, a window's base, cudaMemcpyAsync's destination), the kernel function
  /// (launches, occupancy queries).
  const void* object = nullptr;
  const void* other = nullptr;   ///< the second event (cudaEventElapsedTime's end, cudaStreamWaitEvent's), cudaMemcpyAsync's source
  /// A number: cudaEventElapsedTime's milliseconds, cudaMallocAsync's and cudaMemcpyAsync's bytes, cudaDeviceSetLimit's
  /// value, a window's bytes, an occupancy query's or a launch's dynamic shared memory.
  double value = 0;
  int kind = 0;                  ///< the limit or attribute set; an occupancy query's block size; a copy's cudaMemcpyKind
  std::string kernel;            ///< a launch's kernel, demangled
  /// A launch's leading pointer arguments, for the kernels named in the recording's
  /// LaunchArguments (the others' arguments are not read: their types are unknown).
  std::vector<std::uintptr_t> pointers;
};

/// A kernel whose launches' first `pointers` arguments (pointers, by its signature) a
/// recording reads: `signature` as demangled, e.g. "batch_first_kernel(float const*, float*,
/// int)"; a kernel matches when its demangled name ends with it (any namespace before).
struct LaunchArguments {
  std::string signature;  ///< the kernel's name and parameter types
  int pointers = 0;       ///< how many leading parameters are pointers to read
};

/// Everything recorded during one call.
struct Activity {
  std::vector<KernelLaunch> kernels;  ///< in the order they started
  std::vector<MemoryCopy> copies;     ///< in the order they started
  std::vector<MemorySet> memsets;     ///< in the order they started
  std::vector<RuntimeCall> calls;     ///< the CUDA runtime calls made, in order
  /// With record_activity_on: CUPTI's id of the stream the call was given.
  std::uint32_t given_stream_id = 0;
  /// With Counting::instructions: the machine instructions the kernels executed (executed.h).
  ExecutedInstructions executed;
  /// One line per record, for failure messages.
  std::string summary() const;
  /// One line per runtime call (the last `most` of them), for failure messages.
  std::string calls_summary(std::size_t most = 40) const;
  /// The calls named `name`, in order.
  std::vector<RuntimeCall> calls_named(const std::string& name) const;
};

/// What a recorded call's timeline says of its copies and kernels: how much of the time they ran
/// side by side, and what went over the host link (the transfer chapters' diagnosis, issue 45).
/// Times are the GPU's (CUPTI's clock); a record that has none (0) is left out.
struct TimelineFigures {
  double span_ms = 0;               ///< from the first start to the last end of a copy or kernel
  double copy_busy_pct = 0;         ///< of the span, with at least one copy running
  double kernel_busy_pct = 0;       ///< of the span, with at least one kernel running
  double overlap_pct = 0;           ///< of the span, with a copy and a kernel running at once
  double kernel_hidden_pct = 0;     ///< of the time with a kernel running, with a copy running too
  double both_ways_pct = 0;         ///< of the span, with a host-to-device and a device-to-host copy at once
  double host_link_bytes = 0;       ///< bytes copied between host and device (either way)
  double host_link_gbps = 0;        ///< those bytes over the time with a host copy running
  double pageable_copies = 0;       ///< host copies to or from pageable memory
  double copies = 0;                ///< copies recorded
  double kernels = 0;               ///< kernels recorded
  /// The figures by name, "timeline." and the field's name (e.g. timeline.overlap_pct), as a
  /// diagnosis rule names them (course/diagnosis.h).
  std::map<std::string, double> named() const;
};

/// The figures of a recording's kernels and copies (a sweep over their start and end times).
TimelineFigures timeline_figures(const Activity& activity);

/// What one streaming multiprocessor can hold, for the occupancy a launch allows
/// (launch_figures). The allocation units are Hopper's and Ampere's.
struct SmLimits {
  int sms = 0;                           ///< streaming multiprocessors
  int max_warps = 64;                    ///< resident warps per SM
  int max_blocks = 32;                   ///< resident blocks per SM
  int registers = 65536;                 ///< 32-bit registers per SM
  int register_unit = 256;               ///< registers are given to a warp in units of this many
  long long shared_bytes = 233472;       ///< shared memory per SM
  int shared_reserved_per_block = 1024;  ///< shared memory the system keeps per block
  int shared_unit = 128;                 ///< shared memory is given to a block in units of this many bytes
};

/// The limits of the current device (cudaGetDeviceProperties); `sms` stays 0 without one.
SmLimits current_sm_limits();

/// How full a launch can keep the SMs, and what bounds it: each occupancy_pct_by_* is the share of
/// an SM's warps that resident blocks could fill were that the only bound (registers per thread,
/// shared memory per block, the SM's warps, its block count, and the grid spread over the SMs);
/// occupancy_pct is the smallest of the first four (the theoretical occupancy).
struct LaunchFigures {
  double threads_per_block = 0;           ///< block size
  double blocks = 0;                      ///< grid size
  double registers_per_thread = 0;        ///< as compiled
  double shared_bytes_per_block = 0;      ///< static and dynamic
  double blocks_per_sm = 0;               ///< resident at once, by the smallest bound
  double occupancy_pct = 0;               ///< theoretical occupancy
  double occupancy_pct_by_registers = 0;  ///< were registers the only bound
  double occupancy_pct_by_shared = 0;     ///< were shared memory the only bound
  double occupancy_pct_by_warps = 0;      ///< were the SM's warps the only bound
  double occupancy_pct_by_block_count = 0;  ///< were the SM's block count the only bound
  double occupancy_pct_by_grid = 0;       ///< the grid's blocks spread over every SM
  double waves = 0;                       ///< the grid over what the SMs hold at once
  /// The figures by name, "launch." and the field's name, as a diagnosis rule names them.
  std::map<std::string, double> named() const;
};

/// The figures of one kernel launch on SMs with `limits` (all zero for an empty block or no SM).
LaunchFigures launch_figures(const KernelLaunch& kernel, const SmLimits& limits);

/// Whether a recording also counts the machine instructions its kernels execute (executed.h):
/// the kernels run patched, several times slower, so only where a rule needs it.
enum class Counting { none, instructions };

/// Passes every CUDA call of this program (the runtime's and the driver's, through CUPTI
/// callbacks) through cuda_call_begins / cuda_call_ends, and its stream captures through
/// cuda_capture_began / cuda_capture_ended (gpu_turn.h), so that it can yield its shared GPU
/// turn. False, with the reason in `why_not`, when CUPTI refuses (another tool, such as
/// compute-sanitizer, holds it). Recording (below) goes on working beside it.
bool pass_cuda_calls_through_gpu_turn(std::string* why_not = nullptr);

/// Runs `work`, waits for the device, and returns what it enqueued. Throws std::runtime_error
/// when CUPTI cannot record (e.g. another tool, such as compute-sanitizer, holds it).
/// The runtime calls `work` makes are in Activity::calls (those of the recording itself are
/// not); the launches of kernels named in `read` carry their pointer arguments.
Activity record_activity(const std::function<void()>& work, const std::vector<LaunchArguments>& read = {},
                         Counting counting = Counting::none);

/// record_activity for a call that was given `stream`: a 4-byte memset enqueued on `stream`
/// first tells which CUPTI stream id it has (Activity::given_stream_id); that memset is not
/// among the records returned.
Activity record_activity_on(void* stream, const std::function<void()>& work,
                            const std::vector<LaunchArguments>& read = {}, Counting counting = Counting::none);

/// Whether the kernel `mangled` is part of this program's own code (its name is registered in
/// this executable) and not a library's: cuBLAS and other libraries' kernels live in their own
/// shared objects, and CUB/Thrust kernels are named in their namespaces. Sets `why` when not.
bool is_own_kernel(const std::string& mangled, const std::string& readable, std::string* why);

/// The demangled form of a C++ symbol, or the symbol itself.
std::string demangle(const std::string& symbol);

}  // namespace course

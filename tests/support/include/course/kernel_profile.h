/// @file kernel_profile.h
/// @brief Hardware counters of the kernels one call runs, read with CUPTI's range profiler: the
/// figures a perf test's feedback explains a result with (DRAM bytes against the minimum an
/// exercise must move, shared-memory bank conflicts, global sectors per request, achieved
/// occupancy; issue 45).
///
/// profile_kernels runs the call once, untimed: CUPTI replays each kernel it launches as many
/// times as the metrics need (kernel replay: the kernel's memory is saved before and restored
/// between passes, so the call's results are those of one run), one range per kernel launch.
/// Never inside a measurement: the replays make the call many times slower. It holds the exclusive
/// GPU turn (gpu_turn.h) only while it counts, from enabling the range profiler to reading its
/// counters; the host side (the chip's metrics, the configuration of the passes) comes before, in
/// the program's shared turn. Where the counters
/// cannot be read (no GPU, the driver's restriction of profiling to administrators, a virtual
/// GPU, a metric this chip does not have) nothing is profiled and `why_not` says why; a test
/// then gives its verdict without the figures, never a different one.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace course {

/// The counters of one profiled call (profile_kernels).
struct KernelProfile {
  bool profiled = false;  ///< whether the counters were read
  std::string why_not;    ///< why nothing was profiled
  /// One kernel launch's figures.
  struct Range {
    std::string name;                      ///< the range's name, as CUPTI gives it
    std::map<std::string, double> values;  ///< the value of each metric asked for
  };
  std::vector<Range> ranges;  ///< one per kernel launch, in launch order

  /// A metric's values summed over the ranges (0 when not profiled or not asked for). For
  /// `.sum` metrics this is the whole call's figure; `.avg` and `.pct` ones are per kernel.
  double total(const std::string& metric) const;
  /// "name: metric value, ...; ..." for a failure message, or why nothing was profiled.
  std::string summary() const;
};

/// Runs `work` on the current device with `metrics` (Nsight Compute's names, e.g.
/// "dram__bytes_read.sum") counted for each kernel it launches (at most `max_kernels` of them).
/// `if_available`: more metrics, each left out (no value in the ranges) where this chip has no
/// such counter, rather than failing the whole profile (the stall reasons differ by chip).
KernelProfile profile_kernels(const std::function<void()>& work, const std::vector<std::string>& metrics,
                              int max_kernels = 16, const std::vector<std::string>& if_available = {});

/// A reason a warp could not issue, as the GPU counts it (smsp__warps_issue_stalled_NAME):
/// each cycle, each warp that is resident on a scheduler and does not issue counts one cycle
/// against one reason.
struct StallReason {
  const char* name;     ///< the counter's suffix, e.g. "long_scoreboard"
  const char* meaning;  ///< what it means for the code, in a student's words
};
/// The reasons the diagnosis names (Hopper's set; other chips have most of them), "selected"
/// (the warp issued) not among them.
const std::vector<StallReason>& stall_reasons();
/// Of `metrics`, those that the chip named `chip` (CUPTI's name, e.g. "GH100" for the H100 and
/// the H200) cannot count, or every one with the reason when its host library refuses the chip.
/// Needs no GPU: CUPTI's host side knows each chip's metrics, so a rules file's names are checked
/// on any machine (unit_support_tests).
std::vector<std::string> metrics_unknown_on_chip(const std::string& chip, const std::vector<std::string>& metrics);

/// The counter of a reason, summed over the GPU: "smsp__warps_issue_stalled_NAME.sum".
std::string stall_metric(const std::string& reason);

}  // namespace course

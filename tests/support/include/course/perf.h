/// @file perf.h
/// @brief Performance checks: a measured rate as a ratio to a baseline measured in the
/// same process (the copy peak, a naive kernel, cuBLAS), against a required ratio.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "course/timing.h"

namespace course {

/// Effective bandwidth in GB/s (10^9 bytes/s): (bytes read + bytes written) / time.
double effective_bandwidth_gbps(double bytes_read, double bytes_written, double milliseconds);

/// Parses COURSE_PERF_SCALE ("0.8"): a factor in (0, 2] applied to every required ratio.
/// Throws std::invalid_argument on anything else.
double parse_perf_scale(const std::string& text);

/// The factor given with --course_perf_scale (ctest passes COURSE_PERF_SCALE so), 1 when unset.
double perf_threshold_scale();

/// One performance requirement and its measurement.
struct PerfCheck {
  std::string what;           ///< e.g. "transpose_tiled 8192x8192"
  double measured = 0;        ///< e.g. 2740 (GB/s)
  std::string unit;           ///< e.g. "GB/s"
  double baseline = 0;        ///< e.g. 2922 (GB/s)
  std::string baseline_name;  ///< e.g. "the device-to-device copy peak"
  double required_ratio = 0;  ///< before COURSE_PERF_SCALE
  std::string hint;           ///< what usually causes a shortfall
  TimingStats timing;         ///< of the measured code, for the noise report
  /// The most the hardware can do in `unit` (e.g. bandwidth_ceiling_gbps()); 0: no ceiling.
  double ceiling = 0;
  std::string ceiling_name;   ///< e.g. "the DRAM's theoretical bandwidth"
  bool output_verified = false;  ///< set by verify_timed_output
  std::string output_problem;    ///< why the timed calls' output was wrong ("" if right)
  /// Why the timed calls need no fresh input each (the timed code is the course's own, and the
  /// exercise only chose how to launch or configure it); empty for code under test, whose timing
  /// must come from the FreshCalls variants of time_on_stream and time_on_host.
  std::string fresh_inputs_not_needed;
  /// What the exercise's profile says (course/diagnosis.h, diagnose_call): added to a shortfall's
  /// message, and printed for a pass; never part of the verdict.
  std::vector<std::string> diagnosis;

  /// Records whether the output of the timed calls (poisoned before them) is right. A check
  /// whose timed output was never verified fails: a timing means nothing without it.
  void verify_timed_output(const ::testing::AssertionResult& result) {
    output_verified = true;
    output_problem = result ? "" : std::string(result.message());
  }
};

/// Whether the events on the timed stream saw the work the host waited for: false when the
/// host's median is far above the events' (more than 0.1 ms and more than 30% apart).
bool events_agree_with_host(const TimingStats& timing);

/// Why the timing of a check cannot count (output not verified or wrong, work outside the
/// timed stream, a rate above the ceiling), or "" when it can.
std::string why_not_counted(const PerfCheck& check);

/// The first `base`_N (N = 1, 2, ...) that the running test has not recorded as a property: the
/// judge's words in GoogleTest's record (perf_line_N, diagnosis_N, shortfall_N, fault_N), where
/// the graders read them (tools/course_grading/results.py) instead of the printed output.
std::string next_property_name(const std::string& base);

/// The one-line report every perf test prints (the grade summary reads it):
/// "[  PERF    ] <what>: <measured> <unit> = <ratio> x <baseline name> (<baseline> <unit>);
///  required >= <ratio>", ending in "; NOT A MEASUREMENT: <why_not_counted>" when it cannot count.
std::string perf_line(const PerfCheck& check, double scale);

/// Judges a check without printing. In this order, it fails when: the timed calls' output was
/// not verified or is wrong, or a timed call left a wrong result, or the calls were not each given
/// a fresh input (FreshCalls), or the call recorded among them broke the exercise's rules
/// (FreshCalls::rules); the events disagree with the host clock; the measured rate is
/// above the ceiling (impossible on this GPU); measured / baseline < required_ratio * scale.
/// Each failure says what was seen and what it means; a shortfall gives the hint.
::testing::AssertionResult evaluate_ratio(const PerfCheck& check, double scale);

/// Prints perf_line (and, with a diagnosis, "[ DIAGNOSIS] <what>: <sentences>"), records it as
/// test properties, and passes if measured / baseline >= required_ratio * perf_threshold_scale();
/// on failure the message carries the hint and the diagnosis.
::testing::AssertionResult meets_ratio(const PerfCheck& check);

}  // namespace course

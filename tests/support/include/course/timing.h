/// @file timing.h
/// @brief Timing device work with CUDA events: warm-up, then the median of many repetitions.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "course/activity.h"

namespace course {

/// Summary of repeated timings, in milliseconds.
struct TimingStats {
  double median_ms = 0;  ///< the median, the number the tests use
  double min_ms = 0;     ///< the fastest repetition
  double max_ms = 0;     ///< the slowest repetition
  int repetitions = 0;   ///< how many were timed
  /// With time_on_stream: the median of the same repetitions timed on the host, each from
  /// before its launch until the whole device was idle (0 when not measured). Far above
  /// median_ms, it means the work ran somewhere the events did not see (another stream).
  double host_median_ms = 0;
  /// (max - min) / median: how noisy the repetitions were.
  double relative_spread() const { return median_ms > 0 ? (max_ms - min_ms) / median_ms : 0; }
  int calls = 0;            ///< every call made, warm-ups included
  int calls_checked = 0;    ///< of them, given a fresh input and checked one by one (FreshCalls)
  std::string wrong_call;   ///< what the first wrong call left ("call 4 of 23: ..."), or empty
  /// With FreshCalls::rules: which call was recorded rather than timed (1-based, of `calls`),
  /// 0 when none was; and the rule it broke ("" when it kept them).
  int recorded_call = 0;
  std::string broken_rule;  ///< the rules' message for the recorded call, or empty
};

/// What makes every call of a perf test fresh (fresh.h says why):
struct FreshCalls {
  /// Before each call, warm-ups included, not timed, with the device idle: changes what the
  /// call reads (a few elements, at random places) and poisons what it writes.
  std::function<void()> change;
  /// After each call, not timed, with the device idle: whether what that call wrote is right
  /// for the input it was given.
  std::function<::testing::AssertionResult()> check;
  /// Optional: the exercise's rules (technique.h), held against what one call did. That call is
  /// drawn at random among all of them, warm-ups and timed ones alike (up to the most
  /// repetitions: the timing goes on at least until the drawn call), and recorded (activity.h)
  /// instead of timed; one more repetition is timed in its place. No call can count on going
  /// unwatched: code that takes another path at the perf test's size, or after its first calls,
  /// is held to the rules that the technique test's call was.
  std::function<::testing::AssertionResult(const Activity&)> rules;
  /// The launches whose pointer arguments the recorded call reads (activity.h), for `rules`.
  std::vector<LaunchArguments> launch_arguments;
  /// Whether the recorded call also counts the instructions its kernels execute (activity.h),
  /// for rules about what ran at the perf test's size.
  Counting counting = Counting::none;
};

/// Median, minimum and maximum of samples (CPU only; throws on an empty list).
TimingStats summarize_timings(std::vector<double> samples_ms);

/// Whether the median of `samples_ms` is known to within `relative_width` of it: the order
/// statistics that bound the median with 95% confidence (no distribution assumed) lie that close
/// together. Never with fewer than 3 samples.
bool median_is_settled(std::vector<double> samples_ms, double relative_width);

/// How many repetitions a timing loop runs: until the median is known well enough (within
/// 2%, after at least 8), or all of them (a peak taken as the fastest of all, not a median).
enum class Repeat { until_settled, all };

/// Times `work(stream)` with CUDA events: `warmups` untimed runs, then up to `repetitions` timed
/// ones, each between its own pair of events and, on the host, from before the first event
/// until cudaDeviceSynchronize returns. The timing stops after 8 (or `repetitions` if fewer)
/// once their median is known within 2% (median_is_settled): the GPU is held alone no longer
/// than the number needs. Each timed repetition starts on a busy GPU: ~0.15 ms of
/// the judge's own device-to-device copies run just before its start event (an idle GPU runs
/// the next call slower, and its start event would time the launch's latency too). Checks
/// launch errors and guard zones (guards.h).
TimingStats time_on_stream(const std::function<void(cudaStream_t)>& work, cudaStream_t stream,
                           int warmups = 3, int repetitions = 20, Repeat repeat = Repeat::until_settled);

/// Times `work()` with the host clock, each repetition followed by cudaDeviceSynchronize():
/// for work spread over several streams, which events on one stream would not cover. Up to
/// `repetitions`, stopping early as time_on_stream does.
TimingStats time_on_host(const std::function<void()>& work, int warmups = 2, int repetitions = 10);

/// time_on_stream for code under test: `fresh.change` before every call and `fresh.check`
/// after it, neither timed. The first wrong call is in the result's wrong_call.
TimingStats time_on_stream(const std::function<void(cudaStream_t)>& work, cudaStream_t stream,
                           const FreshCalls& fresh, int warmups = 3, int repetitions = 20);

/// time_on_host for code under test, with `fresh` as in time_on_stream.
TimingStats time_on_host(const std::function<void()>& work, const FreshCalls& fresh, int warmups = 2,
                         int repetitions = 10);

}  // namespace course

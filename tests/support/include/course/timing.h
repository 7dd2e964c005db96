/// @file timing.h
/// @brief Timing device work with CUDA events: warm-up, then the median of many repetitions.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

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
};

/// Median, minimum and maximum of samples (CPU only; throws on an empty list).
TimingStats summarize_timings(std::vector<double> samples_ms);

/// Times `work(stream)` with CUDA events: `warmups` untimed runs, then `repetitions` timed
/// ones, each between its own pair of events and, on the host, from before the first event
/// until cudaDeviceSynchronize returns. Checks launch errors and guard zones (guards.h).
TimingStats time_on_stream(const std::function<void(cudaStream_t)>& work, cudaStream_t stream,
                           int warmups = 3, int repetitions = 20);

/// Times `work()` with the host clock, each repetition followed by cudaDeviceSynchronize():
/// for work spread over several streams, which events on one stream would not cover.
TimingStats time_on_host(const std::function<void()>& work, int warmups = 2, int repetitions = 10);

}  // namespace course

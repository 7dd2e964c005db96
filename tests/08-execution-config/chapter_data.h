// What chapter 08's tests and calibration program both need: the chase kernel's data and
// occupancy, and the streams and events the tasks run on.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "course/cuda_check.h"
#include "execution_config.h"

namespace chapter_data {

// A single cycle through all n entries (Sattolo's shuffle): a chase never stops early.
inline std::vector<int> random_cycle(int n, std::uint64_t seed) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 random(seed);
  for (int i = n - 1; i > 0; --i) std::swap(order[i], order[std::uniform_int_distribution<int>(0, i - 1)(random)]);
  std::vector<int> next(n);
  for (int i = 0; i < n; ++i) next[order[i]] = order[(i + 1) % n];
  return next;
}

// Blocks of `block` chase threads that fit on one SM, with kChaseSharedBytes each.
inline int resident_blocks(int block) {
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, chase_kernel_handle(), block, kChaseSharedBytes));
  return blocks;
}

constexpr int kStreams = 8;

// kStreams non-blocking streams and an event for each (no timing), for run_tasks.
struct StreamsAndEvents {
  cudaStream_t streams[kStreams] = {};
  cudaEvent_t events[kStreams] = {};
  StreamsAndEvents() {
    for (int s = 0; s < kStreams; ++s) {
      CUDA_CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreateWithFlags(&events[s], cudaEventDisableTiming));
    }
  }
  ~StreamsAndEvents() {
    for (int s = 0; s < kStreams; ++s) {
      cudaStreamDestroy(streams[s]);
      cudaEventDestroy(events[s]);
    }
  }
  StreamsAndEvents(const StreamsAndEvents&) = delete;
  StreamsAndEvents& operator=(const StreamsAndEvents&) = delete;
};

}  // namespace chapter_data

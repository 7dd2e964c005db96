/// @file testing.h
/// @brief Everything a chapter test includes: the helpers above plus the GPU guard.
#pragma once

#include <gtest/gtest.h>


#include "course/busy.h"
#include "course/compare.h"
#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/fresh.h"
#include "course/gpu.h"
#include "course/perf.h"
#include "course/random.h"
#include "course/settings.h"
#include "course/technique.h"
#include "course/timing.h"

/// Skips the current test, with the reason, when no usable CUDA device is present.
#define COURSE_REQUIRE_GPU()                                               \
  do {                                                                     \
    if (const auto course_why_ = ::course::gpu_unavailable_reason())       \
      GTEST_SKIP() << *course_why_;                                        \
  } while (0)

/// For performance tests: needs a GPU, and skips under compute-sanitizer (ctest's sanitizer
/// mode passes --course_sanitizer), where a timing means nothing.
#define COURSE_REQUIRE_TIMING()                                                         \
  do {                                                                                  \
    COURSE_REQUIRE_GPU();                                                               \
    if (!::course::settings().sanitizer.empty())                                        \
      GTEST_SKIP() << "timed tests do not run under compute-sanitizer (COURSE_SANITIZER)"; \
  } while (0)

/// For technique tests that record activity: needs a GPU, and skips under compute-sanitizer,
/// which holds CUPTI itself.
#define COURSE_REQUIRE_ACTIVITY()                                                               \
  do {                                                                                          \
    COURSE_REQUIRE_GPU();                                                                       \
    if (!::course::settings().sanitizer.empty())                                                \
      GTEST_SKIP() << "activity is not recorded under compute-sanitizer (COURSE_SANITIZER)";    \
  } while (0)

/// Skips the current test when less than `need_bytes` of device memory is free (cudaMemGetInfo),
/// with the reason free_memory_shortfall words (gpu.h): how many GB the test needs, what for
/// (`what`, a string, may be empty), and how many are free. Call it after COURSE_REQUIRE_GPU and
/// after any skip under compute-sanitizer. In a helper function it returns from the helper only,
/// as GTEST_SKIP does.
#define COURSE_REQUIRE_FREE_MEMORY(need_bytes, what)                                            \
  do {                                                                                          \
    const std::string course_short_ = ::course::free_memory_shortfall((need_bytes), (what));    \
    if (!course_short_.empty()) GTEST_SKIP() << course_short_;                                  \
  } while (0)

/// Skips a test whose rule is about the instructions that ran when the recording `activity`
/// could not count them (executed.h: GPUs older than 7.5, a driver that refuses, another tool).
#define COURSE_REQUIRE_COUNTED(activity)                                                        \
  do {                                                                                          \
    if (!(activity).executed.counted)                                                           \
      GTEST_SKIP() << "the machine instructions that ran could not be counted here: "           \
                   << (activity).executed.why_not;                                              \
  } while (0)

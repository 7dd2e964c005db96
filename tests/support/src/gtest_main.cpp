// main() of every test program: the judge's settings from the command line, GoogleTest, the seed
// and the device named up front.
//
// ctest runs each test case as its own process with --gtest_output=xml:<file>: GoogleTest's record
// of the case, which the grade reads beside the exit status (tools/course_grading/results.py). A
// process whose selected tests were all skipped exits with kSkippedExitStatus, which ctest's
// SKIP_RETURN_CODE reports as skipped: no pattern is matched against output the code under test
// could print.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "course/activity.h"
#include "course/gpu.h"
#include "course/gpu_turn.h"
#include "course/profile.h"
#include "course/random.h"
#include "course/seal.h"
#include "course/settings.h"

namespace {
constexpr int kSkippedExitStatus = 77;

// Holds the exclusive GPU turn through a test that measures the whole device throughout, and no
// turn between two tests (a grader's batch runs several in one program). From one such test to
// the next that runs (chapter 01's timers, eleven in a batch) the exclusive turn is kept: one
// drain of the GPU for them all rather than one each.
class TurnAroundTests : public ::testing::EmptyTestEventListener {
  static bool holds(const ::testing::TestInfo& test) {
    return course::suite_holds_the_gpu_throughout(test.test_suite_name());
  }
  // The test that runs after `test`, if any (the order GoogleTest runs them in, unshuffled).
  static const ::testing::TestInfo* next_to_run(const ::testing::TestInfo& test) {
    const ::testing::UnitTest& all = *::testing::UnitTest::GetInstance();
    bool after = false;
    for (int s = 0; s < all.total_test_suite_count(); ++s) {
      const ::testing::TestSuite& suite = *all.GetTestSuite(s);
      for (int t = 0; t < suite.total_test_count(); ++t) {
        const ::testing::TestInfo* info = suite.GetTestInfo(t);
        if (after && info->should_run()) return info;
        after = after || info == &test;
      }
    }
    return nullptr;
  }
  void OnTestStart(const ::testing::TestInfo& test) override {
    if (kept_) {
      kept_ = false;
      if (holds(test)) return;  // still exclusive, from the test before
      course::end_exclusive_gpu_turn();
      course::pause_gpu_turn();
    }
    course::resume_gpu_turn();
    if (holds(test)) course::begin_exclusive_gpu_turn();
  }
  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (!holds(test)) return course::pause_gpu_turn();
    const ::testing::TestInfo* next = next_to_run(test);
    // Not after a failure: --gtest_fail_fast (a grader's batch) then skips the rest.
    if (next != nullptr && holds(*next) && !::testing::UnitTest::GetInstance()->failed_test_count()) {
      kept_ = true;
      return;
    }
    course::end_exclusive_gpu_turn();
    course::pause_gpu_turn();
  }
  void OnTestIterationEnd(const ::testing::UnitTest&, int) override {
    if (!kept_) return;  // (a kept turn whose next test did not start)
    kept_ = false;
    course::end_exclusive_gpu_turn();
    course::pause_gpu_turn();
  }
  bool kept_ = false;
};
// Yields the shared GPU turn to waiting measurements from now on (gpu_turn.h), once the runtime
// and the context exist: every CUDA call passes the turn's gate (CUPTI), and the yielding thread
// waits for the GPU work through the driver. Without CUPTI's callbacks (another tool holds them)
// or the driver's entry points, the turn is held to the end.
void yield_gpu_turn_from_now() {
  std::string why_not;
  std::function<void()> wait = course::driver_wait_for_every_device();
  if (!wait)
    why_not = "the driver's entry points could not be had";
  else if (course::pass_cuda_calls_through_gpu_turn(&why_not))
    return course::start_yielding_gpu_turn(std::move(wait));
  std::printf("[  COURSE  ] the GPU turn is held, not yielded: %s\n", why_not.c_str());
}

// Seals before every test what was loaded since main began (course/seal.h): a test that records
// with CUPTI, or calls a library, may have loaded more.
class SealBeforeEachTest : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override { course::seal_loaded_objects(); }
};
}  // namespace

int main(int argc, char** argv) {
  // Every loaded object's code, constants and relocation table (full RELRO: -z relro -z now),
  // sealed: no mprotect makes them writable again, so a submission can neither redirect the
  // judge's library calls nor patch its code, a threshold among its constants, or the C library's
  // and the driver's code that the judge's checks and clocks run (course/seal.h).
  course::seal_loaded_objects();
  const auto main_start = std::chrono::steady_clock::now();
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::strcmp(argv[i], "--gtest_list_tests") == 0;
  try {
    course::parse_settings(&argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "[  COURSE  ] %s\n", error.what());
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new SealBeforeEachTest);
  if (!listing) {
    try {
      // The driver and the runtime start (the first CUDA call): no context yet, nothing on the GPU.
      std::optional<std::string> why;
      {
        const course::ProfileScope driver("CUDA driver (first CUDA call)");
        why = course::gpu_unavailable_reason();
      }
      // The CPUs beside the GPU, before the context and any pinned memory (course/gpu.h).
      const std::optional<std::string> near = why ? std::nullopt : course::run_near_the_gpu();
      // The GPU turn (course/gpu_turn.h): the shared one before the context exists, kept until the
      // process has exited; the exclusive one while measuring, and through a test of a suite
      // that measures the whole device. The context is made, and torn down, in the context turn.
      if (course::settings().gpu_lock) {
        course::arm_gpu_turn(*course::settings().gpu_lock, [] { (void)cudaDeviceSynchronize(); });
        ::testing::UnitTest::GetInstance()->listeners().Append(new TurnAroundTests);
      }
      std::printf("[  COURSE  ] %s\n", course::seed_note().c_str());
      if (!why) {
        const course::ProfileScope context("context");
        (void)cudaFree(nullptr);  // the context, made here (in the turn) rather than inside a test
      }
      course::context_made();  // the next program may make its own (gpu_turn.h)
      course::seal_loaded_objects();  // the CUDA driver and what it loaded, before any test runs
      if (why) {
        std::printf("[  COURSE  ] %s\n", why->c_str());
      } else {
        std::printf("[  COURSE  ] device: %s\n", course::device_line().c_str());
        if (near) std::printf("[  COURSE  ] %s\n", near->c_str());
        if (course::settings().gpu_lock && course::settings().gpu_alone)
          course::begin_exclusive_gpu_turn();  // to the end (hold_gpu_turn_to_the_end lets go of it)
        else if (course::settings().gpu_lock && course::settings().gpu_yield)
          yield_gpu_turn_from_now();
      }
    } catch (const std::exception& error) {
      std::fprintf(stderr, "[  COURSE  ] cannot start: %s\n", error.what());
      return 2;
    }
  }
  int status = 0;
  {
    const course::ProfileScope tests("tests");
    status = RUN_ALL_TESTS();
  }
  course::hold_gpu_turn_to_the_end();  // the context's teardown, at exit, in a turn
  course::profile_print(stdout, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - main_start).count());
  const ::testing::UnitTest& run = *::testing::UnitTest::GetInstance();
  if (status == 0 && !listing && run.test_to_run_count() > 0 && run.skipped_test_count() == run.test_to_run_count())
    return kSkippedExitStatus;
  return status;
}

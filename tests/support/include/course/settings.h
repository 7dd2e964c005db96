/// @file settings.h
/// @brief The judge's settings of one test program: the seed, the perf scale, the sanitizer,
/// profiling and the GPU turn.
///
/// They reach the program on its command line (cmake/CourseTestList.cmake turns ctest's
/// COURSE_SEED, COURSE_PERF_SCALE and COURSE_SANITIZER into these flags), never from the
/// environment, which code under test runs beside and could change.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace course {

/// What a test program was told on its command line.
struct Settings {
  std::optional<std::uint64_t> seed;  ///< --course_seed=N: replay that seed (else a fresh one)
  double perf_scale = 1.0;            ///< --course_perf_scale=X: every required ratio times X
  std::string sanitizer;              ///< --course_sanitizer=TOOL: running under compute-sanitizer
  bool profile = false;               ///< --course_profile=1: print where the time went (course/profile.h)
  /// --course_diagnose=1: each perf test profiles one more, untimed call of the exercise and
  /// explains its figures (course/diagnosis.h, diagnose_call). Off in a program run without the
  /// flag; ctest gives it unless COURSE_DIAGNOSE=0 (cmake/CourseTestList.cmake)
  bool diagnose = false;
  /// --course_diagnose=shortfall: as 1, but only a perf check that fails is profiled
  /// (diagnose_perf; tools/grade-class's default, COURSE_DIAGNOSE=shortfall)
  bool diagnose_shortfalls_only = false;
  /// --course_gpu_lock=PATH[,PATH...]: take turns on the GPU with this lock file (with several, one
  /// per GPU the program uses: course/gpu_turn.h)
  std::optional<std::string> gpu_lock;
  /// --course_gpu_yield=0: hold the shared GPU turn to the end rather than yield it to waiting
  /// measurements (course/gpu_turn.h); yielded by default
  bool gpu_yield = true;
  /// --course_gpu_alone=1: with a GPU lock, hold the exclusive turn from the context's making to
  /// the end, as one long measurement (the other programs yield to it): how a grader judges a perf
  /// shortfall again at the turn level, without waiting for other gradings' phases to end
  /// (COURSE_REJUDGE_PERF=turn, tools/course_grading)
  bool gpu_alone = false;
};

/// This program's settings (the defaults until parse_settings ran).
const Settings& settings();

/// Reads and removes the --course_* flags from argv (main() calls it before GoogleTest sees
/// argv), then makes the settings read-only for the rest of the program (their pages sealed with
/// mseal where the kernel has it): code under test cannot change them. Throws
/// std::invalid_argument on a malformed value or an unknown --course_ flag.
void parse_settings(int* argc, char** argv);

/// Like parse_settings, but returns what it read instead of making it this program's settings.
Settings parse_settings_from(int* argc, char** argv);

}  // namespace course

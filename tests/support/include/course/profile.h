/// @file profile.h
/// @brief Where a test program's time goes: named phases, timed when --course_profile is given.
///
/// ctest's COURSE_PROFILE=1 adds the flag (cmake/CourseTestList.cmake). At its end the program
/// prints one `[ PROFILE  ]` line per phase (milliseconds, and how many times it ran), which
/// `tools/profile-tests.py` sums over a ctest log. A diagnostic only: no verdict reads it.
#pragma once

#include <chrono>
#include <cstdio>

namespace course {

/// Adds `ms` to the phase `name` (a string literal: phases are kept by address).
void profile_add(const char* name, double ms);

/// Prints every phase, with the time from the process's start to main() and main()'s own
/// duration, when profiling is on; nothing otherwise.
void profile_print(std::FILE* out, double main_ms);

/// Whether --course_profile was given.
bool profiling();

/// Times its own lifetime as the phase `name` when profiling is on.
class ProfileScope {
 public:
  /// Starts timing the phase `name` (a string literal), if profiling is on.
  explicit ProfileScope(const char* name) : name_(profiling() ? name : nullptr) {
    if (name_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;
  /// Adds the time since construction to the phase.
  ~ProfileScope() {
    if (name_ != nullptr)
      profile_add(name_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace course

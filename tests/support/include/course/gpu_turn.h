/// @file gpu_turn.h
/// @brief Taking turns on the GPU between test programs that ctest runs side by side.
///
/// A test that times the GPU (or counts, or reads the free memory) must have it to itself. ctest
/// alone says so with RUN_SERIAL: such a test starts only when nothing else runs, so its process
/// start, CUDA context, host-side preparation and exit hold the GPU too. A grader
/// (tools/course_grading) that runs these tests apart instead gives each program a lock file on
/// its command line, `--course_gpu_lock=exclusive:PATH` (or `shared:PATH` for a test that may
/// run beside others). A shared turn is taken once the program's CUDA context exists. An
/// exclusive turn is taken when the program first gives the GPU work: the support library asks
/// for it (take_gpu_turn) before it allocates device or pinned memory (every call of code under
/// test is handed some), creates a stream, times, measures a peak or records, and main() asks
/// for it before every test of a suite that measures the whole device throughout (a timer,
/// counted instructions, free memory). Both are given back when the tests are done, before the
/// context is torn down. Several such programs then start, prepare their inputs on the host and
/// exit while another one measures. A second file, PATH.turnstile, makes a waiting exclusive
/// turn block later shared ones, so it is never starved.
///
/// The lock only orders the judge's own programs, all of one submission: GPU work that code
/// under test started before its program had the turn could only disturb that submission's own
/// measurements. The code under test cannot call flock (the code policy), and a grade's
/// fairness between submissions rests on the grader's own lock.
#pragma once

#include <string>

namespace course {

/// How a program holds the GPU: beside others, or alone.
enum class GpuTurnMode { shared, exclusive };

/// A parsed --course_gpu_lock value: "exclusive:PATH" or "shared:PATH".
struct GpuTurnRequest {
  GpuTurnMode mode = GpuTurnMode::exclusive;  ///< alone, or beside other shared turns
  std::string path;                           ///< the lock file (created if missing)
};

/// Parses "exclusive:PATH" or "shared:PATH"; throws std::invalid_argument on anything else.
GpuTurnRequest parse_gpu_turn(const std::string& value);

/// Holds the turn of `request` for its lifetime (waiting for it first).
class GpuTurn {
 public:
  /// Waits until the turn is this program's. Throws std::runtime_error when the lock files
  /// cannot be opened or locked.
  explicit GpuTurn(const GpuTurnRequest& request);
  GpuTurn(const GpuTurn&) = delete;
  GpuTurn& operator=(const GpuTurn&) = delete;
  /// Gives the turn back.
  ~GpuTurn();

 private:
  int lock_ = -1;
};

/// Arms this program's turn (main(), from --course_gpu_lock): a shared turn is taken now, an
/// exclusive one at the first take_gpu_turn().
void arm_gpu_turn(const GpuTurnRequest& request);

/// Takes the armed exclusive turn if it is not held yet (waiting for it); nothing otherwise.
void take_gpu_turn();

/// Gives the turn back, if held (main(), after the tests).
void give_back_gpu_turn();

/// Whether suite `suite` measures something of the whole device throughout its tests (a
/// DeviceWide, Timer or Counted suite: cmake/CourseTestList.cmake runs them alone too).
bool suite_holds_the_gpu_throughout(const char* suite);

}  // namespace course

#include "course/gpu_turn.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "course/profile.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace course {

namespace {
int open_lock(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot open the GPU lock " + path + ": " + std::strerror(errno));
  return fd;
}

void lock(int fd, int operation, const std::string& path) {
  while (::flock(fd, operation) != 0) {
    if (errno != EINTR) throw std::runtime_error("cannot lock " + path + ": " + std::strerror(errno));
  }
}
}  // namespace

GpuTurn::GpuTurn(const std::string& path) : path_(path) {
  gate_ = open_lock(path + ".gate");
  try {
    lock_ = open_lock(path);
  } catch (...) {
    ::close(gate_);
    throw;
  }
}

GpuTurn::GpuTurn(const std::string& path, GpuTurnMode mode) : GpuTurn(path) {
  try {
    take(mode);
  } catch (...) {
    ::close(lock_);
    ::close(gate_);
    throw;
  }
}

GpuTurn::~GpuTurn() {
  ::close(lock_);  // closing the only descriptors lets go of the locks
  ::close(gate_);
}

void GpuTurn::take(GpuTurnMode mode) {
  release();  // never wait while holding a turn: two programs could each wait for the other's
  // A measurement holds the gate shared until it is over, so shared turns asked for from now on
  // wait until every measurement that queued meanwhile has run; a shared turn passes the gate
  // exclusively, for an instant: never while a measurement waits or runs (gpu_turn.h).
  const bool exclusive = mode == GpuTurnMode::exclusive;
  lock(gate_, exclusive ? LOCK_SH : LOCK_EX, path_ + ".gate");
  try {
    lock(lock_, exclusive ? LOCK_EX : LOCK_SH, path_);
  } catch (...) {
    ::flock(gate_, LOCK_UN);
    throw;
  }
  if (!exclusive) ::flock(gate_, LOCK_UN);
}

void GpuTurn::release() {
  ::flock(lock_, LOCK_UN);
  ::flock(gate_, LOCK_UN);  // held only by a measurement (nothing otherwise)
}

namespace {
struct TurnState {
  std::mutex mutex;
  std::unique_ptr<GpuTurn> turn;  // armed when set; holds the shared turn outside exclusive scopes
  std::function<void()> wait_for_gpu_work;
  int exclusive_depth = 0;
  bool paused = false;  // between two cases: no turn held (pause_gpu_turn)
  std::chrono::steady_clock::time_point exclusive_since;
  bool shared_held = false;  // for the profile: how long shared turns are held, and by which tests
  std::chrono::steady_clock::time_point shared_since;
};

// The profile's record of shared turns (a measurement waits for every one held to end): their
// total, and the long ones by the test that held them.
void shared_taken(TurnState& state) {
  state.shared_held = true;
  state.shared_since = std::chrono::steady_clock::now();
}

void shared_given_back(TurnState& state) {
  if (!state.shared_held) return;
  state.shared_held = false;
  if (!profiling()) return;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - state.shared_since).count();
  profile_add("GPU turn: shared, held", ms);
  if (ms < 500) return;
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string holder = test ? std::string(test->test_suite_name()) + "." + test->name() : "outside the tests";
  profile_add(("GPU turn: shared, held 0.5 s or more by " + holder).c_str(), ms);
}

TurnState& turn_state() {
  static TurnState state;
  return state;
}

void switch_turn(TurnState& state, GpuTurnMode mode, const char* waiting) {
  if (state.wait_for_gpu_work) state.wait_for_gpu_work();  // none of it may run into another's turn
  const ProfileScope phase(waiting);
  state.turn->take(mode);
}
}  // namespace

void arm_gpu_turn(const std::string& path, std::function<void()> wait_for_gpu_work) {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  state.turn.reset();
  state.exclusive_depth = 0;
  state.paused = false;
  state.wait_for_gpu_work = std::move(wait_for_gpu_work);
  const ProfileScope phase("GPU turn: waiting for the shared one");
  state.turn = std::make_unique<GpuTurn>(path, GpuTurnMode::shared);
  shared_taken(state);
}

void disarm_gpu_turn() {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  shared_given_back(state);
  state.turn.reset();
  state.exclusive_depth = 0;
  state.paused = false;
  state.wait_for_gpu_work = nullptr;
}

void pause_gpu_turn() {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  if (!state.turn || state.exclusive_depth > 0 || state.paused) return;
  if (state.wait_for_gpu_work) state.wait_for_gpu_work();  // none of it may run into another's turn
  state.turn->release();
  shared_given_back(state);
  state.paused = true;
}

void resume_gpu_turn() {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  if (!state.turn || !state.paused) return;
  const ProfileScope phase("GPU turn: waiting for the shared one");
  try {
    state.turn->take(GpuTurnMode::shared);
  } catch (const std::exception& error) {
    // Going on without a turn would let this program's GPU work run into another's measurement.
    std::fprintf(stderr, "[  COURSE  ] lost the GPU turn: %s\n", error.what());
    std::abort();
  }
  state.paused = false;
  shared_taken(state);
}

void begin_exclusive_gpu_turn() {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  if (!state.turn || state.exclusive_depth++ > 0) return;
  shared_given_back(state);
  try {
    switch_turn(state, GpuTurnMode::exclusive, "GPU turn: waiting for the exclusive one");
  } catch (...) {
    state.exclusive_depth = 0;
    throw;
  }
  state.paused = false;
  state.exclusive_since = std::chrono::steady_clock::now();
}

void end_exclusive_gpu_turn() {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  if (!state.turn || state.exclusive_depth == 0 || --state.exclusive_depth > 0) return;
  if (profiling())
    profile_add("GPU turn: exclusive, held", std::chrono::duration<double, std::milli>(
                                                 std::chrono::steady_clock::now() - state.exclusive_since).count());
  try {
    switch_turn(state, GpuTurnMode::shared, "GPU turn: waiting for the shared one");
  } catch (const std::exception& error) {
    // Going on without a turn would let this program's GPU work run into another's measurement.
    std::fprintf(stderr, "[  COURSE  ] lost the GPU turn: %s\n", error.what());
    std::abort();
  }
  shared_taken(state);
}

ExclusiveGpuTurn::ExclusiveGpuTurn() { begin_exclusive_gpu_turn(); }

ExclusiveGpuTurn::~ExclusiveGpuTurn() { end_exclusive_gpu_turn(); }

bool suite_holds_the_gpu_throughout(const char* suite) {
  const std::string name = suite != nullptr ? suite : "";
  for (const char* word : {"DeviceWide", "Timer", "Counted"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace course

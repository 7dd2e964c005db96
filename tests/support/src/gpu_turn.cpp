#include "course/gpu_turn.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "course/profile.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace course {

GpuTurnRequest parse_gpu_turn(const std::string& value) {
  GpuTurnRequest request;
  const std::size_t colon = value.find(':');
  const std::string mode = value.substr(0, colon);
  if (colon == std::string::npos || colon + 1 == value.size() || (mode != "shared" && mode != "exclusive"))
    throw std::invalid_argument("--course_gpu_lock takes exclusive:PATH or shared:PATH, got '" + value + "'");
  request.mode = mode == "shared" ? GpuTurnMode::shared : GpuTurnMode::exclusive;
  request.path = value.substr(colon + 1);
  return request;
}

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

GpuTurn::GpuTurn(const GpuTurnRequest& request) {
  const std::string turnstile_path = request.path + ".turnstile";
  const int turnstile = open_lock(turnstile_path);
  try {
    lock_ = open_lock(request.path);
    // Through the turnstile: an exclusive turn waiting for the lock holds it, so shared turns
    // that come later wait behind it instead of overtaking it for ever.
    lock(turnstile, LOCK_EX, turnstile_path);
    lock(lock_, request.mode == GpuTurnMode::shared ? LOCK_SH : LOCK_EX, request.path);
  } catch (...) {
    ::close(turnstile);
    if (lock_ >= 0) ::close(lock_);
    throw;
  }
  ::close(turnstile);  // releases it
}

GpuTurn::~GpuTurn() {
  if (lock_ >= 0) ::close(lock_);  // closing the only descriptor releases the lock
}

namespace {
struct TurnState {
  std::mutex mutex;
  std::optional<GpuTurnRequest> armed;
  std::unique_ptr<GpuTurn> held;
  std::chrono::steady_clock::time_point taken;
};
TurnState& turn_state() {
  static TurnState state;
  return state;
}

void take_locked(TurnState& state) {
  if (!state.armed || state.held) return;
  const ProfileScope waiting("GPU turn: waiting for it");
  state.held = std::make_unique<GpuTurn>(*state.armed);
  state.taken = std::chrono::steady_clock::now();
}

void give_back_locked(TurnState& state) {
  if (!state.held) return;
  state.held.reset();
  if (profiling())
    profile_add("GPU turn: held",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - state.taken).count());
}
}  // namespace

void arm_gpu_turn(const GpuTurnRequest& request) {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  give_back_locked(state);
  state.armed = request;
  if (request.mode == GpuTurnMode::shared) take_locked(state);
}

void take_gpu_turn() {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  take_locked(state);
}

void give_back_gpu_turn() {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  give_back_locked(state);
  state.armed.reset();
}

bool suite_holds_the_gpu_throughout(const char* suite) {
  const std::string name = suite != nullptr ? suite : "";
  for (const char* word : {"DeviceWide", "Timer", "Counted"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace course

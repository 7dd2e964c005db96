#include "course/gpu_turn.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "course/profile.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace course {

namespace {
// Every turn file is opened read-only: flock takes shared and exclusive locks on a read-only
// descriptor on a local file system, and a program that holds no turn file open for writing
// cannot pass data through one to another grading's program (an adversarial review, 2026-11-28:
// the files were writable in the sandbox). A class's files are made by the grader beforehand
// (tools/course_grading/grading.py), which gives them to the sandbox read-only (-R) and the
// folder not at all, so there a program can make none. A program outside a class (a grading's
// own gpu-turn.lock in its scratch folder, which its programs may write anyway; the unit tests;
// tools/stress-gpu-turns.py; a ctest run by hand) makes a file that is missing, read-only too
// (O_CREAT with O_RDONLY), so that every use holds the same descriptors. On NFS, where flock is
// emulated with fcntl locks, an exclusive lock needs a descriptor open for writing (EBADF):
// grade-class stops at once when its lock folder is on such a file system (lock_failure says
// so here too). -1 with errno when it cannot be opened, or is no regular file (EISDIR: the
// folder a grader puts where a pair gate would be).
int open_turn_file(const std::string& path, bool make) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && make) fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    const int why = S_ISDIR(status.st_mode) ? EISDIR : EINVAL;
    ::close(fd);
    errno = why;
    return -1;
  }
  return fd;
}

// The turn files are opened before the program makes its context, so under lower descriptor
// numbers than the GPU's device files. That matters at exit (an _Exit, a crash, a kill: no
// teardown by the runtime first): the kernel closes the files in the order of their numbers, but
// lets go of their locks and releases them afterwards, the last closed first (Linux 5.10 on;
// measured on 6.18, 2026-11-27: of two locked files, the higher-numbered one was free first in
// 100 of 100 exits). So the turns are let go of after the device files, the context torn down
// inside them. (Moved to high numbers, they were let go of first.)
int open_lock(const std::string& path) {
  const int fd = open_turn_file(path, true);
  if (fd < 0) {
    const int why = errno;
    throw std::runtime_error("cannot open the GPU turn file " + path + " (read-only, made where missing): " +
                             std::strerror(why) +
                             (why == EACCES ? " (in a class the grader makes the turn files and the sandbox lets the "
                                              "program read only those)"
                                            : ""));
  }
  return fd;
}

// A further context slot, where one was made (a grader with COURSE_CONTEXT_SLOTS, a test): never
// made here, so that without them the protocol is exactly the one context turn. Read-only, like
// every turn file (open_turn_file); one this program may not open (a slot left from another
// grading, outside its sandbox's list) is none. -1 when none.
int open_context_slot(const std::string& path) { return open_turn_file(path, false); }

// Why a flock on `path` failed, for the program's error: the file, the lock asked for and the
// system's reason; EBADF on an exclusive lock is a read-only descriptor on NFS (fcntl-emulated
// flock).
std::string lock_failure(const std::string& path, int operation, int why) {
  std::string text = "cannot lock the GPU turn file " + path + ((operation & LOCK_EX) ? " exclusively" : " shared") +
                     ": " + std::strerror(why);
  if (why == EBADF || why == ENOLCK)
    text += " (the turn files are opened read-only; an exclusive flock on a read-only descriptor fails where flock is "
            "emulated with fcntl locks, as on NFS: the lock folder must be on a local file system)";
  return text;
}

void lock(int fd, int operation, const std::string& path) {
  while (::flock(fd, operation) != 0) {
    if (errno != EINTR) throw std::runtime_error(lock_failure(path, operation, errno));
  }
}

// Whether `operation` could be taken on `fd` at once (it is then held).
bool try_lock(int fd, int operation, const std::string& path) {
  for (;;) {
    if (::flock(fd, operation | LOCK_NB) == 0) return true;
    if (errno == EWOULDBLOCK) return false;
    if (errno != EINTR) throw std::runtime_error(lock_failure(path, operation, errno));
  }
}

// Takes something on each of `count` files without ever waiting while it holds any: it tries
// them all at once, and when one is busy it lets go of those it took, waits for that one alone
// and tries the others again. One GPU's queue never holds up another's: a program of several
// GPUs that held the first GPU's turn while it waited for the second's would keep the first
// GPU's measurements waiting for the second's (each GPU of a class would wait for the other).
void take_every(std::size_t count, const std::function<bool(std::size_t)>& try_one,
                const std::function<void(std::size_t)>& wait_for_one, const std::function<void(std::size_t)>& undo_one) {
  std::vector<bool> held(count, false);
  const auto let_go = [&] {
    for (std::size_t i = 0; i < count; ++i)
      if (held[i]) {
        undo_one(i);
        held[i] = false;
      }
  };
  try {
    for (;;) {
      std::size_t busy = count;
      for (std::size_t i = 0; i < count && busy == count; ++i)
        if (!held[i]) {
          if (try_one(i))
            held[i] = true;
          else
            busy = i;
        }
      if (busy == count) return;
      let_go();
      wait_for_one(busy);  // holding none of the others
      held[busy] = true;
    }
  } catch (...) {
    let_go();
    throw;
  }
}

// The steady clock in milliseconds, for times kept in atomics (a priority's start, an exit's).
long long steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// How long a program of several GPUs tries its turns on all of them at once before it asks for
// priority (the pair gate, GpuTurn::take).
std::atomic<std::chrono::milliseconds::rep> g_patience_ms{250};
// How long a program of several GPUs waits with priority before it gives it up (GpuTurn::take).
std::atomic<std::chrono::milliseconds::rep> g_priority_bound_ms{2000};
// How long a program that yields keeps the priority it was given (GpuTurn::end_priority_after).
std::atomic<std::chrono::milliseconds::rep> g_slice_ms{500};

// Tries `try_one` on each of `count` files, all at once, every 2 ms for the patience above,
// holding none while one is busy. True when it holds them all; false (holding none) otherwise.
bool take_every_within_patience(std::size_t count, const std::function<bool(std::size_t)>& try_one,
                                const std::function<void(std::size_t)>& undo_one) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(g_patience_ms.load());
  for (;;) {
    std::size_t held = 0;
    try {
      while (held < count && try_one(held)) ++held;
    } catch (...) {
      while (held > 0) undo_one(--held);
      throw;
    }
    if (held == count) return true;
    while (held > 0) undo_one(--held);
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The pair gate of a class on several GPUs (GpuTurn::take): PATH with its "-N.turn" ending replaced
// by "-pair.gate" (gpu-0.turn: gpu-pair.gate), or nothing for a path not so named.
std::string pair_gate_path(const std::string& path) {
  const std::string ending = ".turn";
  if (path.size() <= ending.size() || path.compare(path.size() - ending.size(), ending.size(), ending) != 0) return {};
  std::size_t digits = path.size() - ending.size();
  while (digits > 0 && path[digits - 1] >= '0' && path[digits - 1] <= '9') --digits;
  if (digits == path.size() - ending.size() || digits == 0 || path[digits - 1] != '-') return {};
  return path.substr(0, digits) + "pair.gate";
}
}  // namespace

std::vector<std::string> gpu_turn_paths(const std::string& paths) {
  std::vector<std::string> files;
  std::string::size_type from = 0;
  for (;;) {
    const auto comma = paths.find(',', from);
    const std::string file = paths.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    if (file.empty()) throw std::runtime_error("the GPU lock '" + paths + "' names an empty path");
    files.push_back(file);
    if (comma == std::string::npos) return files;
    from = comma + 1;
  }
}

GpuTurn::GpuTurn(const std::string& paths) : path_(paths) {
  try {
    for (const std::string& path : gpu_turn_paths(paths)) {
      files_.push_back(Files{path});
      Files& file = files_.back();
      file.gate = open_lock(path + ".gate");
      file.queue = open_lock(path + ".queue");
      file.probe = open_lock(path + ".queue");
      file.lock = open_lock(path);
      file.context = open_lock(path + ".context");
      for (int slot = 0; slot < 2; ++slot) file.context_more[slot] = open_context_slot(path + ".context-" + std::to_string(slot + 1));
    }
    // The pair gate: made by a program of several GPUs (or the grader); a program of one GPU uses
    // it where it exists (a class on several GPUs), and on one GPU alone there is none.
    pair_path_ = pair_gate_path(files_.front().path);
    if (!pair_path_.empty()) {
      if (files_.size() > 1) {
        // Where the gate cannot be made (a sandbox whose grader made none: tools/course_grading with
        // COURSE_GPU_TURN_PRIORITY=0), the program takes its turns on every file at once only,
        // as before the pair gate.
        // A folder there (the grader's, without the priority) is no gate (open_turn_file).
        pair_ = open_turn_file(pair_path_, true);
        // The pair's context turn goes with the gate, and without it wherever the grader made one
        // (tools/course_grading, several GPUs): waiting for every GPU's context turn at once, a
        // program of several GPUs found them all free only when the other programs' contexts ran
        // out (a class of 16 on 2 x H200, 2026-11-28: some 60 programs waited for one context
        // turn for minutes while both GPUs idled; the CPU model below with contexts of 300 ms).
        pair_context_ = pair_ >= 0 ? open_lock(pair_context_path()) : open_turn_file(pair_context_path(), false);
      } else {
        pair_ = open_turn_file(pair_path_, false);  // none, or not this program's to use: no gate
      }
    }
  } catch (...) {
    close_all();
    throw;
  }
}

GpuTurn::GpuTurn(const std::string& paths, GpuTurnMode mode) : GpuTurn(paths) {
  try {
    take(mode);
  } catch (...) {
    close_all();
    throw;
  }
}

GpuTurn::~GpuTurn() { close_all(); }

void GpuTurn::close_all() {
  for (Files& file : files_)
    for (int* fd : {&file.lock, &file.gate, &file.queue, &file.probe, &file.context, &file.context_more[0], &file.context_more[1]})
      if (*fd >= 0) {
        ::close(*fd);  // closing them lets go of the locks
        *fd = -1;
      }
  for (int* fd : {&pair_, &pair_context_})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}

void GpuTurn::take(GpuTurnMode mode) {
  release();  // never wait while holding a turn: two programs could each wait for the other's
  // A measurement holds the gate shared until it is over, so shared turns asked for from now on
  // wait until every measurement that queued meanwhile has run; a shared turn passes the gate
  // exclusively, for an instant: never while a measurement waits or runs (gpu_turn.h).
  // A measurement also holds the queue shared while it waits for the lock: what a program that
  // holds a turn looks at to see a measurement waiting (measurement_waits).
  // With several files (a program that uses several GPUs), each file's turn is taken as with one,
  // all of them at once: a measurement holds every file's gate and queue while it waits, so that
  // every GPU drains for it, but none of the locks until it has them all (take_every); a shared
  // turn is tried on all at once for a while, then asked for with priority (the pair gate).
  const std::size_t count = files_.size();
  const auto try_shared = [this](std::size_t i) {
    Files& file = files_[i];
    if (!try_lock(file.gate, LOCK_EX, file.path + ".gate")) return false;
    bool taken = false;
    try {
      taken = try_lock(file.lock, LOCK_SH, file.path);
    } catch (...) {
      ::flock(file.gate, LOCK_UN);
      throw;
    }
    ::flock(file.gate, LOCK_UN);
    return taken;
  };
  const auto wait_shared = [this](std::size_t i) {
    Files& file = files_[i];
    lock(file.gate, LOCK_EX, file.path + ".gate");
    try {
      lock(file.lock, LOCK_SH, file.path);
    } catch (...) {
      ::flock(file.gate, LOCK_UN);
      throw;
    }
    ::flock(file.gate, LOCK_UN);
  };
  const auto undo = [this](std::size_t i) { ::flock(files_[i].lock, LOCK_UN); };
  if (mode == GpuTurnMode::shared) {
    if (count == 1 || pair_ < 0) {
      take_every(count, try_shared, wait_shared, undo);
      return;
    }
    // Priority: holding the pair gate shared, no new measurement queues on any GPU (each passes
    // the pair gate exclusively); this program waits, GPU after GPU in the files' order, for the
    // measurements queued on each, and keeps each GPU's shared turn while it waits for the next
    // (that GPU's programs go on beside it; its measurements could not queue meanwhile anyway).
    // Several programs of several GPUs wait so at once, and get their turns together. Every
    // measurement of the class waits meanwhile, so a priority not granted within 2 s (a GPU held
    // by a long measurement, or by a program slow to yield) is given up: this program lets go of
    // what it took, and tries again as at first, so that the other GPUs' measurements go on.
    for (;;) {
      if (take_every_within_patience(count, try_shared, undo)) return;
      lock(pair_, LOCK_SH, pair_path_);
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(g_priority_bound_ms.load());
      std::size_t held = 0;
      try {
        while (held < count && std::chrono::steady_clock::now() < until) {
          if (try_shared(held))
            ++held;
          else
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      } catch (...) {
        while (held > 0) undo(--held);
        ::flock(pair_, LOCK_UN);
        throw;
      }
      if (held < count) {
        while (held > 0) undo(--held);
        ::flock(pair_, LOCK_UN);
        continue;
      }
      // A program that yields keeps the priority for a slice (end_priority_after): let go of at
      // once, the measurements held back queued the next millisecond and it yielded again, having
      // run a call or two per priority (an adversarial review, 2026-11-27).
      if (keep_priority_.load()) {
        priority_since_ms_ = std::max(1LL, steady_ms());
        return;
      }
      ::flock(pair_, LOCK_UN);
      return;
    }
  }
  // A measurement passes the pair gate (waits while a program of several GPUs has priority),
  // holding it until it holds its gates and queues, so that no program of several GPUs asks for
  // priority in between: one could take a GPU's lock, which the measurement would then wait for
  // while it waits for another GPU (of a measurement on several, a gate that it holds; of one on
  // a single GPU, that GPU's programs would wait behind the queued measurement: an adversarial
  // review, 2026-11-27).
  // The wait is bounded: an honest priority is given up within g_priority_bound_ms and kept a
  // slice at most, so a pair gate held longer is held by two priorities out of step or outside
  // the protocol (a flock by the code under test), and the measurement goes on without it: it
  // still has its GPUs to itself through their own gates and queues (an adversarial review,
  // 2026-11-27: one program holding the pair gate kept every measurement of every GPU waiting,
  // unseen by every watchdog).
  bool passed_pair = false;
  if (pair_ >= 0) {
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(g_priority_bound_ms.load() + g_slice_ms.load() + 500);
    while (!(passed_pair = try_lock(pair_, LOCK_EX, pair_path_)) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  try {
    for (Files& file : files_) {
      lock(file.gate, LOCK_SH, file.path + ".gate");
      lock(file.queue, LOCK_SH, file.path + ".queue");
    }
    if (passed_pair) ::flock(pair_, LOCK_UN);
    take_every(
        count, [this](std::size_t i) { return try_lock(files_[i].lock, LOCK_EX, files_[i].path); },
        [this](std::size_t i) { lock(files_[i].lock, LOCK_EX, files_[i].path); },
        [this](std::size_t i) { ::flock(files_[i].lock, LOCK_UN); });
  } catch (...) {
    for (Files& file : files_) ::flock(file.queue, LOCK_UN);
    if (passed_pair) ::flock(pair_, LOCK_UN);
    release();
    throw;
  }
  for (Files& file : files_) ::flock(file.queue, LOCK_UN);
}

void GpuTurn::release() {
  for (Files& file : files_) {
    ::flock(file.lock, LOCK_UN);
    ::flock(file.gate, LOCK_UN);  // held only by a measurement (nothing otherwise)
  }
  if (priority_since_ms_.exchange(0) != 0) ::flock(pair_, LOCK_UN);
}

void GpuTurn::end_priority_after(std::chrono::milliseconds slice) {
  const long long since = priority_since_ms_.load();
  if (since == 0) return;
  if (steady_ms() - since < slice.count()) return;
  long long expected = since;  // (not if release() or a new priority came meanwhile)
  if (priority_since_ms_.compare_exchange_strong(expected, 0)) ::flock(pair_, LOCK_UN);
}

void GpuTurn::take_context_turn() {
  // A program of several GPUs makes its contexts one at a time with the other programs of several
  // GPUs (the pair's context turn, where there is a pair gate), not with each GPU's programs: it
  // makes its first context when it first uses a GPU and the others later, in its shared turn, as
  // every program does after its first. Waiting for every GPU's context turn at once, it seldom
  // found them all free; holding the first while it waited for the next, which that GPU's
  // programs took before it again and again (a lock file is not a queue), it kept every program
  // of the first GPU from starting; holding only the first GPU's, it slowed that GPU's programs'
  // starts (a CPU model of a class on two GPUs, 2026-11-27).
  if (pair_context_ >= 0) {
    lock(pair_context_, LOCK_EX, pair_context_path());
    return;
  }
  take_every(
      files_.size(), [this](std::size_t i) { return try_context_slot(files_[i]); },
      [this](std::size_t i) { wait_for_context_slot(files_[i]); },
      [this](std::size_t i) {
        ::flock(files_[i].context_held, LOCK_UN);
        files_[i].context_held = -1;
      });
}

// Any free slot of the GPU's, taken at once; false when every one is busy. (One already held is
// kept: a second take is no second slot.)
bool GpuTurn::try_context_slot(Files& file) {
  if (file.context_held >= 0) return true;
  for (int fd : {file.context, file.context_more[0], file.context_more[1]}) {
    if (fd < 0) continue;
    if (try_lock(fd, LOCK_EX, file.path + ".context")) {
      file.context_held = fd;
      return true;
    }
  }
  return false;
}

// Every slot busy: with one slot (the default), waits for it in flock, where /proc/locks shows the
// wait (tools/class-locks.py); with more, tries them all again every 2 ms until one is free (a
// blocking wait on one slot would wait for that one while another freed first).
void GpuTurn::wait_for_context_slot(Files& file) {
  if (file.context_held >= 0) return;
  if (file.context_more[0] < 0 && file.context_more[1] < 0) {
    lock(file.context, LOCK_EX, file.path + ".context");
    file.context_held = file.context;
    return;
  }
  while (!try_context_slot(file)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

void GpuTurn::release_context_turn() {
  if (pair_context_ >= 0) {
    ::flock(pair_context_, LOCK_UN);
    return;
  }
  for (Files& file : files_)
    if (file.context_held >= 0) {
      ::flock(file.context_held, LOCK_UN);
      file.context_held = -1;
    }
}

std::string GpuTurn::pair_context_path() const {
  return pair_path_.empty() ? std::string() : pair_path_.substr(0, pair_path_.size() - 4) + "context";
}

bool GpuTurn::measurement_waits() {
  // A measurement holds the queue shared while it waits; another program that looks at the queue
  // holds it exclusively for an instant only, so a queue busy twice, 1 ms apart, is a measurement.
  for (Files& file : files_) {
    bool busy = true;
    for (int look = 0; look < 2 && busy; ++look) {
      if (look > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (::flock(file.probe, LOCK_EX | LOCK_NB) == 0) {
        ::flock(file.probe, LOCK_UN);
        busy = false;
      } else if (errno != EWOULDBLOCK && errno != EINTR) {
        busy = false;
      }
    }
    if (busy) return true;
  }
  return false;
}

namespace {
// Every CUDA call of the program passes it (cuda_call_begins / cuda_call_ends); closed, it holds
// back the calls that begin, so that the program's GPU work can be waited for and its turn yielded.
class CallGate {
 public:
  void begin() {
    if (bypass_ || depth_++ > 0) return;  // a call nested in a call passes with it
    std::unique_lock<std::mutex> lock(mutex_);
    if (closed_ && !changed_.wait_for(lock, kHeldLong, [this] { return !closed_; })) {
      // Never expected (a measurement lasts seconds): say where the yield stands, unbuffered,
      // so that a test that runs out of time shows it in its output.
      std::fprintf(stderr, "[  COURSE  ] a CUDA call has waited %d s for the GPU turn, yielded to a measurement (%s)\n",
                   static_cast<int>(kHeldLong.count()), step_.load());
      changed_.wait(lock, [this] { return !closed_; });
    }
    ++under_way_;
    called_ = true;
  }
  void end() {
    if (bypass_ || depth_ == 0 || --depth_ > 0) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    if (--under_way_ == 0) changed_.notify_all();
  }
  // Holds back the calls that begin from now and waits, at most `within`, for those under way to
  // end: true when none is left (the gate stays closed), false otherwise (it is open again).
  bool close(std::chrono::milliseconds within) {
    std::unique_lock<std::mutex> lock(mutex_);
    closed_ = true;
    if (changed_.wait_for(lock, within, [this] { return under_way_ == 0; })) return true;
    closed_ = false;
    changed_.notify_all();
    return false;
  }
  void open() {
    const std::lock_guard<std::mutex> lock(mutex_);
    closed_ = false;
    changed_.notify_all();
  }
  // Whether the program has made a CUDA call yet (without one, it has no GPU work to wait for).
  bool called() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return called_;
  }
  // The yielding thread's own calls (the waits for GPU work) pass a closed gate.
  static void let_this_thread_pass() { bypass_ = true; }
  // What the yielding thread is doing (for the message of a call held long).
  void now(const char* step) { step_ = step; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int under_way_ = 0;
  bool closed_ = false;
  bool called_ = false;
  std::atomic<const char*> step_{"idle"};
  static constexpr std::chrono::seconds kHeldLong{30};
  static thread_local int depth_;
  static thread_local bool bypass_;
};
thread_local int CallGate::depth_ = 0;
thread_local bool CallGate::bypass_ = false;

struct TurnState {
  std::mutex mutex;
  std::unique_ptr<GpuTurn> turn;  // armed when set; holds the shared turn outside exclusive scopes
  std::function<void()> wait_for_gpu_work;      // before the program lets go of a turn
  std::function<void()> wait_for_all_gpu_work;  // the same, from the yielding thread
  int exclusive_depth = 0;
  bool paused = false;  // between two cases: no turn held (pause_gpu_turn)
  std::chrono::steady_clock::time_point exclusive_since;
  bool shared_held = false;  // whether the shared turn is held (and, for the profile, since when)
  std::chrono::steady_clock::time_point shared_since;
  // Yielding (gpu_turn.h): the calls' gate, the thread that yields, and what stops it.
  CallGate calls;
  std::atomic<int> captures{0};  // stream captures under way
  std::atomic<int> keeps{0};     // KeepGpuTurn scopes open
  bool yielding = false;         // the thread may yield the shared turn
  std::atomic<GpuTurn*> yielded{nullptr};  // the turn the thread yields, for what it does without the mutex
  bool stop_yielder = false;
  std::thread yielder;
  // The watchdog (start_yielding_gpu_turn): what it reads without the mutex, which a program
  // stuck in a wait for its GPU work holds.
  std::atomic<bool> holds_shared{false};  // shared_held, for the watchdog
  std::atomic<long long> given_back{0};   // shared turns given back so far, for the watchdog
  std::atomic<bool> watched{false};       // the program yields, so it must not hold a measurement up
  std::atomic<bool> watchdog_started{false};
  std::atomic<std::chrono::milliseconds::rep> stop_after_ms{10000};
  // The program's exit (hold_gpu_turn_to_the_end): since when, and how long it may take holding
  // the turns (its context turn keeps every other program of its GPU from starting meanwhile).
  std::atomic<long long> exiting_since_ms{0};
  std::atomic<std::chrono::milliseconds::rep> exit_within_ms{20000};
};


// The profile's record of shared turns (a measurement waits for every one held to end): their
// total, and the long ones by the test that held them.
void shared_taken(TurnState& state) {
  state.shared_held = true;
  state.holds_shared = true;
  state.shared_since = std::chrono::steady_clock::now();
}

void shared_given_back(TurnState& state) {
  if (!state.shared_held) return;
  state.shared_held = false;
  state.holds_shared = false;
  ++state.given_back;
  if (!profiling()) return;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - state.shared_since).count();
  profile_add("GPU turn: shared, held", ms);
  if (ms < 500) return;
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string holder = test ? std::string(test->test_suite_name()) + "." + test->name() : "outside the tests";
  profile_add(("GPU turn: shared, held 0.5 s or more by " + holder).c_str(), ms);
}

// Never destroyed: the yielding thread and the CUDA calls of the program's exit use it to the end.
TurnState& turn_state() {
  static TurnState* state = new TurnState;
  return *state;
}

void switch_turn(TurnState& state, GpuTurnMode mode, const char* waiting) {
  if (state.wait_for_gpu_work) state.wait_for_gpu_work();  // none of it may run into another's turn
  const ProfileScope phase(waiting);
  state.turn->take(mode);
}

// Waits for the program's GPU work (none of it may run into another's turn) and lets go of the
// turn held.
void let_go_of_the_turn(TurnState& state) {
  if (state.wait_for_gpu_work) state.wait_for_gpu_work();
  state.turn->release();
  shared_given_back(state);
}

void lost_the_turn(const std::exception& error) {
  // Going on without a turn would let this program's GPU work run into another's measurement.
  std::fprintf(stderr, "[  COURSE  ] lost the GPU turn: %s\n", error.what());
  std::abort();
}

// The yielding thread: every few milliseconds, while the program holds the shared turn, it looks
// for a measurement that waits; then it closes the calls' gate, waits for the program's GPU work,
// lets go of the turn, takes it back after the measurements and opens the gate.
void yield_to_measurements(TurnState& state) {
  CallGate::let_this_thread_pass();
  constexpr auto kLookEvery = std::chrono::milliseconds(2);
  // A call under way (a blocking copy, a wait for a kernel) is waited for with the gate closed,
  // so that the program's next call cannot begin more work meanwhile (reopened after 100 ms, a
  // program of large blocking copies made a measurement wait through several). Only a call that
  // waits for another of the program's threads to call CUDA would wait longer than a second:
  // then the gate opens again until the next look.
  constexpr auto kCallsEndWithin = std::chrono::milliseconds(1000);
  for (;;) {
    std::this_thread::sleep_for(kLookEvery);
    // Without the mutex, which the program may hold for long (a wait for its GPU work): a priority
    // kept past its slice is let go of, so that measurements queue again.
    if (GpuTurn* turn = state.yielded.load()) turn->end_priority_after(std::chrono::milliseconds(g_slice_ms.load()));
    std::unique_lock<std::mutex> guard(state.mutex, std::try_to_lock);
    if (!guard.owns_lock()) continue;  // the program is switching turns itself
    if (state.stop_yielder) return;
    if (!state.yielding || !state.turn || !state.shared_held || state.paused || state.exclusive_depth > 0 ||
        state.captures.load() > 0 || state.keeps.load() > 0 || !state.turn->measurement_waits())
      continue;
    {
      const ProfileScope phase("GPU turn: yielding, waiting for the calls under way");
      if (!state.calls.close(kCallsEndWithin)) continue;
    }
    state.calls.now("waiting for the program's GPU work");
    if (state.calls.called() && state.wait_for_all_gpu_work) {
      const ProfileScope phase("GPU turn: yielding, waiting for the program's GPU work");
      state.wait_for_all_gpu_work();
    }
    state.turn->release();
    shared_given_back(state);
    state.calls.now("waiting for the shared turn");
    try {
      const ProfileScope phase("GPU turn: yielded to a measurement, waiting for the shared one");
      state.turn->take(GpuTurnMode::shared);
    } catch (const std::exception& error) {
      lost_the_turn(error);
    }
    shared_taken(state);
    state.calls.now("idle");
    state.calls.open();
  }
}

// The watchdog: a program that yields lets go of its shared turn within milliseconds of a
// measurement's asking, once its GPU work is done. One that still holds it after stop_after_ms of
// a measurement's waiting is the one holding every measurement, and every program behind them, on
// that GPU up: a kernel that never ends, or a call that waits for one. It is stopped then, with a
// message, so that its own test fails and the class goes on (the grader judges such a failure
// again with the GPU to itself: results.py, "Stopped").
void watch_for_a_held_up_measurement(TurnState& state, std::string path) {
  std::unique_ptr<GpuTurn> probe;
  try {
    probe = std::make_unique<GpuTurn>(path);  // descriptors of its own: it looks without the mutex
  } catch (const std::exception&) {
    return;
  }
  std::chrono::steady_clock::time_point since{};
  bool held_up = false;
  long long given_back_since = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // An exit that takes long (a destructor or exit handler of the code under test that sleeps or
    // waits) holds the context turn: no other program of the GPU starts meanwhile.
    const long long exiting_since = state.exiting_since_ms.load();
    if (exiting_since != 0 && steady_ms() - exiting_since > state.exit_within_ms.load()) {
      std::fprintf(stderr,
                   "\n[  COURSE  ] stopped: this program took more than %.1f s to exit after its tests (a destructor "
                   "or exit handler that waits?), holding the GPU's context turn. Its tests fail; the others go on.\n",
                   static_cast<double>(state.exit_within_ms.load()) / 1000.0);
      std::fflush(stderr);
      std::_Exit(kStoppedExitStatus);
    }
    if (!state.watched.load() || !state.holds_shared.load() || !probe->measurement_waits()) {
      held_up = false;
      continue;
    }
    // Held up only while this program has not given its turn back since the wait began: one that
    // yields and takes its turn straight back (no measurement took the gate: a queue held by
    // something other than a measurement) is doing what it should, and is not stopped for it (an
    // adversarial review, 2026-11-27: a queue file held outside the protocol got every honest
    // program of its GPU stopped by its own watchdog).
    const auto now = std::chrono::steady_clock::now();
    const long long given_back = state.given_back.load();
    if (!held_up || given_back != given_back_since) {
      held_up = true;
      since = now;
      given_back_since = given_back;
    }
    const auto held_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - since).count();
    if (held_ms < state.stop_after_ms.load()) continue;
    std::fprintf(stderr,
                 "\n[  COURSE  ] stopped: this program held the GPU for %.1f s while another program's measurement "
                 "waited for it (a kernel that never ends, or a call that waits for one?). This test fails; the "
                 "others go on.\n",
                 static_cast<double>(held_ms) / 1000.0);
    std::fflush(stderr);
    std::_Exit(kStoppedExitStatus);
  }
}

void stop_yielding(TurnState& state, std::unique_lock<std::mutex>& guard) {
  if (state.turn) state.turn->keep_priority_for_a_slice(false);  // nothing would end it
  if (!state.yielder.joinable()) return;
  state.stop_yielder = true;
  guard.unlock();
  state.yielder.join();
  guard.lock();
  state.stop_yielder = false;
  state.yielding = false;
  state.yielded = nullptr;
}
}  // namespace

void arm_gpu_turn(const std::string& path, std::function<void()> wait_for_gpu_work) {
  TurnState& state = turn_state();
  std::unique_lock<std::mutex> guard(state.mutex);
  stop_yielding(state, guard);
  state.turn.reset();
  state.exiting_since_ms = 0;  // a new life of the turns, whose exit has not begun
  state.exclusive_depth = 0;
  state.paused = false;
  state.wait_for_gpu_work = std::move(wait_for_gpu_work);
  auto turn = std::make_unique<GpuTurn>(path);
  {
    const ProfileScope phase("GPU turn: waiting for the context turn");
    turn->take_context_turn();  // first, holding no turn (gpu_turn.h)
  }
  {
    const ProfileScope phase("GPU turn: waiting for the shared one");
    turn->take(GpuTurnMode::shared);
  }
  state.turn = std::move(turn);
  shared_taken(state);
}

void context_made() {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  if (state.turn) state.turn->release_context_turn();
}

void start_yielding_gpu_turn(std::function<void()> wait_for_all_gpu_work) {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  if (!state.turn || state.yielder.joinable()) return;
  state.wait_for_all_gpu_work = std::move(wait_for_all_gpu_work);
  state.yielding = true;
  state.yielded = state.turn.get();
  state.turn->keep_priority_for_a_slice(true);  // the thread below ends it
  state.yielder = std::thread(yield_to_measurements, std::ref(state));
  // Watched from now to the end, the program's exit too (its last wait for GPU work holds the
  // shared turn); the watchdog is never joined (it ends with the program).
  state.watched = true;
  if (!state.watchdog_started.exchange(true))
    std::thread(watch_for_a_held_up_measurement, std::ref(state), state.turn->path()).detach();
}

void stop_gpu_turn_holders_after(std::chrono::milliseconds held) { turn_state().stop_after_ms = held.count(); }

void ask_for_priority_after(std::chrono::milliseconds patience) { g_patience_ms = patience.count(); }

void keep_priority_for(std::chrono::milliseconds slice) { g_slice_ms = slice.count(); }

void give_up_priority_after(std::chrono::milliseconds bound) { g_priority_bound_ms = bound.count(); }

void disarm_gpu_turn() {
  TurnState& state = turn_state();
  std::unique_lock<std::mutex> guard(state.mutex);
  stop_yielding(state, guard);
  state.watched = false;
  state.exiting_since_ms = 0;  // the exit clock ends with the turns it bounded
  shared_given_back(state);
  state.turn.reset();
  state.exclusive_depth = 0;
  state.paused = false;
  state.wait_for_gpu_work = nullptr;
  state.wait_for_all_gpu_work = nullptr;
}

void cuda_call_begins() { turn_state().calls.begin(); }

void cuda_call_ends() { turn_state().calls.end(); }

void cuda_capture_began() { ++turn_state().captures; }

void cuda_capture_ended() {
  TurnState& state = turn_state();
  if (state.captures.load() > 0) --state.captures;
}

void pause_gpu_turn() {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);
  if (!state.turn || state.exclusive_depth > 0 || state.paused) return;
  let_go_of_the_turn(state);
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
    lost_the_turn(error);
  }
  state.paused = false;
  shared_taken(state);
}

void hold_gpu_turn_to_the_end() {
  TurnState& state = turn_state();
  const std::lock_guard<std::mutex> guard(state.mutex);  // after a yield under way has ended
  state.yielding = false;
  if (!state.turn) return;
  state.turn->keep_priority_for_a_slice(false);  // the turn kept to the end keeps no priority
  // The context turn is waited for holding no turn, as at the start (no program that holds the
  // context turn may wait for one that waits for it).
  if (!state.paused) let_go_of_the_turn(state);
  state.exclusive_depth = 0;  // (none is left open by then: its scope has ended)
  try {
    {
      const ProfileScope phase("GPU turn: waiting for the context turn");
      state.turn->take_context_turn();
    }
    const ProfileScope phase("GPU turn: waiting for the shared one");
    state.turn->take(GpuTurnMode::shared);
  } catch (const std::exception& error) {
    lost_the_turn(error);
  }
  state.paused = false;
  shared_taken(state);
  state.exiting_since_ms = steady_ms();  // the watchdog bounds the rest (a program that yields has one)
}

void stop_slow_exits_after(std::chrono::milliseconds within) { turn_state().exit_within_ms = within.count(); }

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
  if (profiling()) {
    // The total, and by the test that held it: a class on one GPU ends no faster than its
    // measurements' exclusive turns, one after another (tools/class-floor.py adds them up).
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - state.exclusive_since).count();
    profile_add("GPU turn: exclusive, held", ms);
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string holder = test ? std::string(test->test_suite_name()) + "." + test->name() : "outside the tests";
    profile_add(("GPU turn: exclusive, held by " + holder).c_str(), ms);
  }
  try {
    switch_turn(state, GpuTurnMode::shared, "GPU turn: waiting for the shared one");
  } catch (const std::exception& error) {
    lost_the_turn(error);
  }
  shared_taken(state);
}

KeepGpuTurn::KeepGpuTurn() {
  TurnState& state = turn_state();
  ++state.keeps;
  const std::lock_guard<std::mutex> guard(state.mutex);  // a yield under way has ended
}

KeepGpuTurn::~KeepGpuTurn() { --turn_state().keeps; }

ExclusiveGpuTurn::ExclusiveGpuTurn() { begin_exclusive_gpu_turn(); }

ExclusiveGpuTurn::~ExclusiveGpuTurn() { end_exclusive_gpu_turn(); }

bool suite_holds_the_gpu_throughout(const char* suite) {
  const std::string name = suite != nullptr ? suite : "";
  for (const char* word : {"DeviceWide", "Timer"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace course

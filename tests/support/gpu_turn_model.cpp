// A CPU model of a class's turn-taking (course/gpu_turn.h) on two GPUs, with no GPU: programs of
// one GPU and of both run as processes with the real protocol (the context turn, the shared turn,
// yielding to measurements, measurements, the turn to the end), their CUDA calls and GPU work
// stood in for by sleeps. It shows how a change to the protocol shares the GPUs out before it
// costs device time: a class on 2 x H100 that graded nothing in 268 s (2026-11-27) had its programs
// of both GPUs starve here too, and its programs of the first GPU stall behind them.
//
// Usage: gpu_turn_model DIR SECONDS ONE_GPU_PROGRAMS_PER_GPU PROGRAMS_OF_BOTH [--check]
//   keeps that many programs running for SECONDS (a new one as each ends), with their turn files
//   in DIR, and prints per kind how many ended and how long they took. With --check, the exit
//   status is 1 when a kind had fewer than 3 programs end, or one ended after more than 2/3 of the run.
#include "course/gpu_turn.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// CUDA calls of 1 ms (the GPU work done within the call) with 0.5 ms of host work between them.
void calls_for(milliseconds span) {
  const auto until = Clock::now() + span;
  while (Clock::now() < until) {
    course::cuda_call_begins();
    std::this_thread::sleep_for(std::chrono::microseconds(1000));
    course::cuda_call_ends();
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

// One test program, as main() takes its turns: the context (80 ms), its work in pieces with
// `measurements` measurements of `measure` between them, the teardown at exit (50 ms).
int program(const std::string& path, milliseconds work, int measurements, milliseconds measure) {
  // Waiting for the program's GPU work in flight, before it lets go of a turn, takes a while.
  const auto drain = [] { std::this_thread::sleep_for(milliseconds(3)); };
  if (const char* slice = std::getenv("MODEL_SLICE_MS")) course::keep_priority_for(milliseconds(std::atoi(slice)));
  course::arm_gpu_turn(path, drain);
  const char* context = std::getenv("MODEL_CONTEXT_MS");  // how long a context takes to make (80 ms)
  std::this_thread::sleep_for(milliseconds(context ? std::atoi(context) : 80));
  course::context_made();
  course::start_yielding_gpu_turn(drain);
  for (int piece = 0; piece <= measurements; ++piece) {
    calls_for(work / (measurements + 1));
    if (piece < measurements) {
      const course::ExclusiveGpuTurn alone;
      std::this_thread::sleep_for(measure);
    }
  }
  course::hold_gpu_turn_to_the_end();
  std::this_thread::sleep_for(milliseconds(50));
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "program")
    return program(argv[2], milliseconds(std::atoi(argv[3])), std::atoi(argv[4]), milliseconds(std::atoi(argv[5])));
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s DIR SECONDS ONE_GPU_PROGRAMS_PER_GPU PROGRAMS_OF_BOTH [--check]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int seconds = std::atoi(argv[2]), per_gpu = std::atoi(argv[3]), of_both = std::atoi(argv[4]);
  const bool check = argc > 5 && std::string(argv[5]) == "--check";
  const std::string first = dir + "/gpu-0.turn", second = dir + "/gpu-1.turn";
  // The pair's turn files as a grader leaves them (tools/course_grading): MODEL_PAIR=context (its
  // default: a folder where the gate would be, the pair's context turn made), off (the folder
  // alone: each program of both GPUs waits for both GPUs' context turns at once), gate (neither:
  // the programs of both GPUs make the gate and take the priority, COURSE_GPU_TURN_PRIORITY=1).
  const char* pair_env = std::getenv("MODEL_PAIR");
  const std::string pair = pair_env ? pair_env : "context";
  if (pair != "gate") {
    if (::mkdir((dir + "/gpu-pair.gate").c_str(), 0755) != 0 && errno != EEXIST) return 2;
    if (pair == "context") std::fclose(std::fopen((dir + "/gpu-pair.context").c_str(), "a"));
  }
  struct Slot {
    std::string kind, path;
    pid_t pid = -1;
    Clock::time_point started;
  };
  std::vector<Slot> slots;
  for (int i = 0; i < per_gpu; ++i) {
    slots.push_back({"GPU 0", first});
    slots.push_back({"GPU 1", second});
  }
  for (int i = 0; i < of_both; ++i) slots.push_back({"both GPUs", first + "," + second});
  std::mt19937 random(1);
  const auto start = [&](Slot& slot) {
    // A third of the programs measure, three times 150 ms; a program of both works 1.5 s, one of one GPU 1 s.
    const char* every = std::getenv("MODEL_MEASURE_EVERY");  // (a third of the programs by default)
    const int one_in = every ? std::atoi(every) : 3;
    const std::string work = slot.kind == "both GPUs" ? "1500" : "1000",
                      measurements = random() % one_in == 0 ? "3" : "0";
    slot.started = Clock::now();
    slot.pid = ::fork();
    if (slot.pid == 0) {
      const char* measure = std::getenv("MODEL_MEASURE_MS");  // how long each measurement takes (150 ms)
      ::execl("/proc/self/exe", "gpu_turn_model", "program", slot.path.c_str(), work.c_str(), measurements.c_str(),
              measure ? measure : "150",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
  };
  for (Slot& slot : slots) start(slot);
  std::map<std::string, std::vector<double>> ended;
  std::map<std::string, int> failed;
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < end) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      std::this_thread::sleep_for(milliseconds(5));
      continue;
    }
    for (Slot& slot : slots)
      if (slot.pid == pid) {
        const double took = std::chrono::duration<double>(Clock::now() - slot.started).count();
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
          ended[slot.kind].push_back(took);
        else
          ++failed[slot.kind];
        start(slot);
      }
  }
  for (Slot& slot : slots) ::kill(slot.pid, SIGKILL);
  while (::waitpid(-1, nullptr, 0) > 0) {
  }
  bool fine = true;
  for (const char* kind : {"GPU 0", "GPU 1", "both GPUs"}) {
    std::vector<double>& times = ended[kind];
    if (std::string(kind) == "both GPUs" && of_both == 0) continue;
    std::sort(times.begin(), times.end());
    const double longest = times.empty() ? 0 : times.back();
    std::printf("programs of %s: %zu ended in %d s, median %.2f s, longest %.2f s, %d failed\n", kind, times.size(),
                seconds, times.empty() ? 0.0 : times[times.size() / 2], longest, failed[kind]);
    // A stall is a program that waits for most of the run: 2/3 of it. (With the pair gate's priority
    // off, its default since 2026-11-27, the longest took 12.7-15.4 s of 30 on a 2-core machine,
    // medians 6.5-7.5 s; half the run failed one run in three. A starved kind ends 1 or 2.)
    if (times.size() < 3 || failed[kind] > 0 || longest > seconds * 2.0 / 3.0) fine = false;
  }
  if (check && !fine) std::printf("gpu_turn_model: a kind of program starved, stalled or failed\n");
  return check && !fine ? 1 : 0;
}

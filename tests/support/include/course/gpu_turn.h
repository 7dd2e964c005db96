/// @file gpu_turn.h
/// @brief Taking turns on the GPU between test programs that ctest runs side by side.
///
/// A test that times the GPU (or counts, or reads the free memory) must have it to itself while
/// it measures. ctest alone says so with RUN_SERIAL: such a test starts only when nothing else
/// runs, so its process start, CUDA context, inputs, correctness checks and exit hold the GPU
/// too. A grader (tools/course_grading) that runs these tests apart instead gives each program a
/// lock file on its command line, `--course_gpu_lock=PATH`, and the program takes turns with it:
///
/// - a **shared** turn from before it makes its CUDA context (its first CUDA call, which starts
///   the driver and touches no GPU, comes before: no measurement waits for it) until it has
///   exited (the kernel lets go of the lock after the context's teardown), so that no other program creates
///   or tears down a context, allocates, frees or runs anything while one measures; a program
///   that runs several cases lets go of it between them, once its GPU work is done;
/// - an **exclusive** turn only while it measures: the timing loops (time_on_stream,
///   time_on_host), the copy peaks, the counting of instructions (record_activity: CUPTI's
///   profiler counts for one process at a time), and every test of a suite that measures the
///   whole device throughout (a timer, free memory; main() takes it before such a test and gives
///   it back after).
///
/// So several programs start, make their inputs, check their results and exit beside each other,
/// and only their measurements queue. A program never waits while it holds a turn: it first waits
/// for its own GPU work (so that none of it runs into another program's measurement), lets go,
/// and then asks for the other kind.
///
/// A program whose every CUDA call passes cuda_call_begins / cuda_call_ends (CUPTI callbacks,
/// pass_cuda_calls_through_gpu_turn in activity.h) can also **yield** its shared turn to a
/// measurement that waits (start_yielding_gpu_turn; main() does, once its CUDA context exists,
/// unless told --course_gpu_yield=0). Yielding works so:
/// a thread of its own notices the waiting measurement (within a few milliseconds), holds back
/// the program's next CUDA calls, waits for the calls under way and for the program's GPU work,
/// and lets go of the shared turn; it takes the turn back, through the gate, after the
/// measurements, and lets the held calls go on. A measurement then waits only for the GPU work
/// in flight, never for another program's host work (inputs, CPU references, checks), which
/// goes on meanwhile. Not while a stream is being captured (a device-wide wait would break the
/// capture), nor inside a KeepGpuTurn scope (a test that times its calls on the host's clock).
/// The thread waits for the GPU work through the driver only: a call held at the gate may be
/// inside the runtime, holding the runtime's locks (a thread that waited through the runtime
/// could wait for them for ever; two classes of 12 on the H100 had a program stuck so, 180 s,
/// before the waits went through the driver and began after the context). A measurement holds a
/// third file, PATH.queue, shared while it waits for the lock:
/// that is what the thread looks at. (Keeping the exclusive turn a few milliseconds after a
/// measurement, for a next one that follows at once, cost more than the drains it saved on the
/// H100, 40 ms kept; 5 ms stalled a class.)
///
/// A second file, PATH.gate, batches the measurements. A program that asks for the exclusive
/// turn holds the gate shared from then until its measurement is over; a shared turn is asked for
/// through the gate, exclusively, so it waits while any measurement waits or runs. Once the
/// shared turns held have drained, the measurements waiting then run one after another, and
/// only then do the shared turns come back: one drain of the GPU serves every measurement that
/// queued meanwhile, rather than one each, and no measurement is starved by later shared turns.
///
/// A fourth file, PATH.context, lets one program at a time make its CUDA context, and tear it
/// down: a context in the making cannot yield, so a measurement that came then waited for every
/// one begun, most after a measurement had let several programs start at once. A program takes
/// PATH.context before the shared turn, holding no turn while it waits for it: a measurement then
/// waits for one context at most. Where PATH.context-1 and PATH.context-2 exist (made by the
/// grader with COURSE_CONTEXT_SLOTS=2 or 3; a program never makes them), they are further slots:
/// that many programs make or end their contexts at once. The driver makes contexts partly side
/// by side (tools/measure-context-cost.py, H100, driver 580, 2026-11-27: a program's start and end
/// 0.32 s alone; 2, 4 and 8 at once ended 1.36, 1.57 and 1.62 x as many per second), and one slot
/// is a floor of 42 programs x 0.3 s = 12.5 s per submission on a GPU. But with three slots a class
/// of 6 references and the starter on one H100 of a 2 x H100 machine took 258 s against 199 s
/// with one (a day apart, other changes between): its context waits fell from 429 to 168
/// program-s, its waits behind measurements rose to 603 (a measurement waits for up to three
/// contexts in the making). So one slot stays the default until an A/B on one machine decides. (Contexts made beside
/// measurements, in the context turn alone, got a class of 12 on the H100 seven wrong verdicts,
/// 2026-11-25: a free-memory test saw another program's new context as a leak of 1-3 GB, and a
/// host-timed measurement fell to 2.4x where 4x is required. Contexts made in the exclusive turn
/// whenever a measurement waited, among the queued measurements, gained nothing, 2026-11-25: a
/// class of 12 on the H100 took 243 s against 246 s, and its contexts as long to make, 0.17 s on
/// average, on a quiet GPU as beside other programs: the cost is the program's own.)
///
/// The lock orders the judge's own programs: one grading's, or with a grader's class turn file
/// (tools/grade-class) every grading's on that GPU. A program waits for its GPU work before it
/// lets go of a turn, so what the code under test launched runs inside that program's turn. The
/// code under test cannot call flock or open files (the code policy), nor write the turn files:
/// a program opens every one read-only (flock locks a read-only descriptor, shared or exclusive,
/// on a local file system; not on NFS, where grade-class refuses the lock folder), a class's
/// grader makes them beforehand, and the sandbox lets the programs read only these four and the
/// pair's two, below, so two gradings cannot pass data through their contents.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace course {

/// How a program holds the GPU: beside others, or alone.
enum class GpuTurnMode { shared, exclusive };

/// One program's hold on the lock file `path` (and the gate PATH.gate), in one mode at a time.
/// `path` may name several lock files, separated by commas (a program that uses several GPUs, each
/// with its own file, always named in the same order): the program then holds a turn of that mode
/// on each, all at once; while a measurement on several waits, it holds each file's gate and
/// queue, so that every one of its GPUs drains for it, but none of the locks until it has them
/// all. A measurement waiting on any of the files is one that waits. Files named STEM-N.turn (a
/// class's: gpu-0.turn, gpu-1.turn) also have a pair gate, STEM-pair.gate, and a context turn of
/// the programs of several GPUs, STEM-pair.context:
/// - a program of several GPUs tries its shared turn on every file at once for 250 ms
///   (ask_for_priority_after), holding none while one is busy, so that one GPU's measurements do
///   not hold up another's; then it asks for priority: it holds the pair gate shared, and waits,
///   file after file in their order, for each GPU's gate and its shared turn there (keeping the
///   turns taken; that GPU's other programs go on beside it). Every measurement passes the pair
///   gate exclusively before it queues (holding it until it holds its gates and queues), so that
///   none queues on any GPU meanwhile, and each GPU's queued measurements end. A priority not
///   granted within 2 s is given up and asked for again after the 250 ms (every measurement of
///   the class waits meanwhile); one granted to a program that yields is kept for a 500 ms slice
///   (keep_priority_for), so that the measurements held back do not make it yield at once. Each
///   GPU's measurements keep that GPU busy in turn, so that tried all at once only, these programs
///   waited for minutes (2 x H100, 2026-11-26: 197-217 s per grading for tests that take 3 s alone).
/// - a measurement on several files holds the pair gate until it holds every file's gate, so that
///   no program asks for priority meanwhile (it could hold a lock that the measurement waits for
///   and wait for a gate that the measurement holds); it waits for the pair gate 2 s + the slice
///   + 0.5 s at most, and then goes on without it (its GPUs' own gates and queues still give it
///   them to itself): an honest priority never holds it longer, so a pair gate held longer is held
///   by priorities out of step or outside the protocol (an adversarial review, 2026-11-27);
/// - such a program makes its first context in the pair's context turn, one at a time with the
///   other programs of several GPUs, not in each GPU's (it makes its other contexts later, in its
///   shared turn, as every program does after its first). Waiting for every GPU's context turn at
///   once, it seldom found all free; holding the first while it waited for the next, which that
///   GPU's programs kept taking before it (a lock file is not a queue), it kept every program of
///   the first GPU from starting (a CPU model of a class, 2026-11-27). The pair's context turn
///   serves without the gate too, wherever the grader made it (tools/course_grading does on every
///   class of several GPUs, with the priority off): without it, a class of 16 on 2 x H200
///   (2026-11-28) idled both GPUs for minutes while its programs of both waited.
/// That model (tests/support/gpu_turn_model.cpp: programs as processes with this protocol, their
/// CUDA calls and GPU work stood in for by sleeps) ends 39-43 programs of both GPUs in 30 s beside
/// 53-64 of each GPU (16 per GPU and 12 of both), against 1 of both before.
class GpuTurn {
 public:
  /// Opens the lock files; holds nothing yet. Throws std::runtime_error when they cannot be opened.
  explicit GpuTurn(const std::string& path);
  /// Opens the lock files and waits for a turn of `mode`.
  GpuTurn(const std::string& path, GpuTurnMode mode);
  GpuTurn(const GpuTurn&) = delete;
  GpuTurn& operator=(const GpuTurn&) = delete;
  /// Lets go of the turn held, if any.
  ~GpuTurn();

  /// Lets go of the turn held, then waits (through the gate) for a turn of `mode`. Throws
  /// std::runtime_error when the lock cannot be taken.
  void take(GpuTurnMode mode);
  /// Lets go of the turn held, if any.
  void release();
  /// Whether another program waits for the exclusive turn (it holds PATH.queue while it waits),
  /// seen without waiting; for a program that holds a turn.
  bool measurement_waits();
  /// The lock files' paths, as given.
  const std::string& path() const { return path_; }
  /// Whether a shared turn on several files given with priority keeps it (the pair gate, above)
  /// until end_priority_after lets go of it, rather than at once (a program that yields; off by
  /// default).
  void keep_priority_for_a_slice(bool keep) { keep_priority_ = keep; }
  /// Lets go of a priority kept for `slice` or longer (the pair gate); may be called from another
  /// thread than the turn's, without a lock.
  void end_priority_after(std::chrono::milliseconds slice);
  /// Waits until a slot is free, of PATH.context, PATH.context-1 and PATH.context-2 (those that
  /// exist): fewer programs than slots make or tear down their contexts; and holds that slot
  /// (above); never called while a turn is held. Throws std::runtime_error when it cannot lock.
  void take_context_turn();
  /// Lets go of what take_context_turn took.
  void release_context_turn();

 private:
  /// @cond INTERNAL
  // The descriptors of one lock file and the three beside it.
  struct Files {
    std::string path;
    int lock = -1;
    int gate = -1;
    int queue = -1;
    int probe = -1;  // the queue once more: flock sees this descriptor's lock apart from queue's
    int context = -1;      // PATH.context, the first slot
    int context_more[2] = {-1, -1};  // PATH.context-1 and -2: the other slots, where they exist (-1: none)
    int context_held = -1;  // the slot's descriptor this program holds
  };
  bool try_context_slot(Files& file);
  void wait_for_context_slot(Files& file);
  void close_all();
  std::string path_;
  std::vector<Files> files_;
  std::string pair_context_path() const;
  std::atomic<bool> keep_priority_{false};
  std::atomic<long long> priority_since_ms_{0};  // steady clock, while a priority is kept; 0 otherwise
  int pair_ = -1;  // the pair gate (above), where there is one
  int pair_context_ = -1;  // the context turn of the programs of several GPUs (above)
  std::string pair_path_;
  /// @endcond
};

/// The lock files that a --course_gpu_lock value names (comma-separated, none empty). Throws
/// std::runtime_error on an empty one.
std::vector<std::string> gpu_turn_paths(const std::string& paths);

/// Arms this program's turns on `path` (main(), from --course_gpu_lock) and takes the context
/// turn, then the shared turn, kept until the program exits (or yielded: start_yielding_gpu_turn);
/// the context turn until context_made. `wait_for_gpu_work` runs, on the thread that switches
/// turns, before the program lets go of one (main() gives cudaDeviceSynchronize). Throws
/// std::runtime_error when the lock cannot be taken.
void arm_gpu_turn(const std::string& path, std::function<void()> wait_for_gpu_work = {});
/// Once the program's CUDA context exists (or it makes none): lets go of the context turn that
/// arm_gpu_turn took. Nothing when unarmed.
void context_made();

/// Called as each CUDA call of the program begins and ends (CUPTI callbacks; the unit tests call
/// them by hand). Calls nested in a call (the runtime's own driver calls) pass as one. While a
/// shared turn is being yielded, a call that begins waits until the turn is back.
void cuda_call_begins();
void cuda_call_ends();  ///< see cuda_call_begins
/// For an armed program (after arm_gpu_turn) whose every CUDA call passes cuda_call_begins /
/// cuda_call_ends from now on: yields its shared turn to waiting measurements (above), waiting for
/// its GPU work with `wait_for_all_gpu_work` (main() gives driver_wait_for_every_device, gpu.h),
/// called from the yielding thread. Nothing when unarmed or already yielding.
void start_yielding_gpu_turn(std::function<void()> wait_for_all_gpu_work);

/// Called when a stream capture begins and ends: no turn is yielded meanwhile.
void cuda_capture_began();
void cuda_capture_ended();  ///< see cuda_capture_began

/// Exit status of a program stopped for holding a measurement up: a program that yields (above)
/// and still holds its shared turn 10 s after a measurement began to wait for it (a kernel that
/// never ends, or a call that waits for one) prints why and exits with it, so that its own test
/// fails and the other programs on the GPU go on (start_yielding_gpu_turn starts the watchdog).
constexpr int kStoppedExitStatus = 86;
/// How long a held-up measurement waits before its holder is stopped (10 s; the unit tests shorten it).
void stop_gpu_turn_holders_after(std::chrono::milliseconds held);

/// How long a program of several GPUs tries its turns on all of them at once before it asks for
/// priority (250 ms; the unit tests change it).
void ask_for_priority_after(std::chrono::milliseconds patience);
/// How long a program that yields keeps a priority it was given before it lets measurements queue
/// again (500 ms; the unit tests and the model change it).
void keep_priority_for(std::chrono::milliseconds slice);
/// How long a program of several GPUs waits with priority before it gives it up and tries again
/// (2 s; the unit tests change it).
void give_up_priority_after(std::chrono::milliseconds bound);

/// Before the program exits (main()): yields the shared turn no more, lets go of it, and takes
/// the context turn and then the shared turn, both kept to the end, so that the context's
/// teardown, at exit, happens inside the turn and one program's at a time.
void hold_gpu_turn_to_the_end();

/// How long a program may take to exit after hold_gpu_turn_to_the_end (20 s; the unit tests shorten
/// it): one that yielded (it has the watchdog) and takes longer, holding its context turn (no other
/// program of its GPU starts meanwhile), is stopped with kStoppedExitStatus and a message, so that
/// its own tests fail (a destructor or exit handler of the code under test that sleeps) and the
/// class goes on.
void stop_slow_exits_after(std::chrono::milliseconds within);

/// Lets go of every turn and disarms (the unit tests; a program keeps its shared turn to the end).
void disarm_gpu_turn();

/// Between two test cases of one program (a grader's batch runs several): waits for this
/// program's GPU work and lets go of the shared turn, so that another program's measurement need
/// not wait for this one's next cases. The context stays, idle. Nothing while exclusive or unarmed.
void pause_gpu_turn();
/// Takes the shared turn again after pause_gpu_turn (before the next case, and before the program
/// exits: the context's teardown happens in a turn).
void resume_gpu_turn();

/// Keeps the shared turn for its lifetime: none is yielded meanwhile, so that no CUDA call of the
/// program waits at the gate (a test that times how long a call takes to return on the host's
/// clock). Waits for a yield under way to end.
class KeepGpuTurn {
 public:
  KeepGpuTurn();
  KeepGpuTurn(const KeepGpuTurn&) = delete;
  KeepGpuTurn& operator=(const KeepGpuTurn&) = delete;
  ~KeepGpuTurn();
};

/// Holds the exclusive turn for its lifetime, if turns are armed (nothing otherwise). Scopes
/// nest: the outermost one takes the turn and gives it back for the shared one.
class ExclusiveGpuTurn {
 public:
  ExclusiveGpuTurn();  ///< Waits for the exclusive turn (if armed and not yet held).
  ExclusiveGpuTurn(const ExclusiveGpuTurn&) = delete;
  ExclusiveGpuTurn& operator=(const ExclusiveGpuTurn&) = delete;
  ~ExclusiveGpuTurn();  ///< The outermost scope goes back to the shared turn.
};

/// Starts and ends an exclusive hold that spans callbacks (main()'s listener, around a test of
/// a suite that holds the GPU throughout); the same as an ExclusiveGpuTurn's lifetime.
void begin_exclusive_gpu_turn();
/// Ends what begin_exclusive_gpu_turn began.
void end_exclusive_gpu_turn();

/// Whether suite `suite` measures something of the whole device throughout its tests (a
/// DeviceWide or Timer suite: cmake/CourseTestList.cmake runs them alone too; a Counted suite,
/// which it also runs alone, holds the exclusive turn only while it counts).
bool suite_holds_the_gpu_throughout(const char* suite);

}  // namespace course

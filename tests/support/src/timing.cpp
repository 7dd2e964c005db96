#include "course/timing.h"
#include "course/profile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu_turn.h"
#include "course/guards.h"

namespace course {

TimingStats summarize_timings(std::vector<double> samples_ms) {
  if (samples_ms.empty()) throw std::invalid_argument("summarize_timings: no samples");
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  TimingStats stats;
  stats.median_ms = n % 2 == 1 ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
  stats.min_ms = samples_ms.front();
  stats.max_ms = samples_ms.back();
  stats.repetitions = static_cast<int>(n);
  return stats;
}

bool median_is_settled(std::vector<double> samples_ms, double relative_width) {
  const std::size_t n = samples_ms.size();
  if (n < 3) return false;
  std::sort(samples_ms.begin(), samples_ms.end());
  // The ranks (1-based) n/2 - 0.98 sqrt(n) rounded down and 1 + n/2 + 0.98 sqrt(n) rounded up
  // bound the median with 95% confidence, whatever the distribution of the samples.
  const double half = 0.98 * std::sqrt(static_cast<double>(n));
  const double low_rank = std::max(1.0, std::floor(n / 2.0 - half));
  const double high_rank = std::min(static_cast<double>(n), std::ceil(1.0 + n / 2.0 + half));
  const double low = samples_ms[static_cast<std::size_t>(low_rank) - 1];
  const double high = samples_ms[static_cast<std::size_t>(high_rank) - 1];
  const double median = summarize_timings(std::move(samples_ms)).median_ms;
  return median > 0 && high - low <= relative_width * median;
}

namespace {
// The fewest repetitions timed, and how well their median must be known for no more to be
// timed: within 2% (95% confidence), far inside every threshold's margin. A kernel that runs
// alone on the GPU repeats to well within that (on the H100, most of them within 0.5%), so
// most measurements stop at the fewest and only noisy ones take more.
// The timing goes on until the recorded call (FreshCalls::rules) has come, wherever it was drawn:
// code that takes another path only for its first calls is caught as often as before.
constexpr int kFewestRepetitions = 8;
constexpr double kSettledWidth = 0.02;
bool enough_repetitions(const std::vector<double>& samples, int fewest) {
  return static_cast<int>(samples.size()) >= fewest && median_is_settled(samples, kSettledWidth);
}

// Events are released even when a check throws half-way.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};
}  // namespace

namespace {
// Keeps the GPU busy up to the start event of each timed repetition. A GPU that idled before a
// call runs it slower, and a start event that an idle GPU reaches before the work arrives times
// the launch's latency too. Measured on the H200 (a 256 MiB device-to-device copy timed after
// 20 ms idle, 2026-11-24): 3210 GB/s straight after the idle time, 4030 when three copies of 64
// MiB ran first but the GPU idled while the host woke up to enqueue the call, 4190-4210 when one
// more copy (or a short kernel) kept it busy until the call was enqueued; a copy kernel 3110,
// 3620 and 3940.
// The tests time code under test with fresh inputs (host work, the device idle, before each
// call) and baselines back to back: both now start from a busy GPU, as they would in a program.
class BusyUntilTimed {
 public:
  // Only when `timed` belongs to the current device (the warm-up runs there). Times its own
  // copies once, to size the last one.
  explicit BusyUntilTimed(cudaStream_t timed) : timed_(timed), on_this_device_(same_device(timed)) {
    if (!on_this_device_) return;
    from_ = DeviceBuffer<unsigned char>(kCopyBytes, "the timer's warm-up source");
    to_ = DeviceBuffer<unsigned char>(kCopyBytes, "the timer's warm-up destination");
    CUDA_CHECK(cudaEventCreateWithFlags(&warmed_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&held_, cudaEventDisableTiming));
    const EventPair events;
    copy(kCopyBytes);
    CUDA_CHECK(cudaEventRecord(events.start, warm_));
    for (int i = 0; i < kCopies; ++i) copy(kCopyBytes);
    CUDA_CHECK(cudaEventRecord(events.stop, warm_));
    CUDA_CHECK(cudaEventSynchronize(events.stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
    const double per_copy_ms = ms / kCopies;
    // The last copy lasts ~50 us on any GPU (64 MiB on an H100 or an H200).
    const double fraction = per_copy_ms > 0 ? kLastCopyMs / per_copy_ms : 1.0;
    last_copy_bytes_ = std::clamp<std::size_t>(static_cast<std::size_t>(fraction * kCopyBytes) / 256 * 256,
                                               std::size_t{1} << 20, kCopyBytes);
  }
  ~BusyUntilTimed() {
    if (warmed_) cudaEventDestroy(warmed_);
    if (held_) cudaEventDestroy(held_);
  }
  BusyUntilTimed(const BusyUntilTimed&) = delete;
  BusyUntilTimed& operator=(const BusyUntilTimed&) = delete;

  // Enqueues ~0.1 ms of copies (the clocks recover within it) and one more short copy, which
  // the timed stream waits for; returns when the first ones are done, so that the host's clock
  // starts with at most the short one still running (well inside the 0.1 ms that the
  // host-versus-events check allows). Copies only: a kernel of the support library here would
  // add its machine code to every test program (chapter 11 reads which its binary carries).
  void before_repetition() {
    if (!on_this_device_) return;
    for (int i = 0; i < kCopies; ++i) copy(kCopyBytes);
    CUDA_CHECK(cudaEventRecord(warmed_, warm_));
    copy(last_copy_bytes_);
    CUDA_CHECK(cudaEventRecord(held_, warm_));
    CUDA_CHECK(cudaStreamWaitEvent(timed_, held_, 0));
    CUDA_CHECK(cudaEventSynchronize(warmed_));
  }

 private:
  static constexpr std::size_t kCopyBytes = std::size_t{64} << 20;  // beyond the L2 both ways
  static constexpr int kCopies = 3;
  static constexpr double kLastCopyMs = 0.05;
  void copy(std::size_t bytes) {
    CUDA_CHECK(cudaMemcpyAsync(to_.data(), from_.data(), bytes, cudaMemcpyDeviceToDevice, warm_));
  }
  static bool same_device(cudaStream_t stream) {
    int current = 0;
    CUDA_CHECK(cudaGetDevice(&current));
#if CUDART_VERSION >= 12080
    int of_stream = current;
    CUDA_CHECK(cudaStreamGetDevice(stream, &of_stream));
    return of_stream == current;
#else
    (void)stream;
    return true;
#endif
  }
  cudaStream_t timed_;
  bool on_this_device_;
  Stream warm_{cudaStreamNonBlocking};
  DeviceBuffer<unsigned char> from_, to_;
  cudaEvent_t warmed_ = nullptr, held_ = nullptr;
  std::size_t last_copy_bytes_ = kCopyBytes;
};

// Before and after a call of the fresh variants: the input changed (not timed) and what the call
// wrote checked (not timed), the first wrong call kept with its number.
struct Freshness {
  const FreshCalls* fresh;
  int total;
  TimingStats* stats;
  void before() const {
    if (!fresh) return;
    const ProfileScope phase("fresh: change the input");
    CUDA_CHECK(cudaDeviceSynchronize());
    fresh->change();
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  void after() const {
    ++stats->calls;
    if (!fresh) return;
    const ProfileScope phase("fresh: check the output");
    CUDA_CHECK(cudaDeviceSynchronize());
    const ::testing::AssertionResult right = fresh->check();
    ++stats->calls_checked;
    if (!right && stats->wrong_call.empty())
      stats->wrong_call = "call " + std::to_string(stats->calls) + " of up to " + std::to_string(total) + ": " +
                          right.message();
  }
};

// Which call slot (0 .. warmups + repetitions) the recorded call takes: -1 when there are no
// rules. Drawn from the operating system's randomness, which the code under test cannot see.
int recorded_slot(const FreshCalls* fresh, int warmups, int repetitions) {
  if (!fresh || !fresh->rules) return -1;
  std::random_device device;
  return std::uniform_int_distribution<int>(0, warmups + repetitions)(device);
}

// The recorded call: fresh input, the work under the recorder, its output checked, its activity
// held to the rules. `record` runs the work under record_activity or record_activity_on.
void recorded_call(const Freshness& freshness, const std::function<Activity()>& record) {
  const ProfileScope phase("fresh: recorded call (CUPTI)");
  freshness.before();
  const Activity activity = record();
  CUDA_CHECK(cudaGetLastError());
  freshness.after();
  freshness.stats->recorded_call = freshness.stats->calls;
  const ::testing::AssertionResult kept = freshness.fresh->rules(activity);
  if (!kept) freshness.stats->broken_rule = kept.message();
}

void copy_counts(const TimingStats& counts, TimingStats& stats) {
  stats.calls = counts.calls;
  stats.calls_checked = counts.calls_checked;
  stats.wrong_call = counts.wrong_call;
  stats.recorded_call = counts.recorded_call;
  stats.broken_rule = counts.broken_rule;
}

TimingStats timed_on_stream(const std::function<void(cudaStream_t)>& work, cudaStream_t stream,
                            const FreshCalls* fresh, int warmups, int repetitions, Repeat repeat) {
  if (repetitions < 1) throw std::invalid_argument("time_on_stream: repetitions < 1");
  const ExclusiveGpuTurn alone;  // nothing else runs on the GPU while it is timed (course/gpu_turn.h)
  const ProfileScope phase("time_on_stream (all of it)");
  TimingStats counts;
  const int slot = recorded_slot(fresh, warmups, repetitions);
  const Freshness freshness{fresh, warmups + repetitions + (slot >= 0 ? 1 : 0), &counts};
  const auto record = [&] { recorded_call(freshness, [&] { return record_activity_on(stream, [&] { work(stream); }, fresh->launch_arguments, fresh->counting); }); };
  for (int i = 0; i < warmups; ++i) {
    if (i == slot) record();
    freshness.before();
    work(stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    freshness.after();
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EventPair events;
  BusyUntilTimed busy(stream);
  std::vector<double> samples, host_samples;
  samples.reserve(static_cast<std::size_t>(repetitions));
  const int fewest = repeat == Repeat::all ? repetitions : std::min(repetitions, kFewestRepetitions);
  for (int i = 0; i < repetitions && (!enough_repetitions(samples, fewest) || slot >= warmups + i); ++i) {
    if (warmups + i == slot) record();
    freshness.before();
    busy.before_repetition();
    const auto host_start = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaEventRecord(events.start, stream));
    work(stream);
    CUDA_CHECK(cudaEventRecord(events.stop, stream));
    // The whole device, not only the stop event: work hidden on another stream shows here.
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto host_stop = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaGetLastError());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
    samples.push_back(ms);
    host_samples.push_back(std::chrono::duration<double, std::milli>(host_stop - host_start).count());
    freshness.after();
  }
  if (slot >= warmups + static_cast<int>(samples.size())) record();  // the slot after the last call
  const std::string damage = guard_check_all();
  if (!damage.empty()) throw OutOfBoundsWrite("the timed code " + damage);
  TimingStats stats = summarize_timings(std::move(samples));
  stats.host_median_ms = summarize_timings(std::move(host_samples)).median_ms;
  copy_counts(counts, stats);
  return stats;
}

TimingStats timed_on_host(const std::function<void()>& work, const FreshCalls* fresh, int warmups, int repetitions) {
  if (repetitions < 1) throw std::invalid_argument("time_on_host: repetitions < 1");
  const ExclusiveGpuTurn alone;  // nothing else runs on the GPU while it is timed (course/gpu_turn.h)
  const ProfileScope phase("time_on_host (all of it)");
  TimingStats counts;
  const int slot = recorded_slot(fresh, warmups, repetitions);
  const Freshness freshness{fresh, warmups + repetitions + (slot >= 0 ? 1 : 0), &counts};
  const auto record = [&] { recorded_call(freshness, [&] { return record_activity(work, fresh->launch_arguments, fresh->counting); }); };
  for (int i = 0; i < warmups; ++i) {
    if (i == slot) record();
    freshness.before();
    work();
    CUDA_CHECK(cudaDeviceSynchronize());
    freshness.after();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaGetLastError());
  std::vector<double> samples;
  const int fewest = std::min(repetitions, kFewestRepetitions);
  for (int i = 0; i < repetitions && (!enough_repetitions(samples, fewest) || slot >= warmups + i); ++i) {
    if (warmups + i == slot) record();
    freshness.before();
    const auto start = std::chrono::steady_clock::now();
    work();
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto stop = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaGetLastError());
    samples.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    freshness.after();
  }
  if (slot >= warmups + static_cast<int>(samples.size())) record();
  const std::string damage = guard_check_all();
  if (!damage.empty()) throw OutOfBoundsWrite("the timed code " + damage);
  TimingStats stats = summarize_timings(std::move(samples));
  stats.host_median_ms = stats.median_ms;
  copy_counts(counts, stats);
  return stats;
}
}  // namespace

TimingStats time_on_stream(const std::function<void(cudaStream_t)>& work, cudaStream_t stream,
                           int warmups, int repetitions, Repeat repeat) {
  return timed_on_stream(work, stream, nullptr, warmups, repetitions, repeat);
}

TimingStats time_on_stream(const std::function<void(cudaStream_t)>& work, cudaStream_t stream,
                           const FreshCalls& fresh, int warmups, int repetitions) {
  return timed_on_stream(work, stream, &fresh, warmups, repetitions, Repeat::until_settled);
}

TimingStats time_on_host(const std::function<void()>& work, int warmups, int repetitions) {
  return timed_on_host(work, nullptr, warmups, repetitions);
}

TimingStats time_on_host(const std::function<void()>& work, const FreshCalls& fresh, int warmups, int repetitions) {
  return timed_on_host(work, &fresh, warmups, repetitions);
}

}  // namespace course

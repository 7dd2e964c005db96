// Tests of chapter 01 (timers and bandwidth). Built once, linked against the starter and
// against the reference solution. The timers are checked against a kernel of known duration
// (enqueue_busy_wait, which reads the GPU's global timer).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>

#include "course/gpu_turn.h"
#include "course/testing.h"
#include "measuring.h"

namespace {

// Non-blocking streams, so that nothing on the legacy default stream orders the work.
class Stream : public course::Stream {
 public:
  Stream() : course::Stream(cudaStreamNonBlocking) {}
};

// Launch errors are checked without waiting for the kernel (CUDA_CHECK_LAUNCH synchronises the
// device to find errors, which would do the timer's waiting for it and hide a missing wait).
#define CHECK_ENQUEUED() CUDA_CHECK(cudaGetLastError())

// Work of known duration, and how many times the timer called it.
struct BusyWork {
  double milliseconds;
  int calls = 0;
  EnqueueWork enqueue() {
    return [this](cudaStream_t stream) {
      ++calls;
      enqueue_busy_wait(milliseconds, stream);
      CHECK_ENQUEUED();
    };
  }
};

// The timed work: `work` on the timer's stream, and an 80 ms kernel on `other` beside it.
EnqueueWork beside_80_ms_on(cudaStream_t other, BusyWork& work) {
  return [other, &work](cudaStream_t stream) {
    work.enqueue()(stream);
    enqueue_busy_wait(80.0, other);
    CHECK_ENQUEUED();
  };
}

std::string calls_message(const char* timer, int calls) {
  std::ostringstream out;
  out << timer << " called enqueue " << calls << " times; call it exactly once";
  return out.str();
}

// ---------------------------------------------------------------- the formulas (no GPU needed)

// The formulas' arithmetic is a few roundings (in double, or in float where a student keeps the
// seconds in a float as cudaEventElapsedTime does): a relative tolerance of 1e-6 fits both and
// is far below any mistake of units.
constexpr double kFormulaTolerance = 1e-6;

TEST(BandwidthFormula, TheoreticalFromClockAndBusWidth) {
  // H100 SXM (HBM3): 2619 MHz x 2 x 5120 bits / 8 = 3352.3 GB/s.
  EXPECT_NEAR(theoretical_bandwidth_gbps(2619000, 5120), 3352.32, kFormulaTolerance * 3352.32)
      << "memory clock 2619000 kHz, 5120-bit bus: clock in Hz x 2 transfers per clock x bus width in bytes / 1e9 "
         "(TODO(5))";
  // A 256-bit bus at 1750 MHz: 112 GB/s.
  EXPECT_NEAR(theoretical_bandwidth_gbps(1750000, 256), 112.0, kFormulaTolerance * 112.0)
      << "memory clock 1750000 kHz, 256-bit bus (TODO(5))";
  EXPECT_EQ(theoretical_bandwidth_gbps(0, 5120), 0.0) << "a clock of 0 (not reported) should give 0";
  EXPECT_EQ(theoretical_bandwidth_gbps(2619000, 0), 0.0) << "a bus width of 0 should give 0";
  EXPECT_EQ(theoretical_bandwidth_gbps(-2619000, 5120), 0.0) << "a negative clock is not positive: 0 (TODO(5))";
  EXPECT_EQ(theoretical_bandwidth_gbps(2619000, -5120), 0.0) << "a negative bus width is not positive: 0 (TODO(5))";
}

TEST(BandwidthFormula, EffectiveFromBytesAndTime) {
  EXPECT_NEAR(effective_bandwidth_gbps(1e9, 1e9, 1000.0), 2.0, kFormulaTolerance * 2.0)
      << "1 GB read and 1 GB written in 1 s: (read + written) / 1e9 / seconds (TODO(6))";
  // A 8192 x 8192 float transpose (256 MiB read, 256 MiB written) in 0.2 ms... would be 2684 GB/s.
  const double bytes = 8192.0 * 8192.0 * 4.0;
  EXPECT_NEAR(effective_bandwidth_gbps(bytes, bytes, 0.2), 2684.35456, kFormulaTolerance * 2684.35456)
      << "the time is in milliseconds: divide by 1000 to get seconds (TODO(6))";
  EXPECT_NEAR(effective_bandwidth_gbps(bytes, 0, 0.1), 2684.35456, kFormulaTolerance * 2684.35456)
      << "a read-only kernel (TODO(6))";
  EXPECT_EQ(effective_bandwidth_gbps(bytes, bytes, 0.0), 0.0) << "no time measured: return 0, not infinity";
  EXPECT_EQ(effective_bandwidth_gbps(bytes, bytes, -0.2), 0.0) << "a negative time is not positive: return 0 (TODO(6))";
}

// Any positive clock and bus width count exactly: a clock that is not a whole number of MHz (or
// kHz), a bus that is not a whole number of bytes (integer division by 8 loses it), the largest
// int bus width (int arithmetic on it overflows), a huge clock (float arithmetic overflows).
TEST(BandwidthFormula, TheoreticalOfAnyPositiveInputs) {
  const struct {
    double khz;
    int bits;
    double gbps;
    const char* what;
  } cases[] = {
      {1593750, 5120, 2040.0, "a clock of 1593.75 MHz (not a whole number of MHz: keep the kHz as a double)"},
      {1.5, 8, 3e-6, "a clock of 1.5 kHz (not a whole number of kHz)"},
      {0.5, 8, 1e-6, "a clock of 0.5 kHz (below 1 kHz, still positive: every clock above 0 counts)"},
      {1e-300, 8, 2e-306, "a clock of 1e-300 kHz (tiny, still positive)"},
      {1e6, 12, 3.0, "a 12-bit bus: 1.5 bytes (bits / 8 in integers gives 1; divide by 8.0)"},
      {1e6, 1, 0.25, "a 1-bit bus: 0.125 bytes (bits / 8 in integers gives 0; divide by 8.0)"},
      {1e6, 2147483647, 536870911.75, "the largest int bus width (2 x bits in int overflows; compute in double)"},
      {1e300, 5120, 1.28e297, "a clock of 1e300 kHz (a float overflows; compute in double)"},
  };
  for (const auto& c : cases) {
    const double got = theoretical_bandwidth_gbps(c.khz, c.bits);
    EXPECT_NEAR(got, c.gbps, kFormulaTolerance * c.gbps)
        << "theoretical_bandwidth_gbps(" << c.khz << " kHz, " << c.bits << " bits) returned " << got << ", not "
        << c.gbps << ": " << c.what << " (TODO(5))";
  }
}

// 0 for every input that is not a positive finite number. A check `x <= 0` lets NaN through
// (every comparison with NaN is false) and infinity too.
TEST(BandwidthFormula, TheoreticalIsZeroForInputsNotPositiveAndFinite) {
  ASSERT_NEAR(theoretical_bandwidth_gbps(1750000, 256), 112.0, kFormulaTolerance * 112.0)
      << "theoretical_bandwidth_gbps(1750000 kHz, 256 bits) should be 112 GB/s: the formula first (TODO(5))";
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const struct {
    double khz;
    int bits;
    const char* what;
  } cases[] = {
      {nan, 5120, "a NaN clock (x <= 0 is false for NaN: test !(x > 0) or std::isfinite)"},
      {inf, 5120, "an infinite clock (not finite: std::isfinite)"},
      {-inf, 5120, "a clock of -infinity"},
      {0.0, 5120, "a clock of 0"},
      {-0.0, 5120, "a clock of -0"},
      {-1e-300, 5120, "a tiny negative clock"},
      {2619000, 0, "a bus width of 0"},
      {2619000, -1, "a bus width of -1"},
      {2619000, std::numeric_limits<int>::min(), "a bus width of INT_MIN"},
      {nan, -8, "a NaN clock and a negative bus width"},
  };
  for (const auto& c : cases) {
    const double got = theoretical_bandwidth_gbps(c.khz, c.bits);
    EXPECT_EQ(got, 0.0) << "theoretical_bandwidth_gbps(" << c.khz << " kHz, " << c.bits << " bits) returned " << got
                        << ": " << c.what << " is not a positive finite input, so the answer is 0 (TODO(5))";
  }
}

// Huge byte counts, with times from a microsecond to a quarter of an hour, and no bytes at all.
TEST(BandwidthFormula, EffectiveOfHugeByteCounts) {
  const struct {
    double read, written, ms, gbps;
    const char* what;
  } cases[] = {
      {1e300, 1e300, 1e3, 2e291, "1e300 bytes each way in 1 s (a float overflows: compute in double)"},
      {1e300, 0, 1e-3, 1e297, "1e300 bytes read in a microsecond"},
      {0, 1e300, 1e6, 1e288, "1e300 bytes written in 1000 s"},
      {1, 0, 1e6, 1e-12, "1 byte in 1000 s"},
      {2.5, 0.5, 1e-3, 3e-3, "3 bytes in a microsecond"},
  };
  for (const auto& c : cases) {
    const double got = effective_bandwidth_gbps(c.read, c.written, c.ms);
    EXPECT_NEAR(got, c.gbps, kFormulaTolerance * c.gbps)
        << "effective_bandwidth_gbps(" << c.read << ", " << c.written << ", " << c.ms << " ms) returned " << got
        << ", not " << c.gbps << ": " << c.what << " (TODO(6))";
  }
  EXPECT_EQ(effective_bandwidth_gbps(0, 0, 5.0), 0.0) << "no bytes moved in 5 ms: 0 GB/s (TODO(6))";
}

// 0 unless the time is positive and finite and both byte counts are finite and not negative.
TEST(BandwidthFormula, EffectiveIsZeroForInputsOutsideItsDomain) {
  ASSERT_NEAR(effective_bandwidth_gbps(1e9, 1e9, 1000.0), 2.0, kFormulaTolerance * 2.0)
      << "effective_bandwidth_gbps(1e9, 1e9, 1000 ms) should be 2 GB/s: the formula first (TODO(6))";
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const struct {
    double read, written, ms;
    const char* what;
  } cases[] = {
      {1e9, 1e9, nan, "a NaN time (ms <= 0 is false for NaN: test !(ms > 0) or std::isfinite)"},
      {1e9, 1e9, inf, "an infinite time"},
      {1e9, 1e9, -inf, "a time of -infinity"},
      {1e9, 1e9, -0.0, "a time of -0"},
      {1e9, 1e9, -1e-300, "a tiny negative time"},
      {nan, 1e9, 1000.0, "a NaN byte count read"},
      {1e9, nan, 1000.0, "a NaN byte count written"},
      {inf, 1e9, 1000.0, "an infinite byte count read"},
      {1e9, inf, 1000.0, "an infinite byte count written"},
      {-inf, 1e9, 1000.0, "a byte count of -infinity"},
      {-1.0, 1e9, 1000.0, "a negative byte count read"},
      {1e9, -1.0, 1000.0, "a negative byte count written"},
  };
  for (const auto& c : cases) {
    const double got = effective_bandwidth_gbps(c.read, c.written, c.ms);
    EXPECT_EQ(got, 0.0) << "effective_bandwidth_gbps(" << c.read << ", " << c.written << ", " << c.ms
                        << " ms) returned " << got << ": " << c.what
                        << " is outside the formula's domain, so the answer is 0 (TODO(6))";
  }
}

// ---------------------------------------------------------------- both timers, call after call

// Each call times only its own work, on the stream it is given: a non-blocking stream first, then
// the legacy default stream 0 with other work; enqueue is called exactly once each time, with the
// timer's stream. Kills a stream or a time kept from the first call, a timer that ignores stream 0
// (if (!stream) ...), and a second call of enqueue.
template <class Timer>
void expect_each_call_times_its_own_stream(Timer timer, const char* name, double slack_ms) {
  struct Call {
    cudaStream_t stream;
    double milliseconds;
    const char* which;
  };
  Stream stream;
  // The longest work first: a start kept from the first call then adds 30 ms to the next ones,
  // more than the slack.
  for (const Call& call : {Call{stream.get(), 30.0, "a non-blocking stream"},
                           Call{cudaStream_t{0}, 4.0, "the legacy default stream 0"},
                           Call{stream.get(), 2.0, "the non-blocking stream again"}}) {
    SCOPED_TRACE(std::string(name) + " on " + call.which + ", " + std::to_string(call.milliseconds) + " ms of work");
    BusyWork work{call.milliseconds};
    cudaStream_t given = reinterpret_cast<cudaStream_t>(-1);
    const EnqueueWork enqueue = [&](cudaStream_t s) {
      given = s;
      work.enqueue()(s);
    };
    const double ms = timer(enqueue, call.stream);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(work.calls, 1) << calls_message(name, work.calls);
    EXPECT_EQ(given, call.stream) << name << " called enqueue with stream " << given << ", not with the stream it was "
                                  << "given (" << call.stream << "): the work goes where the caller says (TODO(2), TODO(3))";
    EXPECT_GE(ms, 0.95 * call.milliseconds) << name << " returned " << ms << " ms for a kernel that runs "
                                            << call.milliseconds << " ms on " << call.which;
    EXPECT_LE(ms, call.milliseconds + slack_ms) << name << " returned " << ms << " ms for a kernel that runs "
                                                << call.milliseconds << " ms on " << call.which
                                                << ": does it keep something from an earlier call?";
  }
}

TEST(HostTimer, EachCallTimesItsOwnStream) {
  COURSE_REQUIRE_TIMING();
  expect_each_call_times_its_own_stream(host_elapsed_ms, "host_elapsed_ms", 20.0);
}

TEST(EventTimer, EachCallTimesItsOwnStream) {
  COURSE_REQUIRE_TIMING();
  expect_each_call_times_its_own_stream(event_elapsed_ms, "event_elapsed_ms", 5.0);
}

// ---------------------------------------------------------------- the host timer

TEST(HostTimer, WaitsForTheWork) {
  COURSE_REQUIRE_TIMING();
  Stream stream;
  BusyWork work{20.0};
  const double ms = host_elapsed_ms(work.enqueue(), stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(work.calls, 1) << calls_message("host_elapsed_ms", work.calls);
  EXPECT_GE(ms, 19.5) << "host_elapsed_ms returned " << ms << " ms for a kernel that runs 20 ms: a launch returns "
                      << "before the kernel has run, so wait for the stream before reading the clock again (TODO(2))";
  EXPECT_LE(ms, 40.0) << "host_elapsed_ms returned " << ms << " ms for a kernel that runs 20 ms";
}

TEST(HostTimer, LeavesEarlierWorkOut) {
  COURSE_REQUIRE_TIMING();
  Stream stream;
  enqueue_busy_wait(60.0, stream);  // already on the stream: not part of what is timed
  CHECK_ENQUEUED();
  BusyWork work{10.0};
  const double ms = host_elapsed_ms(work.enqueue(), stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_GE(ms, 9.5) << "host_elapsed_ms returned " << ms << " ms for a kernel that runs 10 ms (TODO(2))";
  EXPECT_LE(ms, 35.0) << "host_elapsed_ms returned " << ms << " ms for 10 ms of work: it counted the 60 ms kernel "
                      << "that was on the stream before; wait for the stream before starting the clock (TODO(1))";
}

// The host side of the call counts: enqueue spends 30 ms on the host (a sleep, which takes no
// processor time) before it launches 10 ms of work. A timer that starts its clock after enqueue,
// or reads processor time (std::clock) instead of a clock on the wall, leaves the 30 ms out.
TEST(HostTimer, CountsTheHostSideOfEnqueue) {
  COURSE_REQUIRE_TIMING();
  Stream stream;
  BusyWork work{10.0};
  const EnqueueWork slow_to_enqueue = [&work](cudaStream_t s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    work.enqueue()(s);
  };
  const double ms = host_elapsed_ms(slow_to_enqueue, stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_GE(ms, 38.0) << "host_elapsed_ms returned " << ms << " ms for a call whose enqueue spends 30 ms on the host and "
                      << "then launches 10 ms of work: start the clock before calling enqueue, and read a clock on the "
                      << "wall (std::chrono::steady_clock), not processor time (std::clock) (TODO(1), TODO(2))";
  EXPECT_LE(ms, 70.0) << "host_elapsed_ms returned " << ms << " ms for 40 ms of work";
}

// Work already running on another stream when the timer is called is not the timer's to wait
// for: a timer that synchronises the whole device before it starts returns the right number,
// but only after the other stream is done.
template <class Timer>
void expect_no_wait_for_other_streams(Timer timer, const char* name) {
  Stream stream, other;
  enqueue_busy_wait(80.0, other);
  CHECK_ENQUEUED();
  BusyWork work{10.0};
  const auto started = std::chrono::steady_clock::now();
  const double ms = timer(work.enqueue(), stream);
  const double took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_GE(ms, 9.5) << name << " returned " << ms << " ms for a kernel that runs 10 ms";
  EXPECT_LE(took, 50.0) << name << " took " << took << " ms to time 10 ms of work: it waited for an 80 ms kernel that "
                        << "was running on another stream when it was called (a device-wide synchronisation?). Wait "
                        << "for the stream you are given, cudaStreamSynchronize or cudaEventSynchronize (TODO(1)-(4))";
}

TEST(HostTimerTechnique, DoesNotWaitForOtherStreamsFirst) {
  COURSE_REQUIRE_TIMING();
  expect_no_wait_for_other_streams(host_elapsed_ms, "host_elapsed_ms");
}

TEST(EventTimerTechnique, DoesNotWaitForOtherStreamsFirst) {
  COURSE_REQUIRE_TIMING();
  expect_no_wait_for_other_streams(event_elapsed_ms, "event_elapsed_ms");
}

// ---------------------------------------------------------------- the event timer

TEST(EventTimer, MeasuresTheWork) {
  COURSE_REQUIRE_TIMING();
  Stream stream;
  BusyWork work{20.0};
  const float ms = event_elapsed_ms(work.enqueue(), stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(work.calls, 1) << calls_message("event_elapsed_ms", work.calls);
  EXPECT_GE(ms, 19.5f) << "event_elapsed_ms returned " << ms << " ms for a kernel that runs 20 ms: record an event "
                       << "on the stream before and after the work (TODO(3)) and read cudaEventElapsedTime (TODO(4))";
  EXPECT_LE(ms, 25.0f) << "event_elapsed_ms returned " << ms << " ms for a kernel that runs 20 ms";
}

TEST(EventTimer, ResolvesShortWork) {
  COURSE_REQUIRE_TIMING();
  Stream stream;
  BusyWork work{0.5};
  const float ms = event_elapsed_ms(work.enqueue(), stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_GE(ms, 0.45f) << "event_elapsed_ms returned " << ms << " ms for a kernel that runs 0.5 ms (TODO(3), TODO(4))";
  EXPECT_LE(ms, 2.0f) << "event_elapsed_ms returned " << ms << " ms for a kernel that runs 0.5 ms: events time the "
                      << "GPU's work, to about a microsecond; host overhead should not be in it";
}

TEST(EventTimer, LeavesEarlierWorkOut) {
  COURSE_REQUIRE_TIMING();
  Stream stream;
  enqueue_busy_wait(60.0, stream);
  CHECK_ENQUEUED();
  BusyWork work{10.0};
  const float ms = event_elapsed_ms(work.enqueue(), stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_GE(ms, 9.5f) << "event_elapsed_ms returned " << ms << " ms for a kernel that runs 10 ms (TODO(3), TODO(4))";
  EXPECT_LE(ms, 15.0f) << "event_elapsed_ms returned " << ms << " ms for 10 ms of work: it counted the 60 ms kernel "
                       << "that was on the stream before; record the first event on the stream (TODO(3))";
}

// Rule: the event timer's number is the time between two events recorded on `stream` around the
// work, read with cudaEventElapsedTime, and the events are destroyed before it returns. Checked
// from the runtime calls it made: a timer that returns a host clock's time (right to within a
// few microseconds here), or leaks two events per call, passes the timing tests.
TEST(EventTimerTechnique, ReadsEventsRecordedAroundTheWorkAndDestroysThem) {
  COURSE_REQUIRE_ACTIVITY();
  Stream stream;
  BusyWork work{2.0};
  float ms = 0;
  const auto ran = course::record_activity([&] { ms = event_elapsed_ms(work.enqueue(), stream); });
  CUDA_CHECK(cudaDeviceSynchronize());
  ASSERT_EQ(work.calls, 1) << calls_message("event_elapsed_ms", work.calls);
  // Where the work was enqueued, and each event's last record before or after it.
  std::size_t work_at = ran.calls.size();
  for (std::size_t i = 0; i < ran.calls.size(); ++i)
    if (ran.calls[i].name == "cudaLaunchKernel" && ran.calls[i].kernel.find("busy_wait_kernel") != std::string::npos)
      work_at = std::min(work_at, i);
  ASSERT_LT(work_at, ran.calls.size()) << "the work's launch was not among the runtime calls recorded\n"
                                       << ran.calls_summary();
  const auto recorded_on_stream = [&](const void* event, bool before) {
    for (std::size_t i = 0; i < ran.calls.size(); ++i) {
      const auto& c = ran.calls[i];
      if ((c.name == "cudaEventRecord" || c.name == "cudaEventRecordWithFlags") && c.object == event &&
          c.stream == static_cast<const void*>(stream.get()) && c.result == cudaSuccess && (before ? i < work_at : i > work_at))
        return true;
    }
    return false;
  };
  bool read = false, returned = false, around = false;
  const void* start = nullptr;
  const void* end = nullptr;
  for (const auto& c : ran.calls_named("cudaEventElapsedTime")) {
    if (c.result != cudaSuccess) continue;
    read = true;
    if (static_cast<float>(c.value) != ms) continue;
    returned = true;
    if (recorded_on_stream(c.object, true) && recorded_on_stream(c.other, false)) {
      around = true;
      start = c.object, end = c.other;
    }
  }
  ASSERT_TRUE(read) << "event_elapsed_ms never read cudaEventElapsedTime: its number does not come from events "
                    << "(TODO(4))\n" << ran.calls_summary();
  ASSERT_TRUE(returned) << "event_elapsed_ms returned " << ms << " ms, which is not what cudaEventElapsedTime gave it: "
                        << "return the time between the events (TODO(4))\n" << ran.calls_summary();
  ASSERT_TRUE(around) << "the events that event_elapsed_ms read were not recorded on the stream it was given, the "
                      << "first before enqueue and the second after it (TODO(3))\n" << ran.calls_summary();
  for (const void* event : {start, end}) {
    bool destroyed = false;
    for (const auto& c : ran.calls_named("cudaEventDestroy")) destroyed = destroyed || (c.object == event && c.result == cudaSuccess);
    EXPECT_TRUE(destroyed) << "event_elapsed_ms did not destroy event " << event << " before returning: every call "
                           << "leaks it (cudaEventDestroy, TODO(4))\n" << ran.calls_summary();
  }
}

// Rule: only the work on `stream` counts; another stream's work, running at the same time,
// must not. Synchronising the whole device, or recording on another stream, breaks it.
TEST(HostTimerTechnique, OtherStreamsDoNotCount) {
  COURSE_REQUIRE_TIMING();
  Stream stream;
  Stream other;
  BusyWork work{10.0};
  const EnqueueWork with_other = beside_80_ms_on(other, work);
  const double ms = host_elapsed_ms(with_other, stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_GE(ms, 9.5) << "host_elapsed_ms returned " << ms << " ms for a kernel that runs 10 ms (TODO(2))";
  EXPECT_LE(ms, 50.0) << "host_elapsed_ms returned " << ms << " ms for 10 ms of work on its stream: it waited for "
                      << "an 80 ms kernel on another stream. Synchronise the stream you are given "
                      << "(cudaStreamSynchronize), not the whole device (TODO(1), TODO(2))";
}

TEST(EventTimerTechnique, OtherStreamsDoNotCount) {
  COURSE_REQUIRE_TIMING();
  Stream stream;
  Stream other;
  BusyWork work{10.0};
  const EnqueueWork with_other = beside_80_ms_on(other, work);
  const float ms = event_elapsed_ms(with_other, stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_GE(ms, 9.5f) << "event_elapsed_ms returned " << ms << " ms for a kernel that runs 10 ms (TODO(3), TODO(4))";
  EXPECT_LE(ms, 15.0f) << "event_elapsed_ms returned " << ms << " ms for 10 ms of work on its stream: it included "
                       << "an 80 ms kernel on another stream. Record both events on the stream you are given "
                       << "and take the time between them (TODO(3), TODO(4))";
}

// ---------------------------------------------------------------- the formulas on this GPU

// The device's own numbers: a device-to-device copy, timed with the solution's formula, reaches
// most of the theoretical bandwidth and never more.
TEST(BandwidthPerf, CopyStaysBelowTheTheoreticalBandwidth) {
  COURSE_REQUIRE_TIMING();
  const auto& device = course::current_device();
  if (device.memory_clock_khz <= 0 || device.memory_bus_bits <= 0) {
    GTEST_SKIP() << "this driver does not report the memory clock (cudaDevAttrMemoryClockRate = "
                 << device.memory_clock_khz << "); take it from nvidia-smi -q -d CLOCK (Max Clocks, Memory) "
                 << "or the GPU's data sheet, as chapter 01's text says";
  }
  const double theoretical = theoretical_bandwidth_gbps(device.memory_clock_khz, device.memory_bus_bits);
  ASSERT_NEAR(theoretical, course::theoretical_dram_gbps(device), 1e-6 * course::theoretical_dram_gbps(device))
      << "theoretical_bandwidth_gbps(" << device.memory_clock_khz << " kHz, " << device.memory_bus_bits
      << " bits) = " << theoretical << " GB/s (TODO(5))";

  const std::size_t count = std::size_t{256} << 20;  // 1 GiB of floats each way: far past the L2
  course::DeviceBuffer<float> source(count);
  course::DeviceBuffer<float> target(count);
  CUDA_CHECK(cudaMemset(source.data(), 0, source.bytes()));
  Stream stream;
  auto copy = [&](cudaStream_t s) {
    CUDA_CHECK(cudaMemcpyAsync(target.data(), source.data(), source.bytes(), cudaMemcpyDeviceToDevice, s));
  };
  float best = 1e30f;
  {
    const course::ExclusiveGpuTurn alone;  // the GPU to itself while it is timed (course/gpu_turn.h)
    (void)event_elapsed_ms(copy, stream);  // warm-up
    for (int run = 0; run < 5; ++run) best = std::min(best, event_elapsed_ms(copy, stream));
  }
  const double effective = effective_bandwidth_gbps(static_cast<double>(source.bytes()),
                                                    static_cast<double>(target.bytes()), best);
  std::cout << "[  PERF    ] device-to-device copy " << effective << " GB/s, theoretical " << theoretical
            << " GB/s (" << effective / theoretical << " of it)\n";
  EXPECT_GT(effective, 0.3 * theoretical)
      << "the copy reached only " << effective << " GB/s of the theoretical " << theoretical
      << " GB/s: check effective_bandwidth_gbps (TODO(6)) and event_elapsed_ms (TODO(3), TODO(4))";
  EXPECT_LE(effective, 1.02 * theoretical)
      << "the copy reached " << effective << " GB/s, more than the theoretical " << theoretical
      << " GB/s: a formula or a timer is wrong (TODO(4)-(6))";
}

}  // namespace

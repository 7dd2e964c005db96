/// @file measuring.h
/// @brief Chapter 01 contract: timing enqueued GPU work, and the two bandwidth formulas.
///
/// Exercises (in measuring.cu): a host timer and an event timer for work enqueued on a stream,
/// the theoretical DRAM bandwidth from the memory clock and bus width, and the effective
/// bandwidth of a kernel or copy from the bytes it moved and its time.
///
/// **Rules** (checked by the `...Technique` tests from what the timers measure):
/// - Both timers measure only the work that `enqueue` puts on `stream`: work enqueued earlier,
///   and work on other streams, must not count, and must not be waited for. So synchronise
///   `stream` (not the whole device) before starting and after the work, or record events on
///   `stream` (HostTimer.LeavesEarlierWorkOut, EventTimer.LeavesEarlierWorkOut,
///   HostTimerTechnique.OtherStreamsDoNotCount, EventTimerTechnique.OtherStreamsDoNotCount,
///   HostTimerTechnique.DoesNotWaitForOtherStreamsFirst,
///   EventTimerTechnique.DoesNotWaitForOtherStreamsFirst).
/// - `host_elapsed_ms` reads a clock on the wall (std::chrono::steady_clock), started before
///   `enqueue` is called (HostTimer.CountsTheHostSideOfEnqueue); `event_elapsed_ms` returns what
///   cudaEventElapsedTime reads from two events recorded on `stream`, one before `enqueue` and
///   one after, and destroys them (EventTimer.MeasuresTheWork, EventTimer.ResolvesShortWork,
///   EventTimerTechnique.ReadsEventsRecordedAroundTheWorkAndDestroysThem).
/// - No GPU library; only the CUDA runtime (CodePolicy).
///
/// **Performance** (BandwidthPerf.CopyStaysBelowTheTheoreticalBandwidth): with your timers and
/// formulas, a device-to-device copy's effective bandwidth lies between 0.3 and 1.02 times the
/// theoretical bandwidth of your formula.
#pragma once

#include <cuda_runtime.h>

#include <functional>

/// The work to time: a function that enqueues kernels or copies on the stream it is given.
using EnqueueWork = std::function<void(cudaStream_t)>;

/// Milliseconds, on a host clock, from the moment `stream` is idle until the work that
/// `enqueue(stream)` puts on it has finished; the time `enqueue` itself spends on the host counts.
/// Call `enqueue` exactly once, with `stream`. `stream` may be any stream of the current device
/// or 0, the legacy default stream; each call times only its own work, whatever earlier calls
/// timed (HostTimer.EachCallTimesItsOwnStream).
double host_elapsed_ms(const EnqueueWork& enqueue, cudaStream_t stream);

/// Milliseconds between two CUDA events recorded on `stream` around the work of
/// `enqueue(stream)`. Call `enqueue` exactly once, with `stream`; destroy the events before
/// returning. Streams and repeated calls as for host_elapsed_ms
/// (EventTimer.EachCallTimesItsOwnStream).
float event_elapsed_ms(const EnqueueWork& enqueue, cudaStream_t stream);

/// Theoretical DRAM bandwidth in GB/s (10^9 bytes per second) of a memory whose clock is
/// `memory_clock_khz` kHz and whose bus is `bus_width_bits` bits wide, transferring on both
/// edges of the clock (double data rate): kHz x 10^3 x 2 x bits / 8 / 10^9 in double, within
/// 1e-6 relative, for any positive clock (not only whole MHz or kHz) and any positive bus width
/// up to INT_MAX (not only multiples of 8); a clock up to 1e300 kHz on a bus up to 8192 bits gives
/// the finite value (BandwidthFormula.TheoreticalFromClockAndBusWidth,
/// BandwidthFormula.TheoreticalOfAnyPositiveInputs). Returns 0 unless both inputs are positive
/// and finite: 0 for 0, negative, NaN or +/-infinity
/// (BandwidthFormula.TheoreticalIsZeroForInputsNotPositiveAndFinite).
double theoretical_bandwidth_gbps(double memory_clock_khz, int bus_width_bits);

/// Effective bandwidth in GB/s of work that read `bytes_read` and wrote `bytes_written` bytes
/// in `milliseconds` milliseconds: (read + written) / 10^9 / (ms / 10^3), in double, within 1e-6
/// relative (the time may pass through a float, as cudaEventElapsedTime keeps it). Byte counts
/// from 0 up to 1e300 each, with times from 1e-3 to 1e6 ms, give the finite value
/// (BandwidthFormula.EffectiveFromBytesAndTime, BandwidthFormula.EffectiveOfHugeByteCounts).
/// Returns 0 unless `milliseconds` is positive and finite and both byte counts are finite and not
/// negative: 0 for a time of 0, a negative value, NaN or +/-infinity in any input
/// (BandwidthFormula.EffectiveIsZeroForInputsOutsideItsDomain).
double effective_bandwidth_gbps(double bytes_read, double bytes_written, double milliseconds);

/// Given: enqueues on `stream` one kernel that runs for `milliseconds` (it reads the GPU's
/// global timer until that much time has passed): work of known duration to time.
void enqueue_busy_wait(double milliseconds, cudaStream_t stream);

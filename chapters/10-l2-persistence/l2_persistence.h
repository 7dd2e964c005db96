/// @file l2_persistence.h
/// @brief Chapter 10 contract: an L2 access-policy window for a buffer that is read again and
/// again while other data streams through the cache.
///
/// **Rules** (checked by the `...Technique` tests from the stream's attributes and the device's
/// limit after your calls, and from the runtime calls you made):
/// - The persisting carve-out is set with cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize) at
///   every call, never larger than the device allows; the window is set on the given stream only,
///   no other and no default stream (PersistingWindowTechnique.SetOnTheStreamAndClearedAfterwards,
///   RepeatedWindowTechnique.EveryCallSetsItsOwnCarveOut).
/// - The carve-out set is the plan's, never larger: compared with what the driver keeps when
///   the plan's own carve-out is set, since it may round the limit
///   (PersistingCarveOutTechnique.NoLargerThanThePlan).
/// - After `clear_persisting_window` the stream has no window and the carve-out is 0 again:
///   later work must not inherit a shrunken L2
///   (PersistingWindowTechnique.SetOnTheStreamAndClearedAfterwards), and the lines that
///   persisted are released with cudaCtxResetPersistingL2Cache (nothing outside the call sees
///   it, so it is checked from the runtime calls:
///   ClearPersistingWindowTechnique.ReleasesThePersistingLines).
/// - The window makes the work no slower than without it (PersistingWindowPerf).
/// - Only the CUDA runtime (CodePolicy).
///
/// **Performance**, ratios to a baseline measured in the same process, as the chapter's README
/// explains (an instructor may scale the bars: COURSE_PERF_SCALE): the given kernel with your
/// window at least 0.95 of its rate without one (PersistingWindowPerf.NoSlowerThanWithoutAWindow).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// What a persisting window is made of.
struct L2WindowPlan {
  std::size_t carve_out_bytes = 0;  ///< the L2 set aside for persisting lines
  std::size_t window_bytes = 0;     ///< the window's num_bytes
  float hit_ratio = 0.0f;           ///< the share of the window's lines that persist
};

/// The plan for a hot buffer of `hot_bytes` on a device with `l2_bytes` of L2
/// (cudaDevAttrL2CacheSize), whose persisting carve-out may be at most `max_persisting_bytes`
/// (cudaDevAttrMaxPersistingL2CacheSize) and whose window at most `max_window_bytes`
/// (cudaDevAttrMaxAccessPolicyWindowSize):
/// - carve-out = min(hot, max persisting, L2 / 2): as large as the hot buffer, but never more
///   than allowed, and never more than half the L2 (on the H100 a larger carve-out slowed the
///   rest of the traffic down by 20 to 50 %, see the chapter's text);
/// - window = min(hot, max window): it covers the hot buffer, but no more than allowed;
/// - hit ratio = min(1, carve-out / window): the share of the window that fits in the
///   carve-out, so that persisting lines do not evict each other.
/// An empty plan (all 0) when any input is 0. Any sizes up to SIZE_MAX, without overflow (an
/// L2 of 1 byte plans a carve-out of 0 and a hit ratio of 0). Checked at each limit and one byte
/// over it, with every argument 0 and SIZE_MAX in turn (PlanPersistingWindow).
L2WindowPlan plan_persisting_window(std::size_t hot_bytes, std::size_t max_persisting_bytes,
                                    std::size_t max_window_bytes, std::size_t l2_bytes);

/// Makes the L2 keep `hot` (hot_bytes long) for the work on `stream`: sets the carve-out and a
/// window on `stream` (persisting hits, streaming misses) as `plan_persisting_window` plans for
/// this device. Returns the plan used. Any hot_bytes from 1 byte on gets its window
/// (SmallWindowTechnique).
L2WindowPlan set_persisting_window(cudaStream_t stream, const void* hot, std::size_t hot_bytes);

/// Undoes `set_persisting_window`: no window on `stream`, persisting lines back to normal
/// (cudaCtxResetPersistingL2Cache), carve-out 0.
void clear_persisting_window(cudaStream_t stream);

/// Given: out[i] = in[i] + hot[i % hot_count] for i < stream_count: the hot table is swept again
/// and again while `in` and `out` stream through the L2 once. Needs hot_count <= stream_count
/// < 2^32 - 2^24 (32-bit indices); throws std::invalid_argument otherwise.
void enqueue_hot_and_streaming(const float* hot, std::size_t hot_count, const float* in, float* out,
                               std::size_t stream_count, cudaStream_t stream);

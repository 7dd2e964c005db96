/// @file l2_persistence.h
/// @brief Chapter 10 contract: an L2 access-policy window for a buffer that is read again and
/// again while other data streams through the cache.
///
/// **Rules** (checked by the `...Technique` tests from the stream's attributes and the device's
/// limit after your calls):
/// - The persisting carve-out is set with cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize),
///   never larger than the device allows; the window is set on the given stream only.
/// - After `clear_persisting_window` the stream has no window, persisting lines are released and
///   the carve-out is 0 again: later work must not inherit a shrunken L2.
/// - Only the CUDA runtime.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// What a persisting window is made of.
struct L2WindowPlan {
  std::size_t carve_out_bytes = 0;  ///< the L2 set aside for persisting lines
  std::size_t window_bytes = 0;     ///< the window's num_bytes
  float hit_ratio = 0.0f;           ///< the share of the window's lines that persist
};

/// The plan for a hot buffer of `hot_bytes`, on a device whose persisting carve-out may be at
/// most `max_persisting_bytes` (cudaDevAttrMaxPersistingL2CacheSize) and whose window at most
/// `max_window_bytes` (cudaDevAttrMaxAccessPolicyWindowSize): the carve-out is as large as the
/// hot buffer but no larger than allowed; the window covers the hot buffer but no more than
/// allowed; the hit ratio is the share of the window that fits in the carve-out (at most 1), so
/// that persisting lines do not evict each other. An empty plan (all 0) when any input is 0.
L2WindowPlan plan_persisting_window(std::size_t hot_bytes, std::size_t max_persisting_bytes,
                                    std::size_t max_window_bytes);

/// Makes the L2 keep `hot` (hot_bytes long) for the work on `stream`: sets the carve-out and a
/// window on `stream` (persisting hits, streaming misses) as `plan_persisting_window` plans for
/// this device. Returns the plan used.
L2WindowPlan set_persisting_window(cudaStream_t stream, const void* hot, std::size_t hot_bytes);

/// Undoes `set_persisting_window`: no window on `stream`, persisting lines back to normal
/// (cudaCtxResetPersistingL2Cache), carve-out 0.
void clear_persisting_window(cudaStream_t stream);

/// Given: `rounds` passes over `hot` (hot_count floats, gathered by a pseudo-random index) while
/// streaming `stream_count` floats from `in` to `out`; out[i] = in[i] + hot[index(i)].
void enqueue_hot_and_streaming(const float* hot, std::size_t hot_count, const float* in, float* out,
                               std::size_t stream_count, cudaStream_t stream);

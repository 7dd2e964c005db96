// Chapter 10 exercise: an L2 access-policy window for a hot buffer.
// Edit this file only. Read README.md beside it first; the tests are in tests/10-l2-persistence.
//
//   ctest --preset student -R 10-l2-persistence     (after: cmake --workflow --preset grade)
#include "l2_persistence.h"

L2WindowPlan plan_persisting_window(std::size_t hot_bytes, std::size_t max_persisting_bytes,
                                    std::size_t max_window_bytes, std::size_t l2_bytes) {
  L2WindowPlan plan;
  // TODO(1): An empty plan if any input is 0. Else: carve-out = min(hot, max persisting, L2 / 2);
  //          window = min(hot, max window); hit ratio = min(1, carve-out / window).
  (void)hot_bytes;
  (void)max_persisting_bytes;
  (void)max_window_bytes;
  (void)l2_bytes;
  return plan;
}

L2WindowPlan set_persisting_window(cudaStream_t stream, const void* hot, std::size_t hot_bytes) {
  // TODO(2): Read this device's limits (cudaDevAttrMaxPersistingL2CacheSize,
  //          cudaDevAttrMaxAccessPolicyWindowSize, cudaDevAttrL2CacheSize) and plan with
  //          plan_persisting_window.
  // TODO(3): Set the carve-out: cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, ...).
  // TODO(4): Set the window on `stream`: a cudaStreamAttrValue whose accessPolicyWindow has
  //          base_ptr = hot, num_bytes, hitRatio, hitProp = cudaAccessPropertyPersisting and
  //          missProp = cudaAccessPropertyStreaming; cudaStreamSetAttribute with
  //          cudaStreamAttributeAccessPolicyWindow.
  (void)stream;
  (void)hot;
  (void)hot_bytes;
  return L2WindowPlan{};
}

void clear_persisting_window(cudaStream_t stream) {
  // TODO(5): Set a window of 0 bytes on `stream`, release the persisting lines
  //          (cudaCtxResetPersistingL2Cache) and set the carve-out back to 0.
  (void)stream;
}

// Reference solution of chapter 10: a persisting L2 window sized from the device's limits.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "l2_persistence.h"

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(status));
}

int device_attribute(cudaDeviceAttr attribute) {
  int device = 0;
  int value = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&value, attribute, device), "cudaDeviceGetAttribute");
  return value;
}

}  // namespace

L2WindowPlan plan_persisting_window(std::size_t hot_bytes, std::size_t max_persisting_bytes,
                                    std::size_t max_window_bytes, std::size_t l2_bytes) {
  L2WindowPlan plan;
  if (hot_bytes == 0 || max_persisting_bytes == 0 || max_window_bytes == 0 || l2_bytes == 0) return plan;
  // Half the L2 at most stays for everything else (measured on the H100: more slows it all down).
  plan.carve_out_bytes = std::min({hot_bytes, max_persisting_bytes, l2_bytes / 2});
  plan.window_bytes = std::min(hot_bytes, max_window_bytes);
  // More persisting lines than the carve-out holds would evict each other (thrashing).
  plan.hit_ratio = std::min(1.0f, static_cast<float>(static_cast<double>(plan.carve_out_bytes) / plan.window_bytes));
  return plan;
}

L2WindowPlan set_persisting_window(cudaStream_t stream, const void* hot, std::size_t hot_bytes) {
  const L2WindowPlan plan =
      plan_persisting_window(hot_bytes, static_cast<std::size_t>(device_attribute(cudaDevAttrMaxPersistingL2CacheSize)),
                             static_cast<std::size_t>(device_attribute(cudaDevAttrMaxAccessPolicyWindowSize)),
                             static_cast<std::size_t>(device_attribute(cudaDevAttrL2CacheSize)));
  if (plan.window_bytes == 0) return plan;  // no persisting L2 on this device
  check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, plan.carve_out_bytes), "cudaDeviceSetLimit");
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = const_cast<void*>(hot);
  value.accessPolicyWindow.num_bytes = plan.window_bytes;
  value.accessPolicyWindow.hitRatio = plan.hit_ratio;
  value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  check(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value), "cudaStreamSetAttribute");
  return plan;
}

void clear_persisting_window(cudaStream_t stream) {
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.num_bytes = 0;  // no window: every access is normal again
  check(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value), "cudaStreamSetAttribute");
  check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
  check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), "cudaDeviceSetLimit");
}

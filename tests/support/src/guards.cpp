#include "course/guards.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "course/cuda_check.h"

namespace course {

namespace {
struct GuardedBuffer {
  std::size_t data_bytes;
  std::size_t element_bytes;
  bool on_device;
  std::string name;
};

std::mutex registry_mutex;
std::map<void*, GuardedBuffer>& registry() {
  static std::map<void*, GuardedBuffer> buffers;
  return buffers;
}

unsigned char* after_zone(void* base, const GuardedBuffer& b) {
  return static_cast<unsigned char*>(base) + kGuardBytes + b.data_bytes;
}

void fill(unsigned char* zone, bool on_device) {
  if (on_device)
    CUDA_CHECK(cudaMemset(zone, kGuardByte, kGuardBytes));
  else
    std::memset(zone, kGuardByte, kGuardBytes);
}
}  // namespace

std::string describe_guard_damage(const unsigned char* zone, std::size_t zone_bytes, std::size_t data_bytes,
                                  std::size_t element_bytes, bool after_end, const std::string& name) {
  // Elements are counted from the data's start: negative before it, >= count after it.
  const std::size_t count = data_bytes / element_bytes;
  std::size_t damaged = 0;
  std::size_t nearest = 0, farthest = 0;  // distance in elements from the data's edge, 0-based
  bool any = false;
  for (std::size_t offset = 0; offset < zone_bytes; offset += element_bytes) {
    bool intact = true;
    for (std::size_t k = 0; k < element_bytes && offset + k < zone_bytes; ++k) intact = intact && zone[offset + k] == kGuardByte;
    if (intact) continue;
    // Distance from the edge: after the end, offset 0 is the first element past it; before
    // the start, the last element of the zone is the first before it.
    const std::size_t distance = after_end ? offset / element_bytes : (zone_bytes - offset) / element_bytes - 1;
    if (!any || distance < nearest) nearest = distance;
    if (!any || distance > farthest) farthest = distance;
    any = true;
    ++damaged;
  }
  if (!any) return "";
  std::ostringstream out;
  out << "wrote " << damaged << " element" << (damaged == 1 ? "" : "s") << (after_end ? " past the end of " : " before the start of ")
      << name << " (" << count << " elements of " << element_bytes << " bytes): ";
  if (after_end)
    out << "the first at index " << count + nearest << ", " << nearest << " past the last valid index " << count - 1
        << "; the farthest " << farthest + 1 << " past the end";
  else
    out << "the nearest at index -" << nearest + 1 << ", the farthest at index -" << farthest + 1;
  out << ". Check the bounds test before every store (row < rows, col < cols, i < n).";
  return out.str();
}

void guard_register(void* base, std::size_t data_bytes, std::size_t element_bytes, bool on_device, std::string name) {
  GuardedBuffer b{data_bytes, element_bytes, on_device, std::move(name)};
  fill(static_cast<unsigned char*>(base), on_device);
  fill(after_zone(base, b), on_device);
  if (on_device) CUDA_CHECK(cudaDeviceSynchronize());  // never let the fill race a kernel
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry()[base] = std::move(b);
}

void* guarded_allocate(std::size_t data_bytes, std::size_t element_bytes, bool on_device, const std::string& name) {
  if (data_bytes == 0) return nullptr;
  void* base = nullptr;
  if (on_device)
    CUDA_CHECK(cudaMalloc(&base, data_bytes + 2 * kGuardBytes));
  else
    CUDA_CHECK(cudaMallocHost(&base, data_bytes + 2 * kGuardBytes));
  guard_register(base, data_bytes, element_bytes, on_device, name);
  return static_cast<unsigned char*>(base) + kGuardBytes;
}

void guarded_free(void* data, bool on_device) noexcept {
  if (data == nullptr) return;
  void* base = static_cast<unsigned char*>(data) - kGuardBytes;
  guard_unregister(base);
  if (on_device)
    cudaFree(base);
  else
    cudaFreeHost(base);
}

void guard_unregister(void* base) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry().erase(base);
}

void guard_rename(void* base, std::string name) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto it = registry().find(base);
  if (it != registry().end()) it->second.name = std::move(name);
}

std::string guard_check_all() {
  std::lock_guard<std::mutex> lock(registry_mutex);
  std::string report;
  std::vector<unsigned char> zone(kGuardBytes);
  for (auto& [base, b] : registry()) {
    unsigned char* zones[2] = {static_cast<unsigned char*>(base), after_zone(base, b)};
    for (int side = 0; side < 2; ++side) {
      if (b.on_device)
        CUDA_CHECK(cudaMemcpy(zone.data(), zones[side], kGuardBytes, cudaMemcpyDeviceToHost));
      else
        std::memcpy(zone.data(), zones[side], kGuardBytes);
      const std::string damage =
          describe_guard_damage(zone.data(), kGuardBytes, b.data_bytes, b.element_bytes, side == 1, b.name);
      if (damage.empty()) continue;
      report += (report.empty() ? "" : "\n") + damage;
      fill(zones[side], b.on_device);
    }
  }
  return report;
}

}  // namespace course

#include "course/guards.h"
#include "course/profile.h"

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

// An intact zone, to compare with; and a pinned buffer to read device zones into (a pageable
// read of 1 MiB costs about half a millisecond, and every launch check reads every zone). Both
// live as long as the process: freeing pinned memory after the CUDA runtime's teardown fails.
const unsigned char* intact_zone() {
  static const std::vector<unsigned char> zone(kGuardBytes, kGuardByte);
  return zone.data();
}
unsigned char* staging_zone() {
  static unsigned char* zone = [] {
    void* pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, kGuardBytes));
    return static_cast<unsigned char*>(pinned);
  }();
  return zone;
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
  if (on_device) staging_zone();  // allocated here, never inside a check that CUPTI records
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
  const ProfileScope phase("guard zones: check all");
  std::lock_guard<std::mutex> lock(registry_mutex);
  std::string report;
  for (auto& [base, b] : registry()) {
    unsigned char* zones[2] = {static_cast<unsigned char*>(base), after_zone(base, b)};
    for (int side = 0; side < 2; ++side) {
      const unsigned char* zone = zones[side];
      if (b.on_device) {
        CUDA_CHECK(cudaMemcpy(staging_zone(), zones[side], kGuardBytes, cudaMemcpyDeviceToHost));
        zone = staging_zone();
      }
      if (std::memcmp(zone, intact_zone(), kGuardBytes) == 0) continue;
      const std::string damage =
          describe_guard_damage(zone, kGuardBytes, b.data_bytes, b.element_bytes, side == 1, b.name);
      if (damage.empty()) continue;
      report += (report.empty() ? "" : "\n") + damage;
      fill(zones[side], b.on_device);
    }
  }
  return report;
}

}  // namespace course

#include "course/random.h"
#include "course/profile.h"

#include <algorithm>
#include <random>
#include <thread>
#include <stdexcept>

#include "course/host_memory.h"
#include "course/parallel.h"
#include "course/settings.h"

namespace course {

std::uint64_t parse_seed(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("COURSE_SEED must be a non-negative integer, got '" + text + "'");
  try {
    return std::stoull(text);
  } catch (const std::out_of_range&) {
    throw std::invalid_argument("COURSE_SEED is out of range: '" + text + "'");
  }
}

std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    if (settings().seed) return *settings().seed;
    std::random_device device;
    return (std::uint64_t{device()} << 32) ^ device();
  }();
  return seed;
}

std::string seed_note() {
  const std::string seed = std::to_string(test_seed());
  return "random seed " + seed + " (replay with COURSE_SEED=" + seed + " ctest ..., or --course_seed=" + seed + ")";
}

std::vector<float> random_floats(std::size_t count, std::uint64_t seed, float lo, float hi) {
  const ProfileScope phase("random_floats (host)");
  // splitmix64, the same sequence on every platform: element i comes from the state
  // seed + (i + 1) * golden alone, so large inputs are filled by several threads at once
  // (a 2^28-float input took 1.5 s on one core).
  std::vector<float> values = large_host_vector<float>(count);
  const float scale = (hi - lo) / 16777216.0f;  // 24 random bits -> [0, 1)
  const auto fill = [&](std::size_t begin, std::size_t end) {
    std::uint64_t state = seed + begin * 0x9E3779B97F4A7C15ull;
    for (std::size_t i = begin; i < end; ++i) {
      std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      values[i] = lo + static_cast<float>(z >> 40) * scale;
    }
  };
  for_each_range(count, std::size_t{1} << 22, 16, [&](std::size_t, std::size_t begin, std::size_t end) { fill(begin, end); });
  return values;
}

}  // namespace course

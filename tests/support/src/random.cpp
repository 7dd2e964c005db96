#include "course/random.h"

#include <random>
#include <stdexcept>

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
  // splitmix64: fast enough for 10^8 elements, and the same sequence on every platform.
  std::vector<float> values(count);
  std::uint64_t state = seed;
  const float scale = (hi - lo) / 16777216.0f;  // 24 random bits -> [0, 1)
  for (float& v : values) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v = lo + static_cast<float>(z >> 40) * scale;
  }
  return values;
}

}  // namespace course

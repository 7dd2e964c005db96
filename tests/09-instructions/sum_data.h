// The data of chapter 09's sums and how their results are judged, shared by the tests and the
// calibration program.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace sum_data {

// Neumaier's compensated sum in double: exact to far below a float's last bit. Values can be
// added and taken away one by one (a perf test follows the changes of its input so).
struct NeumaierSum {
  double sum = 0.0, compensation = 0.0;
  void add(double v) {
    const double t = sum + v;
    compensation += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  double value() const { return sum + compensation; }
};

// The exact sum of floats, to far below a float's last bit.
inline double exact_sum(const std::vector<float>& values) {
  NeumaierSum sum;
  for (float f : values) sum.add(f);
  return sum.value();
}

inline double sum_of_magnitudes(const std::vector<float>& values) {
  double sum = 0.0;
  for (float f : values) sum += std::fabs(f);
  return sum;
}

// The distance between |x| and the next float up: one ulp of a float of that magnitude.
inline double ulp_of(float x) {
  const float a = std::fabs(x);
  return static_cast<double>(std::nextafter(a, INFINITY)) - a;
}

// Values of both signs, in (-1, 1) scaled by 2^-6 to 2^6: the sum is thousands of times
// smaller than the sum of magnitudes, so an order of float additions loses many of its bits.
inline std::vector<float> mixed_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-6, 6);
  std::vector<float> values(n);
  for (auto& v : values) v = std::ldexp(mantissa(random), exponent(random));
  return values;
}

// Mixed values with one +3e7 or -3e7 (in turn) in every run of 1024 values, at a random place in
// it: in float, a sum that holds one of them has an ulp of 2, and the small values added to it
// are lost. At random places (not every 1024th, a multiple of any grid's stride), the large
// values meet small ones in whatever order a kernel adds, whatever its launch, so a sum that adds
// in float anywhere fails on every seed, not on some.
inline bool is_large(float v) { return std::fabs(v) > 1.0e6f; }

inline std::vector<float> cancelling_values(std::size_t n, std::uint64_t seed) {
  auto values = mixed_values(n, seed);
  std::mt19937_64 random(seed ^ 0x3e7c0ffeeull);
  for (std::size_t start = 0, k = 0; start < n; start += 1024, ++k) {
    const std::size_t length = std::min<std::size_t>(1024, n - start);
    values[start + random() % length] = k % 2 == 0 ? 3.0e7f : -3.0e7f;
  }
  return values;
}

}  // namespace sum_data

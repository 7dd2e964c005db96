#include "course/fresh.h"
#include "course/profile.h"

#include <algorithm>
#include <set>

namespace course {

std::vector<std::size_t> FreshElements::distinct_places(std::size_t size, std::size_t count) {
  std::set<std::size_t> chosen;
  count = std::min(count, size);
  while (chosen.size() < count) chosen.insert(below(size));
  return {chosen.begin(), chosen.end()};
}

float FreshElements::value(float lo, float hi, float old) {
  std::uniform_real_distribution<float> uniform(lo, hi);
  for (;;) {
    const float v = uniform(random_);
    if (v != old) return v;
  }
}

std::size_t FreshElements::below(std::size_t bound) {
  return bound == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, bound - 1)(random_);
}

::testing::AssertionResult same_at_places(const std::vector<std::size_t>& places, const std::vector<double>& expected,
                                          const std::vector<float>& actual, Tolerance tolerance,
                                          const std::string& what, Shape2D shape) {
  if (expected.size() != places.size() || actual.size() != places.size())
    return ::testing::AssertionFailure() << "same_at_places: " << places.size() << " places, " << expected.size()
                                         << " expected and " << actual.size() << " actual values";
  ComparisonReport report = compare(expected.data(), actual.data(), places.size(), tolerance);
  if (report.ok()) return ::testing::AssertionSuccess();
  for (Mismatch& m : report.first) m.index = places[m.index];  // positions in the whole array
  return ::testing::AssertionFailure() << what << " checked at " << places.size() << " places: " << describe(report, shape);
}

std::vector<std::size_t> merged_places(std::vector<std::size_t> first, const std::vector<std::size_t>& second) {
  first.insert(first.end(), second.begin(), second.end());
  std::sort(first.begin(), first.end());
  first.erase(std::unique(first.begin(), first.end()), first.end());
  return first;
}

std::vector<std::size_t> change_elements(FreshElements& fresh, float* device, std::vector<float>& host, float lo,
                                         float hi) {
  const std::vector<std::size_t> places = fresh.places(host.size());
  std::vector<float> values;
  values.reserve(places.size());
  for (std::size_t p : places) values.push_back(host[p] = fresh.value(lo, hi, host[p]));
  write_elements(device, places, values);
  return places;
}

std::vector<std::size_t> change_host_elements(FreshElements& fresh, float* host, std::vector<float>& mirror,
                                              float lo, float hi) {
  const std::vector<std::size_t> places = fresh.places(mirror.size());
  for (std::size_t p : places) host[p] = mirror[p] = fresh.value(lo, hi, mirror[p]);
  return places;
}

std::vector<float> values_at(const float* host, const std::vector<std::size_t>& places) {
  std::vector<float> values;
  values.reserve(places.size());
  for (std::size_t p : places) values.push_back(host[p]);
  return values;
}

::testing::AssertionResult check_at(const float* device_out, const std::vector<std::size_t>& places,
                                    const std::function<double(std::size_t)>& expected, Tolerance tolerance,
                                    const std::string& what, Shape2D shape) {
  const ProfileScope phase("check_at (download places)");
  std::vector<double> wanted;
  wanted.reserve(places.size());
  for (std::size_t p : places) wanted.push_back(expected(p));
  return same_at_places(places, wanted, read_elements(device_out, places), tolerance, what, shape);
}

}  // namespace course

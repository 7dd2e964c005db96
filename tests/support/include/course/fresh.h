/// @file fresh.h
/// @brief Every timed call given an input it has not seen, and what each call wrote checked.
///
/// A perf test that timed the same call on the same input again and again would time a cache
/// just as well: code that remembers its last output, or keys a replay on a few sampled input
/// values, passes. So before every call (warm-ups too, outside the timing) the test changes its
/// input at random places, with values from the judge's own generator, and poisons the output;
/// after every call it checks the outputs that depend on the changed places and on random
/// others (timing.h: FreshCalls). Finding the changed places costs a remembering submission a
/// read of the whole input against its copy: more than the work itself.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "course/compare.h"
#include "course/cuda_check.h"

namespace course {

/// Random places of an array and fresh values for them, from a generator of the judge's own.
class FreshElements {
 public:
  /// `per_call` places change before each call; the generator starts from `seed`.
  explicit FreshElements(std::uint64_t seed, std::size_t per_call = 32) : random_(seed ^ 0x5eedf2e5u), per_call_(per_call) {}
  /// `per_call` distinct random places in [0, size), sorted (fewer if size is smaller).
  std::vector<std::size_t> places(std::size_t size) { return distinct_places(size, per_call_); }
  /// `count` distinct random places in [0, size), sorted.
  std::vector<std::size_t> distinct_places(std::size_t size, std::size_t count);
  /// A random value in [lo, hi) that differs from `old`.
  float value(float lo, float hi, float old);
  /// A random integer in [0, bound).
  std::size_t below(std::size_t bound);

 private:
  std::mt19937_64 random_;
  std::size_t per_call_;
};

/// device[places[k]] = values[k] for every k: one small synchronous copy each. The device must
/// be idle (FreshCalls::change is called so).
template <class T>
void write_elements(T* device, const std::vector<std::size_t>& places, const std::vector<T>& values) {
  for (std::size_t k = 0; k < places.size(); ++k)
    CUDA_CHECK(cudaMemcpy(device + places[k], &values[k], sizeof(T), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
}

/// device[places[k]] for every k: one small synchronous copy each.
template <class T>
std::vector<T> read_elements(const T* device, const std::vector<std::size_t>& places) {
  std::vector<T> values(places.size());
  for (std::size_t k = 0; k < places.size(); ++k)
    CUDA_CHECK(cudaMemcpy(&values[k], device + places[k], sizeof(T), cudaMemcpyDeviceToHost));
  return values;
}

/// Compares `actual[k]` with `expected[k]`, the elements at `places[k]` of an array called
/// `what`: the message names the places of the first few that differ, or were never written.
::testing::AssertionResult same_at_places(const std::vector<std::size_t>& places, const std::vector<double>& expected,
                                          const std::vector<float>& actual, Tolerance tolerance,
                                          const std::string& what, Shape2D shape = {});

/// Sorted, without repeats: the places to check after a call (changed ones and random others).
std::vector<std::size_t> merged_places(std::vector<std::size_t> first, const std::vector<std::size_t>& second);

/// Before a call: new values in [lo, hi) at `fresh`'s next places of `host` and of its device
/// copy `device` (the device must be idle). Returns the places.
std::vector<std::size_t> change_elements(FreshElements& fresh, float* device, std::vector<float>& host,
                                         float lo = -1.0f, float hi = 1.0f);

/// The same for an array in host memory only (pinned, or mapped for the device), whose copy
/// `mirror` (as many elements) the test keeps to compute what the output must be.
std::vector<std::size_t> change_host_elements(FreshElements& fresh, float* host, std::vector<float>& mirror,
                                              float lo = -1.0f, float hi = 1.0f);

/// host[places[k]] for every k (an output in host memory, read at the places to check).
std::vector<float> values_at(const float* host, const std::vector<std::size_t>& places);

/// After a call: `device_out` read at `places` and compared with expected(place), an array
/// called `what` (same_at_places).
::testing::AssertionResult check_at(const float* device_out, const std::vector<std::size_t>& places,
                                    const std::function<double(std::size_t)>& expected, Tolerance tolerance,
                                    const std::string& what, Shape2D shape = {});

}  // namespace course

/// @file random.h
/// @brief Seeded random inputs: a fresh seed per run, printed on failure, settable to replay.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace course {

/// Parses a seed ("12345"); throws std::invalid_argument on anything else.
std::uint64_t parse_seed(const std::string& text);

/// The seed of this process: --course_seed on the command line (settings.h) if given, else a
/// fresh one.
std::uint64_t test_seed();

/// "random seed 123 (replay with COURSE_SEED=123 ctest ...)": put it in SCOPED_TRACE so failures
/// show it.
std::string seed_note();

/// `count` floats uniform in [lo, hi], reproducible from `seed`.
std::vector<float> random_floats(std::size_t count, std::uint64_t seed, float lo = -1.0f,
                                 float hi = 1.0f);

/// Element `index` of random_floats(count, seed, lo, hi), computed alone.
float random_float_at(std::uint64_t seed, std::size_t index, float lo = -1.0f, float hi = 1.0f);

/// random_floats(count, seed, lo, hi) written into device memory by a kernel, on `stream`: a
/// perf test refills a large input so before every timed call (fresh.h), in well under a
/// millisecond, and checks outputs with random_float_at.
void fill_random_floats(float* device, std::size_t count, std::uint64_t seed, float lo, float hi,
                        cudaStream_t stream);

}  // namespace course

/// @file random.h
/// @brief Seeded random inputs: a fresh seed per run, printed on failure, settable to replay.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace course {

/// Parses a seed ("12345"); throws std::invalid_argument on anything else.
std::uint64_t parse_seed(const std::string& text);

/// The seed of this process: COURSE_SEED from the environment if set, else a fresh one.
std::uint64_t test_seed();

/// "random seed 123 (replay with COURSE_SEED=123)": put it in SCOPED_TRACE so failures show it.
std::string seed_note();

/// `count` floats uniform in [lo, hi], reproducible from `seed`.
std::vector<float> random_floats(std::size_t count, std::uint64_t seed, float lo = -1.0f,
                                 float hi = 1.0f);

}  // namespace course

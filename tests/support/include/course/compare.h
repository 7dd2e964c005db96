/// @file compare.h
/// @brief Comparing a result with a reference: how many elements differ, which ones, and
/// which were never written (still hold the 0xFF poison of DeviceBuffer::poison()).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace course {

/// |actual - expected| <= absolute + relative * |expected| passes.
struct Tolerance {
  double absolute = 0;  ///< allowed difference, whatever the magnitude
  double relative = 0;  ///< allowed difference per unit of |expected|
};

/// Optional 2-D view of the arrays (row-major), so that messages give (row, col).
struct Shape2D {
  std::size_t rows = 0;  ///< number of rows (0: not a matrix)
  std::size_t cols = 0;  ///< elements per row
};

/// One differing element.
struct Mismatch {
  std::size_t index = 0;  ///< position in the flat array
  double expected = 0;    ///< the reference value
  double actual = 0;      ///< the value found
  bool unwritten = false;  ///< the element still holds the poison pattern
};

/// What a comparison found.
struct ComparisonReport {
  std::size_t checked = 0;     ///< elements compared
  std::size_t mismatched = 0;  ///< includes the unwritten ones
  std::size_t unwritten = 0;   ///< elements still holding the poison pattern
  std::vector<Mismatch> first;  ///< the first few, in index order
  bool ok() const { return mismatched == 0; }  ///< true when nothing differs
};

/// True if the float still holds the poison bit pattern (all bytes 0xFF).
inline bool is_poison(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits == 0xFFFFFFFFu;
}

/// Compares element by element; NaN in `actual` never passes. Large arrays are compared by
/// several threads; the report is the same as one thread's.
ComparisonReport compare(const double* expected, const float* actual, std::size_t count,
                         Tolerance tolerance, std::size_t max_listed = 5);
/// The same for a float reference.
ComparisonReport compare(const float* expected, const float* actual, std::size_t count,
                         Tolerance tolerance, std::size_t max_listed = 5);

/// Text for a failed comparison: counts, then the first few with their indices.
std::string describe(const ComparisonReport& report, Shape2D shape = {});

/// A number as a message shows it: `significant` digits, no trailing noise ("1.15", not the
/// "1.1499999999999999" that GoogleTest's messages print for a double).
inline std::string rounded(double value, int significant = 3) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", significant, value);
  return text;
}

/// GoogleTest assertion: EXPECT_TRUE(course::all_close(expected, actual, tolerance, shape)).
::testing::AssertionResult all_close(const std::vector<double>& expected,
                                     const std::vector<float>& actual, Tolerance tolerance,
                                     Shape2D shape = {});
/// The same for a float reference (exact operations such as copies and transposes).
::testing::AssertionResult all_close(const std::vector<float>& expected,
                                     const std::vector<float>& actual, Tolerance tolerance,
                                     Shape2D shape = {});

}  // namespace course

#include "course/compare.h"
#include "course/parallel.h"
#include "course/profile.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace course {

namespace {
template <class Expected>
void compare_range(const Expected* expected, const float* actual, std::size_t begin, std::size_t end,
                   Tolerance tolerance, std::size_t max_listed, ComparisonReport& report) {
  for (std::size_t i = begin; i < end; ++i) {
    const double e = expected[i];
    const double a = actual[i];
    const bool unwritten = is_poison(actual[i]);
    // Written as a negation so that NaN fails.
    const bool close = !unwritten && std::fabs(a - e) <= tolerance.absolute + tolerance.relative * std::fabs(e);
    if (close) continue;
    ++report.mismatched;
    if (unwritten) ++report.unwritten;
    if (report.first.size() < max_listed) report.first.push_back({i, e, a, unwritten});
  }
}

// Up to 16 threads on consecutive ranges, merged in index order: a 2^26-element check took
// 0.2-0.4 s on one core, several times in some perf tests.
template <class Expected>
ComparisonReport compare_all(const Expected* expected, const float* actual, std::size_t count, Tolerance tolerance,
                             std::size_t max_listed) {
  const ProfileScope phase("compare (host)");
  std::vector<ComparisonReport> parts(16);
  const std::size_t used = for_each_range(count, std::size_t{1} << 22, parts.size(),
                                          [&](std::size_t part, std::size_t begin, std::size_t end) {
                                            compare_range(expected, actual, begin, end, tolerance, max_listed,
                                                          parts[part]);
                                          });
  parts.resize(used);
  ComparisonReport report;
  report.checked = count;
  for (const ComparisonReport& part : parts) {
    report.mismatched += part.mismatched;
    report.unwritten += part.unwritten;
    for (const Mismatch& m : part.first)
      if (report.first.size() < max_listed) report.first.push_back(m);
  }
  return report;
}
}  // namespace

ComparisonReport compare(const double* expected, const float* actual, std::size_t count, Tolerance tolerance,
                         std::size_t max_listed) {
  return compare_all(expected, actual, count, tolerance, max_listed);
}

ComparisonReport compare(const float* expected, const float* actual, std::size_t count, Tolerance tolerance,
                         std::size_t max_listed) {
  return compare_all(expected, actual, count, tolerance, max_listed);
}

std::string describe(const ComparisonReport& report, Shape2D shape) {
  std::ostringstream out;
  out << report.mismatched << " of " << report.checked << " elements differ";
  if (report.unwritten > 0)
    out << " (" << report.unwritten
        << " of them were never written: they still hold the poison value)";
  out << ". First ones:";
  out << std::setprecision(9);
  for (const Mismatch& m : report.first) {
    out << "\n  ";
    if (shape.cols > 0)
      out << "(row " << m.index / shape.cols << ", col " << m.index % shape.cols << ")";
    else
      out << "[" << m.index << "]";
    out << " expected " << m.expected << ", got ";
    if (m.unwritten)
      out << "nothing (unwritten)";
    else
      out << m.actual;
  }
  return out.str();
}

namespace {
::testing::AssertionResult to_assertion(const ComparisonReport& report, Shape2D shape) {
  if (report.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << describe(report, shape);
}

::testing::AssertionResult size_mismatch(std::size_t expected, std::size_t actual) {
  return ::testing::AssertionFailure()
         << "result has " << actual << " elements, expected " << expected;
}
}  // namespace

::testing::AssertionResult all_close(const std::vector<double>& expected,
                                     const std::vector<float>& actual, Tolerance tolerance,
                                     Shape2D shape) {
  if (expected.size() != actual.size()) return size_mismatch(expected.size(), actual.size());
  return to_assertion(compare(expected.data(), actual.data(), actual.size(), tolerance), shape);
}

::testing::AssertionResult all_close(const std::vector<float>& expected,
                                     const std::vector<float>& actual, Tolerance tolerance,
                                     Shape2D shape) {
  if (expected.size() != actual.size()) return size_mismatch(expected.size(), actual.size());
  return to_assertion(compare(expected.data(), actual.data(), actual.size(), tolerance), shape);
}

}  // namespace course

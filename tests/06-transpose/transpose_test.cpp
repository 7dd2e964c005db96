// Tests of chapter 06 (tiled transpose). Built once, linked against the starter and the
// reference solution. Correctness first; the perf test only times a correct result.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "course/diagnosis.h"
#include "course/testing.h"
#include "course_diagnosis_rules.h"
#include "transpose.h"

namespace {

// In 64 x 64 blocks, as the exercise does on the GPU: a row-by-row loop writes each element of
// `out` a whole row apart and took 1.3 s for the perf test's 8192 x 8192 (twice per run).
std::vector<float> transpose_on_cpu(const std::vector<float>& in, int rows, int cols) {
  constexpr int kBlock = 64;
  std::vector<float> out(in.size());
  for (int r0 = 0; r0 < rows; r0 += kBlock)
    for (int c0 = 0; c0 < cols; c0 += kBlock)
      for (int r = r0; r < std::min(rows, r0 + kBlock); ++r)
        for (int c = c0; c < std::min(cols, c0 + kBlock); ++c)
          out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
  return out;
}

struct Shape {
  int rows;
  int cols;
};

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return "Rows" + std::to_string(info.param.rows) + "Cols" + std::to_string(info.param.cols);
}

// Square and non-square shapes, multiples of the tile and not, down to a single element and to
// empty matrices (nothing to launch: a grid of 0 blocks is an error). 5,000,000 x 1 has more rows
// than a grid's y dimension holds in tiles of 32 or 64 rows (65535 x 64 = 4,194,240), and
// 1 x 5,000,000 more columns than it holds; both are cheap (20 MB each way). 130 x 128: columns a
// multiple of 64 (and of 32) under several rows of tiles, where a tile count per row of the grid
// rounded up once too often ((cols + side) / side) shifts every tile after the first row.
const Shape kShapes[] = {{1, 1},       {32, 32},   {31, 33},     {33, 31},     {1, 77},    {77, 1},
                         {64, 96},     {65, 63},   {1000, 3000}, {3000, 1000}, {4097, 4095}, {130, 128},
                         {0, 0},       {0, 5},     {5, 0},       {5000000, 1}, {1, 5000000}};

class TransposeTiled : public ::testing::TestWithParam<Shape> {};

void expect_transposes(int rows, int cols) {
  const auto input = course::random_floats(static_cast<size_t>(rows) * cols, course::test_seed());

  course::DeviceBuffer<float> in(input, "in");
  course::DeviceBuffer<float> out(input.size(), "out");
  out.poison();
  course::Stream stream;
  transpose_tiled(in.data(), out.data(), rows, cols, stream);
  CUDA_CHECK_LAUNCH("transpose_tiled");

  // out has `cols` rows of `rows` elements. A transpose moves values: exact comparison.
  EXPECT_TRUE(course::all_close(transpose_on_cpu(input, rows, cols), out.download(), {0, 0},
                                {static_cast<size_t>(cols), static_cast<size_t>(rows)}))
      << "transpose_tiled(" << rows << " x " << cols << ") wrote a wrong result; see TODO(2) "
      << "and TODO(4) for the indexing and the bounds checks.";
  EXPECT_EQ(in.download(), input) << "transpose_tiled modified its input";
}

// An empty matrix has nothing to transpose, and the call must not fail (a grid of 0 blocks is an
// error); a call of another shape after it must work, so that doing nothing is never a pass.
TEST_P(TransposeTiled, MatchesCpuTranspose) {
  COURSE_REQUIRE_GPU();
  SCOPED_TRACE(course::seed_note());
  const auto [rows, cols] = GetParam();
  expect_transposes(rows, cols);
  if (rows == 0 || cols == 0) {
    SCOPED_TRACE("a 33 x 31 call after the empty one");
    expect_transposes(33, 31);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, TransposeTiled, ::testing::ValuesIn(kShapes), shape_name);

// Offset views: the contract allows `in` and `out` at any float's address. Both start one float
// past a 16-byte boundary here, with rows of a multiple of 4 floats (where 16-byte loads would be
// tempting); the float before `out` must stay untouched.
TEST(TransposeTiledViews, InAndOutOffsetByOneFloat) {
  COURSE_REQUIRE_GPU();
  SCOPED_TRACE(course::seed_note());
  const int rows = 100, cols = 132;
  const std::size_t count = static_cast<size_t>(rows) * cols;
  const auto input = course::random_floats(count + 1, course::test_seed());
  course::DeviceBuffer<float> in(input, "in");
  course::DeviceBuffer<float> out(count + 1, "out");
  out.poison();
  course::Stream stream;
  transpose_tiled(in.data() + 1, out.data() + 1, rows, cols, stream);
  CUDA_CHECK_LAUNCH("transpose_tiled on views one float past a 16-byte boundary");
  auto result = out.download();
  EXPECT_TRUE(course::is_poison(result[0])) << "transpose_tiled wrote before the start of `out`";
  result.erase(result.begin());
  const std::vector<float> view(input.begin() + 1, input.end());
  EXPECT_TRUE(course::all_close(transpose_on_cpu(view, rows, cols), result, {0, 0},
                                {static_cast<size_t>(cols), static_cast<size_t>(rows)}))
      << "transpose_tiled(" << rows << " x " << cols << ") of a view one float into its allocation";
}

// One view aligned and the other not, each way round: a kernel that checks only one pointer's
// alignment before it uses 16-byte loads or stores (rows and cols are multiples of 4 here)
// faults or writes in the wrong place on the other. The float before `out` stays untouched.
TEST(TransposeTiledViews, OnlyOneOfInAndOutOffset) {
  COURSE_REQUIRE_GPU();
  SCOPED_TRACE(course::seed_note());
  const int rows = 100, cols = 132;
  const std::size_t count = static_cast<size_t>(rows) * cols;
  course::Stream stream;
  for (const auto [in_offset, out_offset] : {std::pair<int, int>{0, 1}, std::pair<int, int>{1, 0}}) {
    SCOPED_TRACE("`in` " + std::to_string(in_offset) + " and `out` " + std::to_string(out_offset) +
                 " float(s) past a 16-byte boundary");
    const auto input = course::random_floats(count + 1, course::test_seed() + in_offset);
    course::DeviceBuffer<float> in(input, "in");
    course::DeviceBuffer<float> out(count + 1, "out");
    out.poison();
    transpose_tiled(in.data() + in_offset, out.data() + out_offset, rows, cols, stream);
    CUDA_CHECK_LAUNCH("transpose_tiled on one view past a 16-byte boundary and one on it");
    auto result = out.download();
    if (out_offset == 1) {
      EXPECT_TRUE(course::is_poison(result[0])) << "transpose_tiled wrote before the start of `out`";
      result.erase(result.begin());
    } else {
      EXPECT_TRUE(course::is_poison(result.back())) << "transpose_tiled wrote past the end of `out`";
      result.pop_back();
    }
    const std::vector<float> view(input.begin() + in_offset, input.begin() + in_offset + count);
    EXPECT_TRUE(course::all_close(transpose_on_cpu(view, rows, cols), result, {0, 0},
                                  {static_cast<size_t>(cols), static_cast<size_t>(rows)}))
        << "transpose_tiled(" << rows << " x " << cols << ") with `in` " << in_offset << " and `out` " << out_offset
        << " float(s) into their allocations";
  }
}

// A second call in the same process with another shape (and other buffers): nothing of the first
// call (its grid, its output) may be kept for it.
TEST(TransposeTiledRepeated, SecondCallWithAnotherShape) {
  COURSE_REQUIRE_GPU();
  SCOPED_TRACE(course::seed_note());
  course::Stream stream;
  for (const Shape shape : {Shape{40, 70}, Shape{300, 129}}) {
    const auto [rows, cols] = shape;
    const auto input = course::random_floats(static_cast<size_t>(rows) * cols, course::test_seed() + rows);
    course::DeviceBuffer<float> in(input, "in");
    course::DeviceBuffer<float> out(input.size(), "out");
    out.poison();
    transpose_tiled(in.data(), out.data(), rows, cols, stream);
    CUDA_CHECK_LAUNCH("transpose_tiled");
    EXPECT_TRUE(course::all_close(transpose_on_cpu(input, rows, cols), out.download(), {0, 0},
                                  {static_cast<size_t>(cols), static_cast<size_t>(rows)}))
        << "transpose_tiled(" << rows << " x " << cols << "), after a call with another shape";
  }
}

// More than 2^31 elements (65537 x 32768 floats, 8.6 GB each way; DeviceWide: it runs alone): an
// index computed in 32-bit ints (row * cols, col * rows) wraps. The input is filled on the GPU
// from the judge's generator; the output is checked where the last row of `in` lands, at its own
// last elements and at random places.
TEST(TransposeTiledDeviceWide, MoreThan2To31Elements) {
  COURSE_REQUIRE_GPU();
  SCOPED_TRACE(course::seed_note());
  const int rows = 65537, cols = 32768;
  const std::size_t count = static_cast<size_t>(rows) * cols;
  const std::uint64_t seed = course::test_seed() + 11;
  course::DeviceBuffer<float> in(count, "in");
  course::DeviceBuffer<float> out(count, "out");
  course::Stream stream;
  course::fill_random_floats(in.data(), count, seed, -1.0f, 1.0f, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  out.poison();
  transpose_tiled(in.data(), out.data(), rows, cols, stream);
  CUDA_CHECK_LAUNCH("transpose_tiled of 65537 x 32768 floats");
  course::FreshElements fresh(course::test_seed() + 12);
  std::vector<std::size_t> places = fresh.distinct_places(count, 1024);
  for (std::size_t q = count - 64; q < count; ++q) places.push_back(q);
  for (std::size_t c : fresh.distinct_places(cols, 64)) places.push_back(c * rows + (rows - 1));  // in's last row
  places = course::merged_places(places, {});
  // out[q] = in[r][c] with c = q / rows, r = q % rows.
  EXPECT_TRUE(course::check_at(out.data(), places,
                               [&](std::size_t q) { return course::random_float_at(seed, (q % rows) * cols + q / rows); },
                               {0, 0}, "out", {static_cast<size_t>(cols), static_cast<size_t>(rows)}))
      << "transpose_tiled(65537 x 32768): past 2^31 elements the index wraps in 32-bit ints (compute it in "
      << "std::size_t)";
}

// The contract's rules, from what ran: the student's own kernel, a shared tile of at least
// kTransposeTile^2 floats, no copies, everything on the given stream. The block's shape is free:
// other shapes and more elements per thread do what the chapter teaches too (fixture
// tile-64-block-64x4). Where the recording counted the instructions that ran
// (Counting::instructions), every element went through that tile: the kernels stored at least the
// matrix's bytes into shared memory (STS, asynchronous copies: LDGSTS, or bulk copies: UBLKCP and
// TMA's UTMALDG, fixture bulk-copy-tile) and read at least as many back (LDS), so a tile that is
// declared but not used does not count.
// The contract's rules, checked against what a call did: here, and on a call of the perf test
// drawn at random (FreshCalls::rules), at its size.
::testing::AssertionResult transpose_tiled_rules(const course::Activity& ran, int rows, int cols) {
  const long long matrix_bytes = 1LL * rows * cols * static_cast<long long>(sizeof(float));
  const std::string matrix = "the " + std::to_string(rows) + " x " + std::to_string(cols) + " floats of the matrix";
  return course::all_rules(
      {course::own_kernels_on_given_stream(ran, "transpose_tiled"),
       course::kernels_use_shared_memory(ran, "transpose_tiled", kTransposeTile * kTransposeTile * sizeof(float),
                                         "a tile of kTransposeTile x kTransposeTile floats (TODO(1))"),
       course::stored_into_shared_at_least(ran, "transpose_tiled", matrix_bytes, matrix),
       course::executed_at_least(ran, "transpose_tiled", {"LDS"}, course::Executions::thread_bytes, matrix_bytes,
                                 "its loads from shared memory (LDS)", matrix)});
}

// One call at 1000 x 3000, recorded (its instructions counted when `counting` says so), after its
// result was found right; nullopt (and a failure) when it is wrong.
std::optional<course::Activity> recorded_right_call(course::Counting counting) {
  const int rows = 1000, cols = 3000;
  const auto input = course::random_floats(static_cast<size_t>(rows) * cols, course::test_seed());
  course::DeviceBuffer<float> in(input, "in");
  course::DeviceBuffer<float> out(static_cast<size_t>(rows) * cols, "out");
  course::Stream stream;
  const auto ran = course::record_activity_on(
      stream.get(), [&] { transpose_tiled(in.data(), out.data(), rows, cols, stream); }, {}, counting);
  CUDA_CHECK_LAUNCH("transpose_tiled");  // after the recording: its guard checks copy
  const auto right = course::result_is_right_first(
      course::all_close(transpose_on_cpu(input, rows, cols), out.download(), {0, 0}), "transpose_tiled");
  if (!right) {
    ADD_FAILURE() << right.message();
    return std::nullopt;
  }
  return ran;
}

TEST(TransposeTiledTechnique, OwnKernelWithASharedTileOnTheGivenStream) {
  COURSE_REQUIRE_ACTIVITY();
  if (const auto ran = recorded_right_call(course::Counting::none)) {
    EXPECT_TRUE(transpose_tiled_rules(*ran, 1000, 3000));
    EXPECT_TRUE(course::waits_not_on_the_host(*ran, "transpose_tiled"));  // it only enqueues (transpose.h)
  }
}

// Counted while it ran (CUPTI's SASS metrics): the matrix went into the shared tile and came back
// out of it.
TEST(TransposeTiledCountedTechnique, EveryElementGoesThroughTheSharedTile) {
  COURSE_REQUIRE_ACTIVITY();
  const auto ran = recorded_right_call(course::Counting::instructions);
  if (!ran) return;
  COURSE_REQUIRE_COUNTED(*ran);
  EXPECT_TRUE(transpose_tiled_rules(*ran, 1000, 3000));
}

// 8192 x 8192 floats: 256 MiB each way, five times the H100's 50 MiB L2, so this times DRAM.
//
// Required: 0.75 of the device-to-device copy peak. Measured (CUDA 13.0), H100 80GB HBM3 / H200:
// the reference (64 x 64 padded tile, 64 x 4 threads) 0.95 / 0.92-0.93 in this test (three runs
// each, 2026-11-24, each timed call on a busy GPU), a 32 x 32 padded tile 0.94 / 0.85, fixture
// unpadded (32 x 32) 0.57 / 0.41, naive 0.14 / 0.12 of memcpy (see the chapter README and
// tests/06-transpose/calibrate_transpose.cu). 0.75 passes every padded tile with a wide margin
// and fails the unpadded one.
constexpr int kPerfSide = 8192;
constexpr double kRequiredFractionOfCopyPeak = 0.75;

TEST(TransposeTiledPerf, ReachesThreeQuartersOfCopyPeakAt8192) {
  COURSE_REQUIRE_TIMING();
  SCOPED_TRACE(course::seed_note());
  const int n = kPerfSide;
  const size_t count = static_cast<size_t>(n) * n;
  const auto input = course::random_floats(count, course::test_seed());
  course::DeviceBuffer<float> in(input, "in");
  course::DeviceBuffer<float> out(count, "out");
  course::Stream stream;

  const double peak = course::measure_copy_peak_gbps();

  out.poison();
  transpose_tiled(in.data(), out.data(), n, n, stream);
  CUDA_CHECK_LAUNCH("transpose_tiled");
  const auto check = course::all_close(transpose_on_cpu(input, n, n), out.download(), {0, 0},
                                       {count / n, static_cast<size_t>(n)});
  ASSERT_TRUE(check) << "transpose_tiled is wrong at " << n << " x " << n
                     << ", so it was not timed: make the correctness tests pass first.";

  const auto naive = course::time_on_stream(
      [&](cudaStream_t s) { transpose_naive(in.data(), out.data(), n, n, s); }, stream);
  // A fresh input, changed at random places before every timed call, and a poisoned output;
  // after every call the output is checked where the changed elements land and at random
  // other places (course/fresh.h): no call is timed on an input it has seen.
  auto host = course::random_floats(count, course::test_seed() + 1);
  in.upload(host);
  course::FreshElements fresh(course::test_seed() + 2);
  std::vector<std::size_t> changed;
  course::FreshCalls calls;
  calls.change = [&] {
    changed = course::change_elements(fresh, in.data(), host);
    out.poison();
  };
  calls.check = [&] {
    // out[c * n + r] = in[r * n + c]
    std::vector<std::size_t> places;
    for (std::size_t p : changed) places.push_back((p % n) * n + p / n);
    places = course::merged_places(places, fresh.distinct_places(count, 32));
    return course::check_at(out.data(), places, [&](std::size_t q) { return host[(q % n) * n + q / n]; }, {0, 0},
                            "out", {count / n, static_cast<std::size_t>(n)});
  };
  calls.rules = [n](const course::Activity& ran) { return transpose_tiled_rules(ran, n, n); };
  calls.counting = course::Counting::instructions;
  const auto tiled = course::time_on_stream(
      [&](cudaStream_t s) { transpose_tiled(in.data(), out.data(), n, n, s); }, stream, calls);
  const double bytes = static_cast<double>(count) * sizeof(float);
  const double naive_gbps = course::effective_bandwidth_gbps(bytes, bytes, naive.median_ms);
  std::printf("[  INFO    ] for comparison, the given transpose_naive: %.1f GB/s = %.3f x copy peak\n",
              naive_gbps, naive_gbps / peak);

  course::PerfCheck perf;
  perf.what = "transpose_tiled 8192x8192";
  perf.measured = course::effective_bandwidth_gbps(bytes, bytes, tiled.median_ms);
  perf.unit = "GB/s";
  perf.baseline = peak;
  perf.baseline_name = "the device-to-device copy peak";
  perf.required_ratio = kRequiredFractionOfCopyPeak;
  perf.timing = tiled;
  perf.ceiling = course::bandwidth_ceiling_gbps(&perf.ceiling_name);
  perf.verify_timed_output(course::all_close(transpose_on_cpu(host, n, n), out.download(), {0, 0},
                                             {count / n, static_cast<size_t>(n)}));
  // Unless COURSE_DIAGNOSE=0, one more call, untimed, under the hardware counters: what they say
  // of it (tests/06-transpose/diagnosis.txt) goes with the verdict, never into it.
  course::diagnose_perf(perf,
                       COURSE_DIAGNOSIS_RULES_TEXT, "transpose_tiled",
                       [&] {
                         transpose_tiled(in.data(), out.data(), n, n, stream);
                         CUDA_CHECK(cudaStreamSynchronize(stream));
                       },
                       {{"minimum_bytes", 2 * bytes}});
  perf.hint =
      "a tiled transpose near half the copy peak usually has shared-memory bank conflicts: "
      "with a [32][32] tile, the 32 threads of a warp reading one column of the tile all hit "
      "the same bank and are served one after another. Pad the tile to [32][33] (TODO(1)). "
      "Also check that threadIdx.x runs along the contiguous index both when reading `in` "
      "and when writing `out`, so that both are coalesced.";
  EXPECT_TRUE(course::meets_ratio(perf));
}

}  // namespace

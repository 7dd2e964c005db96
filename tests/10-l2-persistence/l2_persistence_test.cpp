// Tests of chapter 10 (persisting L2 window). Built once, linked against the starter and
// against the reference solution. No speed threshold: on the H100 the gain is small and shows
// only once hot and streaming data overflow the L2 (see the chapter's text); the tests check
// the plan, and what the stream and the device hold after your calls.
#include <string>
#include <vector>

#include "course/testing.h"
#include "l2_persistence.h"

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

void expect_plan(const L2WindowPlan& got, std::size_t carve_out, std::size_t window, float ratio,
                 const std::string& what) {
  EXPECT_EQ(got.carve_out_bytes, carve_out) << what << ": carve-out = min(hot, max persisting) (TODO(1))";
  EXPECT_EQ(got.window_bytes, window) << what << ": window = min(hot, max window) (TODO(1))";
  EXPECT_NEAR(got.hit_ratio, ratio, 1e-6) << what << ": hit ratio = min(1, carve-out / window) (TODO(1))";
}

TEST(PlanPersistingWindow, FitsTheDevicesLimits) {
  // H100-like limits: 37.5 MiB of persisting L2 at most, windows of at most 128 MiB.
  const std::size_t max_persisting = 75 * kMiB / 2;
  const std::size_t max_window = 128 * kMiB;
  expect_plan(plan_persisting_window(8 * kMiB, max_persisting, max_window), 8 * kMiB, 8 * kMiB, 1.0f, "8 MiB hot");
  expect_plan(plan_persisting_window(64 * kMiB, max_persisting, max_window), max_persisting, 64 * kMiB,
              static_cast<float>(37.5 / 64.0), "64 MiB hot (more than the carve-out)");
  expect_plan(plan_persisting_window(512 * kMiB, max_persisting, max_window), max_persisting, max_window,
              static_cast<float>(37.5 / 128.0), "512 MiB hot (more than a window)");
  expect_plan(plan_persisting_window(0, max_persisting, max_window), 0, 0, 0.0f, "nothing hot");
  expect_plan(plan_persisting_window(8 * kMiB, 0, max_window), 0, 0, 0.0f, "a device without persisting L2");
}

struct StreamWindow {
  cudaAccessPolicyWindow window{};
  std::size_t limit = 0;
};

StreamWindow observe(cudaStream_t stream) {
  cudaStreamAttrValue value{};
  CUDA_CHECK(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
  StreamWindow seen;
  seen.window = value.accessPolicyWindow;
  CUDA_CHECK(cudaDeviceGetLimit(&seen.limit, cudaLimitPersistingL2CacheSize));
  return seen;
}

int attribute(cudaDeviceAttr which) {
  int device = 0;
  int value = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&value, which, device));
  return value;
}

class PersistingWindowTechnique : public ::testing::TestWithParam<std::size_t> {};

// Rule: the window is on the given stream with the planned size, ratio and properties; the
// carve-out is set; clearing leaves no window and no carve-out.
TEST_P(PersistingWindowTechnique, SetOnTheStreamAndClearedAfterwards) {
  COURSE_REQUIRE_GPU();
  const std::size_t max_persisting = static_cast<std::size_t>(attribute(cudaDevAttrMaxPersistingL2CacheSize));
  const std::size_t max_window = static_cast<std::size_t>(attribute(cudaDevAttrMaxAccessPolicyWindowSize));
  if (max_persisting == 0 || max_window == 0) GTEST_SKIP() << "this GPU has no persisting L2 (compute capability < 8.0)";
  const std::size_t hot_bytes = GetParam();
  course::DeviceBuffer<float> hot(hot_bytes / sizeof(float));
  cudaStream_t stream = nullptr;
  cudaStream_t other = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));

  const L2WindowPlan plan = set_persisting_window(stream, hot.data(), hot.bytes());
  const L2WindowPlan expected = plan_persisting_window(hot.bytes(), max_persisting, max_window);
  const StreamWindow set = observe(stream);
  const StreamWindow untouched = observe(other);
  const std::string what = std::to_string(hot_bytes / kMiB) + " MiB hot";
  EXPECT_EQ(plan.window_bytes, expected.window_bytes) << what << ": the returned plan is not this device's (TODO(2))";
  EXPECT_EQ(set.window.base_ptr, static_cast<void*>(hot.data())) << what << ": the stream's window does not start at the "
                                                                  << "hot buffer (TODO(4))";
  EXPECT_EQ(set.window.num_bytes, expected.window_bytes) << what << ": the stream's window num_bytes (TODO(4))";
  EXPECT_NEAR(set.window.hitRatio, expected.hit_ratio, 1e-6) << what << ": the stream's window hitRatio (TODO(4))";
  EXPECT_EQ(set.window.hitProp, cudaAccessPropertyPersisting) << what << ": hits should persist (TODO(4))";
  EXPECT_EQ(set.window.missProp, cudaAccessPropertyStreaming) << what << ": misses should stream (TODO(4))";
  EXPECT_GE(set.limit, expected.carve_out_bytes) << what << ": the persisting carve-out is " << set.limit
                                                 << " bytes, less than the plan's (TODO(3))";
  EXPECT_LE(set.limit, max_persisting) << what << ": the carve-out is larger than the device allows (TODO(3))";
  EXPECT_EQ(untouched.window.num_bytes, 0u) << what << ": another stream got a window too; set it on `stream` only";

  clear_persisting_window(stream);
  const StreamWindow cleared = observe(stream);
  EXPECT_EQ(cleared.window.num_bytes, 0u) << what << ": the stream still has a window after clearing (TODO(5))";
  EXPECT_EQ(cleared.limit, 0u) << what << ": the carve-out is still " << cleared.limit << " bytes after clearing (TODO(5))";

  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaStreamDestroy(other));
}

INSTANTIATE_TEST_SUITE_P(HotSizes, PersistingWindowTechnique,
                         ::testing::Values(std::size_t{4} << 20, std::size_t{24} << 20, std::size_t{96} << 20,
                                           std::size_t{256} << 20),
                         [](const auto& info) { return "MiB" + std::to_string(info.param >> 20); });

// The work still computes the right thing with the window on.
TEST(PersistingWindow, WorkIsRightWithTheWindow) {
  COURSE_REQUIRE_GPU();
  if (attribute(cudaDevAttrMaxPersistingL2CacheSize) == 0) GTEST_SKIP() << "this GPU has no persisting L2";
  const std::size_t hot_count = 1 << 20;
  const std::size_t count = std::size_t{1} << 24;
  std::vector<float> hot_host(hot_count), in_host(count);
  for (std::size_t i = 0; i < hot_count; ++i) hot_host[i] = static_cast<float>(i % 97);
  for (std::size_t i = 0; i < count; ++i) in_host[i] = static_cast<float>(i % 13);
  course::DeviceBuffer<float> hot(hot_host), in(in_host), out(count);
  out.poison();
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  set_persisting_window(stream, hot.data(), hot.bytes());
  enqueue_hot_and_streaming(hot.data(), hot_count, in.data(), out.data(), count, stream);
  CUDA_CHECK_LAUNCH("enqueue_hot_and_streaming");
  CUDA_CHECK(cudaStreamSynchronize(stream));
  clear_persisting_window(stream);
  CUDA_CHECK(cudaStreamDestroy(stream));
  const std::vector<float> result = out.download();
  for (std::size_t i = 0; i < count; i += 4099) {
    const unsigned index = static_cast<unsigned>((i * 2654435761u) % hot_count);
    ASSERT_EQ(result[i], in_host[i] + hot_host[index]) << "at index " << i;
  }
}

}  // namespace

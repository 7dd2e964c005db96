// Tests of chapter 03 (zero-copy). Built once, linked against the starter and the reference.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <cstring>
#include <string>
#include <vector>

#include "course/diagnosis.h"
#include "course/testing.h"
#include "course_diagnosis_rules.h"
#include "zero_copy.h"

namespace {

#define REQUIRE_MAPPABLE_HOST_MEMORY()                                                                 \
  do {                                                                                                 \
    COURSE_REQUIRE_GPU();                                                                              \
    if (!course::current_device().can_map_host_memory)                                                 \
      GTEST_SKIP() << "this device cannot map host memory (canMapHostMemory = 0): " << course::device_line(); \
  } while (0)

std::vector<float> scale_on_cpu(const std::vector<float>& in) {
  std::vector<float> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) out[i] = 2.0f * in[i] + 1.0f;
  return out;
}

TEST(MappedBuffer, IsPinnedAndMappedForTheDevice) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  MappedBuffer buffer(1 << 20);
  ASSERT_NE(buffer.host(), nullptr) << "host() is null: allocate with cudaHostAlloc(..., cudaHostAllocMapped) (TODO(1))";
  ASSERT_NE(buffer.device(), nullptr) << "device() is null: ask cudaHostGetDevicePointer for it (TODO(2))";
  cudaPointerAttributes attributes{};
  CUDA_CHECK(cudaPointerGetAttributes(&attributes, buffer.host()));
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost) << "host() is not pinned host memory";
  EXPECT_EQ(attributes.devicePointer, buffer.device())
      << "device() is not the device address of host() that cudaPointerGetAttributes reports";
  // The smallest size that is not 0: one byte is still memory to allocate and map.
  MappedBuffer one(1);
  EXPECT_NE(one.host(), nullptr) << "MappedBuffer(1).host() is null: only 0 bytes allocates nothing (TODO(1))";
  EXPECT_NE(one.device(), nullptr) << "MappedBuffer(1).device() is null: only 0 bytes maps nothing (TODO(2))";
  EXPECT_EQ(one.size(), size_t{1}) << "MappedBuffer(1).size() should be 1";
}

TEST(MappedBuffer, ReleasesItsMemory) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  for (int i = 0; i < 8; ++i) {
    void* pointer = nullptr;
    {
      MappedBuffer buffer(size_t{64} << 20);
      pointer = buffer.host();
      ASSERT_NE(pointer, nullptr) << "host() is null (TODO(1))";
    }
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    ASSERT_EQ(attributes.type, cudaMemoryTypeUnregistered)
        << "after ~MappedBuffer the memory is still pinned: release it with cudaFreeHost (TODO(3))";
  }
}

TEST(MappedBuffer, EmptyBufferHoldsNothing) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  {
    MappedBuffer some(4096);
    ASSERT_NE(some.host(), nullptr) << "MappedBuffer(4096).host() is null (TODO(1))";
  }
  MappedBuffer empty(0);
  EXPECT_EQ(empty.host(), nullptr) << "MappedBuffer(0) should allocate nothing";
  EXPECT_EQ(empty.device(), nullptr) << "MappedBuffer(0).device() should be null: there is no memory to map";
  EXPECT_EQ(empty.size(), size_t{0});
}

// A size no host can pin: the constructor must throw, and leave no error behind for the
// caller's next check.
TEST(MappedBuffer, ThrowsWhenTheAllocationFails) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  if (!course::settings().sanitizer.empty())
    GTEST_SKIP() << "the allocation that fails on purpose here is an error to compute-sanitizer";
  // The error the allocation itself reports, which the exception must carry (not that of a call
  // made after it failed, such as cudaHostGetDevicePointer on no memory).
  void* probe = nullptr;
  const cudaError_t allocation_error = cudaHostAlloc(&probe, size_t{1} << 62, cudaHostAllocMapped);
  if (allocation_error == cudaSuccess) {
    cudaFreeHost(probe);
    GTEST_SKIP() << "this host pinned 4 EiB: no allocation here can fail";
  }
  (void)cudaGetLastError();
  bool threw = false;
  try {
    MappedBuffer buffer(size_t{1} << 62);  // 4 EiB
    ADD_FAILURE() << "MappedBuffer(2^62 bytes) returned, with host() = " << buffer.host() << " and device() = "
                  << buffer.device() << ": no host can pin 4 EiB, so cudaHostAlloc failed; throw "
                  << "std::runtime_error with its error when it does (TODO(1))";
  } catch (const std::runtime_error& error) {
    threw = true;
    std::printf("[  INFO    ] MappedBuffer(2^62 bytes) threw: %s\n", error.what());
    const std::string what = error.what();
    EXPECT_TRUE(what.find(cudaGetErrorString(allocation_error)) != std::string::npos ||
                what.find(cudaGetErrorName(allocation_error)) != std::string::npos)
        << "MappedBuffer(2^62 bytes) threw \"" << what << "\", which does not name the allocation's error, "
        << cudaGetErrorName(allocation_error) << " (\"" << cudaGetErrorString(allocation_error) << "\"): throw with "
        << "cudaGetErrorString of cudaHostAlloc's error, and ask cudaHostGetDevicePointer only when it succeeded "
        << "(TODO(1), TODO(2))";
  } catch (...) {
    ADD_FAILURE() << "MappedBuffer(2^62 bytes) threw something other than std::runtime_error (TODO(1))";
  }
  const cudaError_t left = cudaGetLastError();
  EXPECT_EQ(left, cudaSuccess) << "after the failed allocation cudaGetLastError() still reports " << cudaGetErrorName(left)
                               << ": clear the error (call cudaGetLastError) before throwing, or the caller's next "
                               << "check reports an error that is not its own (TODO(1))";
  if (threw) {
    MappedBuffer after(4096);
    EXPECT_NE(after.device(), nullptr) << "after the failed allocation, MappedBuffer(4096) maps nothing";
  }
}

// Two buffers at once: each device() is the device address of its own host memory (a device
// pointer kept in a static from the first buffer would be the first buffer's).
TEST(MappedBuffer, EachBufferHasItsOwnDeviceAddress) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  MappedBuffer first(size_t{1} << 20);
  MappedBuffer second(size_t{64} << 10);
  for (const MappedBuffer* buffer : {&first, &second}) {
    const char* which = buffer == &first ? "the first buffer (1 MiB)" : "the second buffer (64 KiB)";
    ASSERT_NE(buffer->host(), nullptr) << which << ": host() is null (TODO(1))";
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, buffer->host()));
    EXPECT_EQ(attributes.devicePointer, buffer->device())
        << which << ": device() is not the device address of its own host(), which cudaPointerGetAttributes "
        << "reports as " << attributes.devicePointer << " (ask cudaHostGetDevicePointer for each buffer, TODO(2))";
  }
  EXPECT_NE(first.device(), second.device()) << "two buffers have the same device()";
}

// Mapped pinned memory holding `values`, allocated by the test itself so that these tests do
// not depend on exercise 1.
class MappedFloats {
 public:
  explicit MappedFloats(const std::vector<float>& values) : count_(values.size()) {
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), count_ * sizeof(float), cudaHostAllocMapped));
    std::memcpy(host_, values.data(), count_ * sizeof(float));
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
  }
  MappedFloats(const MappedFloats&) = delete;
  MappedFloats& operator=(const MappedFloats&) = delete;
  ~MappedFloats() { cudaFreeHost(host_); }
  const float* device() const { return device_; }
  float* host() { return host_; }
  void refill(const std::vector<float>& values) { std::memcpy(host_, values.data(), count_ * sizeof(float)); }
  bool holds(const std::vector<float>& values) const {
    return std::memcmp(host_, values.data(), count_ * sizeof(float)) == 0;
  }

 private:
  float* host_ = nullptr;
  float* device_ = nullptr;
  size_t count_;
};

// Runs scale_from_host once on random input in mapped memory, into a poisoned output.
struct ScaleRun {
  explicit ScaleRun(size_t count)
      : n(count), input(course::random_floats(count, course::test_seed())), mapped(input), out(count, "device_out") {
    out.poison();
    scale_from_host(mapped.device(), out.data(), n, stream);
    CUDA_CHECK_LAUNCH("scale_from_host");
  }
  ::testing::AssertionResult correct() const { return course::all_close(scale_on_cpu(input), out.download(), {0, 0}); }
  size_t n;
  std::vector<float> input;
  MappedFloats mapped;
  course::DeviceBuffer<float> out;
  course::Stream stream;
};

std::string size_name(const ::testing::TestParamInfo<size_t>& info) { return "N" + std::to_string(info.param); }
const size_t kSizes[] = {1, 3, 1000, 4097, 1000003, (size_t{1} << 22) + 5};

class ScaleFromHost : public ::testing::TestWithParam<size_t> {};
TEST_P(ScaleFromHost, MatchesCpu) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  SCOPED_TRACE(course::seed_note());
  const ScaleRun run(GetParam());
  EXPECT_TRUE(run.correct()) << "scale_from_host(n = " << run.n << ") must write every element once (TODO(1), TODO(2)).";
  EXPECT_TRUE(run.mapped.holds(run.input)) << "scale_from_host modified its input";
}
INSTANTIATE_TEST_SUITE_P(Sizes, ScaleFromHost, ::testing::ValuesIn(kSizes), size_name);

// Calls one after another in one process, with other sizes, 0 among them: each computes its own
// (kills a grid size or a pointer kept in a static, and a launch of 0 blocks for n = 0).
TEST(ScaleFromHostCalls, CallAfterCallWithOtherSizes) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  SCOPED_TRACE(course::seed_note());
  {
    const ScaleRun first(1000003);
    EXPECT_TRUE(first.correct()) << "scale_from_host(n = 1000003), the first call, is wrong (TODO(1), TODO(2))";
  }
  {
    // n = 0: nothing to read, nothing written, no error.
    const std::vector<float> input(16, 1.0f);
    MappedFloats mapped(input);
    course::DeviceBuffer<float> out(16, "device_out");
    out.poison();
    course::Stream stream;
    scale_from_host(mapped.device(), out.data(), 0, stream);
    CUDA_CHECK_LAUNCH("scale_from_host with n = 0 (a launch of 0 blocks is an error: launch nothing)");
    const auto written = out.download();
    for (size_t i = 0; i < written.size(); ++i)
      ASSERT_TRUE(std::isnan(written[i])) << "scale_from_host with n = 0 wrote device_out[" << i << "]";
  }
  for (const size_t n : {size_t{4097}, size_t{1}, size_t{(1 << 16) + 3}}) {
    const ScaleRun run(n);
    EXPECT_TRUE(run.correct()) << "scale_from_host(n = " << n << "), after calls with other sizes, is wrong: does "
                               << "it keep something from an earlier call?";
  }
}

// Views one float into their allocations: `mapped_in` or `device_out` (or both) 4 bytes past a
// 16-byte boundary, after a call on aligned pointers in the same process. float4 loads or stores there fault ("misaligned address") unless the kernel
// checks the alignment first; n = 4097 is no multiple of 4 either.
TEST(ScaleFromHostCalls, OffsetViews) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  SCOPED_TRACE(course::seed_note());
  const size_t n = 4097;
  const struct {
    size_t in_offset, out_offset;
  } views[] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {3, 2}};  // aligned first: a choice kept from it must not stick
  for (const auto& view : views) {
    SCOPED_TRACE("mapped_in " + std::to_string(view.in_offset) + " float(s) into its buffer, device_out " +
                 std::to_string(view.out_offset) + " float(s) into its buffer");
    const auto input = course::random_floats(n + view.in_offset, course::test_seed());
    MappedFloats mapped(input);
    course::DeviceBuffer<float> out(n + view.out_offset, "device_out");
    out.poison();
    course::Stream stream;
    scale_from_host(mapped.device() + view.in_offset, out.data() + view.out_offset, n, stream);
    CUDA_CHECK_LAUNCH("scale_from_host on views one float into their buffers (a float4 access there is misaligned: "
                      "check the pointers' alignment before loading vectors)");
    const auto written = out.download();
    for (size_t i = 0; i < view.out_offset; ++i)
      EXPECT_TRUE(std::isnan(written[i])) << "scale_from_host wrote before device_out: element " << i
                                          << " of the buffer, " << view.out_offset - i << " before the view";
    const std::vector<float> in_view(input.begin() + view.in_offset, input.end());
    EXPECT_TRUE(course::all_close(scale_on_cpu(in_view), std::vector<float>(written.begin() + view.out_offset, written.end()),
                                  {0, 0}))
        << "scale_from_host on views one float into their buffers: read mapped_in[i] and write device_out[i] from "
           "the pointers given";
  }
}

// The contract's rules, from what ran: a kernel of your own reads the mapped memory itself,
// with no copy of any kind, on the given stream.
// The contract's rules, checked against what a call did: in the technique test, and on a call
// of the perf test drawn at random (FreshCalls::rules).
::testing::AssertionResult scale_from_host_rules(const course::Activity& ran) {
  return course::own_kernels_on_given_stream(ran, "scale_from_host");
}

TEST(ScaleFromHostTechnique, OwnKernelReadsMappedMemoryWithoutCopies) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  if (!course::settings().sanitizer.empty()) GTEST_SKIP() << "activity is not recorded under compute-sanitizer";
  const size_t n = 1000003;
  const auto input = course::random_floats(n, course::test_seed());
  MappedFloats mapped(input);
  course::DeviceBuffer<float> out(n, "device_out");
  course::Stream stream;
  const auto ran = course::record_activity_on(stream.get(), [&] {
    scale_from_host(mapped.device(), out.data(), n, stream);
  });
  CUDA_CHECK_LAUNCH("scale_from_host");  // after the recording: its guard checks copy
  ASSERT_TRUE(course::result_is_right_first(course::all_close(scale_on_cpu(input), out.download(), {0, 0}),
                                            "scale_from_host"));
  EXPECT_TRUE(scale_from_host_rules(ran))
      << "zero-copy means the kernel reads host memory over the bus: no staging copy to the device.";
}

// The same rules on views one float into their buffers, where 16-byte loads are not allowed: the
// kernel that runs there (a scalar one, if the aligned case has its own) is also on the stream.
TEST(ScaleFromHostTechnique, OffsetViewsStayOnTheGivenStream) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  if (!course::settings().sanitizer.empty()) GTEST_SKIP() << "activity is not recorded under compute-sanitizer";
  const size_t n = 100003;
  const auto input = course::random_floats(n + 1, course::test_seed());
  MappedFloats mapped(input);
  course::DeviceBuffer<float> out(n + 1, "device_out");
  out.poison();
  course::Stream stream;
  const auto ran = course::record_activity_on(stream.get(), [&] {
    scale_from_host(mapped.device() + 1, out.data() + 1, n, stream);
  });
  CUDA_CHECK_LAUNCH("scale_from_host on views one float into their buffers");
  const auto written = out.download();
  const std::vector<float> in_view(input.begin() + 1, input.end());
  ASSERT_TRUE(course::result_is_right_first(
      course::all_close(scale_on_cpu(in_view), std::vector<float>(written.begin() + 1, written.end()), {0, 0}),
      "scale_from_host on views one float into their buffers"));
  EXPECT_TRUE(scale_from_host_rules(ran))
      << "on views one float into their buffers too, the kernel must run on `stream` and read the mapped memory "
         "itself.";
}

// 256 MiB read once over the bus. Required: 0.7 of pinned H2D cudaMemcpy copies timed between
// the calls (the link's speed at the time). H100 (PCIe 5), this repository's runs: pinned memcpy 55 GB/s; the coalesced float4
// reference 50.5-51.0 (0.92); the given chunk-per-thread kernel 10.3-11.0 (0.19).
constexpr double kZeroCopyOverPinnedPeak = 0.7;

TEST(ScaleFromHostPerf, AtLeast0_7OfPinnedCopyPeak) {
  REQUIRE_MAPPABLE_HOST_MEMORY();
  COURSE_REQUIRE_TIMING();
  SCOPED_TRACE(course::seed_note());
  ScaleRun run(size_t{1} << 26);
  ASSERT_TRUE(run.correct())
      << "scale_from_host is wrong at n = 2^26, so it was not timed: make the correctness tests pass first.";
  // The link's speed: a pinned copy of the same size timed before each call (course/gpu.h).
  course::PinnedCopyProbe link(run.n * sizeof(float));
  // A fresh input in the mapped memory, changed at random places before every timed call, and a
  // poisoned output; every call's output is checked where the input changed and at random
  // other places (course/fresh.h): each call must read the host memory again.
  auto fresh = course::random_floats(run.n, course::test_seed() + 1);
  run.mapped.refill(fresh);
  course::FreshElements elements(course::test_seed() + 2);
  std::vector<size_t> changed;
  course::FreshCalls calls;
  calls.change = [&] {
    link.time_one(run.stream);
    changed = course::change_host_elements(elements, run.mapped.host(), fresh);
    run.out.poison();
  };
  calls.check = [&] {
    return course::check_at(run.out.data(), course::merged_places(changed, elements.distinct_places(run.n, 32)),
                            [&](size_t i) { return scale_on_cpu({fresh[i]})[0]; }, {0, 0}, "device_out");
  };
  calls.rules = scale_from_host_rules;
  const auto t = course::time_on_stream(
      [&](cudaStream_t s) { scale_from_host(run.mapped.device(), run.out.data(), run.n, s); }, run.stream, calls, 2, 10);
  const double read_gbps = run.n * sizeof(float) / 1e9 / (t.median_ms / 1e3);
  course::PerfCheck perf{"scale_from_host, 256 MiB of mapped host memory", read_gbps, "GB/s", link.median_gbps(),
                         "pinned host-to-device copies timed between the calls", kZeroCopyOverPinnedPeak,
                         "each warp's reads must cover consecutive addresses (thread i reads element i of its "
                         "block's stretch), or every thread pays for a whole transaction over the bus; and the grid "
                         "must be large enough to keep many reads in flight.",
                         t};
  perf.ceiling = course::host_link_ceiling_gbps(&perf.ceiling_name);
  perf.verify_timed_output(course::all_close(scale_on_cpu(fresh), run.out.download(), {0, 0}));
  // Unless COURSE_DIAGNOSE=0, one more call, untimed, under the hardware counters: what they say
  // (tests/03-zero-copy/diagnosis.txt) goes with the verdict, never into it.
  course::diagnose_perf(perf,
                       COURSE_DIAGNOSIS_RULES_TEXT, "scale_from_host",
                       [&] {
                         scale_from_host(run.mapped.device(), run.out.data(), run.n, run.stream);
                         CUDA_CHECK(cudaStreamSynchronize(run.stream));
                       },
                       {{"minimum_bytes", static_cast<double>(run.n * sizeof(float))}});
  EXPECT_TRUE(course::meets_ratio(perf));
}

}  // namespace

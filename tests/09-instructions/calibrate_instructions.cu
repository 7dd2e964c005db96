// Calibration of chapter 09 (not a test): what intrinsics, divisions and double precision cost
// and how accurate they are, the branchy kernel against one path per warp, and three sums.
// Usage: calibrate_instructions [--csv FILE]   (FILE: section,variant,rate,unit,max_ulp,max_abs_error)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "course/calibration.h"
#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/timing.h"
#include "instructions.h"
#include "sum_data.h"

namespace {

enum class Op { kSinf, kFastSin, kExpf, kFastExp, kDivide, kFastDivide, kOneOverSqrt, kRsqrt };
struct OpInfo {
  Op op;
  const char* name;
  float lo, hi;  // the inputs' range
};
constexpr OpInfo kOps[] = {
    {Op::kSinf, "sinf(x)", -3.14159f, 3.14159f},       {Op::kFastSin, "__sinf(x)", -3.14159f, 3.14159f},
    {Op::kExpf, "expf(x)", -10.0f, 10.0f},             {Op::kFastExp, "__expf(x)", -10.0f, 10.0f},
    {Op::kDivide, "1.7f / x", 0.5f, 100.0f},           {Op::kFastDivide, "__fdividef(1.7f, x)", 0.5f, 100.0f},
    {Op::kOneOverSqrt, "1.0f / sqrtf(x)", 0.01f, 100.0f}, {Op::kRsqrt, "rsqrtf(x)", 0.01f, 100.0f},
};

template <Op kOp>
__device__ float apply(float x) {
  if constexpr (kOp == Op::kSinf) return sinf(x);
  if constexpr (kOp == Op::kFastSin) return __sinf(x);
  if constexpr (kOp == Op::kExpf) return expf(x);
  if constexpr (kOp == Op::kFastExp) return __expf(x);
  if constexpr (kOp == Op::kDivide) return 1.7f / x;
  if constexpr (kOp == Op::kFastDivide) return __fdividef(1.7f, x);
  if constexpr (kOp == Op::kOneOverSqrt) return 1.0f / sqrtf(x);
  return rsqrtf(x);
}

double on_cpu(Op op, double x) {
  switch (op) {
    case Op::kSinf: case Op::kFastSin: return std::sin(x);
    case Op::kExpf: case Op::kFastExp: return std::exp(x);
    case Op::kDivide: case Op::kFastDivide: return 1.7 / x;
    default: return 1.0 / std::sqrt(x);
  }
}

// Throughput: 64 independent evaluations per thread, summed so that none is dropped.
template <Op kOp>
__global__ void throughput_kernel(const float* in, float* out, int n, float step) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = in[i];
  float sum = 0.0f;
#pragma unroll 8
  for (int k = 0; k < 64; ++k) sum += apply<kOp>(x + k * step);
  out[i] = sum;
}

template <Op kOp>
__global__ void once_kernel(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = apply<kOp>(in[i]);
}

template <Op kOp>
void launch_op(bool once, const float* in, float* out, int n, cudaStream_t s) {
  if (once) {
    once_kernel<kOp><<<(n + 255) / 256, 256, 0, s>>>(in, out, n);
  } else {
    throughput_kernel<kOp><<<(n + 255) / 256, 256, 0, s>>>(in, out, n, 1e-7f);
  }
}

void launch(Op op, bool once, const float* in, float* out, int n, cudaStream_t s) {
  switch (op) {
    case Op::kSinf: return launch_op<Op::kSinf>(once, in, out, n, s);
    case Op::kFastSin: return launch_op<Op::kFastSin>(once, in, out, n, s);
    case Op::kExpf: return launch_op<Op::kExpf>(once, in, out, n, s);
    case Op::kFastExp: return launch_op<Op::kFastExp>(once, in, out, n, s);
    case Op::kDivide: return launch_op<Op::kDivide>(once, in, out, n, s);
    case Op::kFastDivide: return launch_op<Op::kFastDivide>(once, in, out, n, s);
    case Op::kOneOverSqrt: return launch_op<Op::kOneOverSqrt>(once, in, out, n, s);
    case Op::kRsqrt: return launch_op<Op::kRsqrt>(once, in, out, n, s);
  }
}

// Integer division by a divisor known only at run time, against shifts and masks.
template <bool kShift>
__global__ void divide_kernel(int* out, int n, int divisor, int shift) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int sum = 0;
#pragma unroll 8
  for (int k = 0; k < 64; ++k) {
    const int v = i * 64 + k;
    sum += kShift ? (v >> shift) + (v & (divisor - 1)) : v / divisor + v % divisor;
  }
  out[i] = sum;
}

// Eight independent chains of fused multiply-adds per thread, in float or in double.
template <typename T>
__global__ void fma_kernel(T* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T a[8];
  for (int c = 0; c < 8; ++c) a[c] = static_cast<T>(i + c) * static_cast<T>(1e-9);
  for (int k = 0; k < 256; ++k)
#pragma unroll
    for (int c = 0; c < 8; ++c) a[c] = a[c] * static_cast<T>(0.999) + static_cast<T>(0.001);
  T sum = 0;
  for (int c = 0; c < 8; ++c) sum += a[c];
  out[i] = sum;
}

// Kahan's compensated sum in float per thread, then the threads' sums added in float.
__global__ void sum_kahan_float_kernel(const float* __restrict__ in, std::size_t n, float* result) {
  float sum = 0.0f, carry = 0.0f;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const float y = in[i] - carry;
    const float t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(result, sum);
}

}  // namespace

int main(int argc, char** argv) {
  using sum_data::ulp_of;
  return course::run_calibration(argc, argv, "calibrate_instructions", [](const course::CalibrationArgs& args) {
    std::FILE* csv = args.csv();
    if (csv) std::fprintf(csv, "section,variant,rate,unit,max_ulp,max_abs_error\n");
    course::Stream stream;
    auto row = [&](const char* section, const std::string& variant, double rate, const char* unit, double ulp,
                   double abs_error) {
      char ulp_text[32] = "", abs_text[32] = "";
      if (ulp >= 0) std::snprintf(ulp_text, sizeof ulp_text, "%.4g", ulp);
      if (abs_error >= 0) std::snprintf(abs_text, sizeof abs_text, "%.2g", abs_error);
      std::printf("| %s | %.1f %s | %s | %s |\n", variant.c_str(), rate, unit, ulp_text, abs_text);
      // Quoted: the names hold commas. -1: not measured.
      if (csv) std::fprintf(csv, "\"%s\",\"%s\",%.2f,%s,%.3f,%.3g\n", section, variant.c_str(), rate, unit, ulp, abs_error);
    };

    // 1. Math functions and their intrinsics.
    const int n = 1 << 22;
    course::DeviceBuffer<float> in(n, "in"), out(n, "out");
    std::printf("| operation | rate | max error (ulp) | max absolute error |\n| --- | ---: | ---: | ---: |\n");
    for (const auto& op : kOps) {
      std::mt19937 random(7);
      std::uniform_real_distribution<float> pick(op.lo, op.hi);
      std::vector<float> x(n);
      for (auto& v : x) v = pick(random);
      in.upload(x);
      const auto t = course::time_on_stream([&](cudaStream_t s) { launch(op.op, false, in.data(), out.data(), n, s); },
                                            stream, 2, 10);
      launch(op.op, true, in.data(), out.data(), n, stream);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      const auto got = out.download();
      double max_ulp = 0, max_abs = 0;
      for (int i = 0; i < n; ++i) {
        const double exact = on_cpu(op.op, x[i]);
        const double error = std::fabs(got[i] - exact);
        max_abs = std::max(max_abs, error);
        if (std::fabs(exact) > 1e-3) max_ulp = std::max(max_ulp, error / ulp_of(static_cast<float>(exact)));
      }
      row("math", op.name, 64.0 * n / 1e9 / (t.median_ms / 1e3), "G/s", max_ulp, max_abs);
    }

    // 2. Integer division and modulo by 32: at run time, and as a shift and a mask.
    course::DeviceBuffer<int> ints(n, "ints");
    for (bool shift : {false, true}) {
      const auto t = course::time_on_stream([&](cudaStream_t s) {
        if (shift) {
          divide_kernel<true><<<(n + 255) / 256, 256, 0, s>>>(ints.data(), n, 32, 5);
        } else {
          divide_kernel<false><<<(n + 255) / 256, 256, 0, s>>>(ints.data(), n, 32, 5);
        }
      }, stream, 2, 10);
      row("integer", shift ? "v >> 5, v & 31" : "v / d, v % d (d = 32 at run time)", 64.0 * n / 1e9 / (t.median_ms / 1e3),
          "G/s", -1, -1);
    }

    // 3. Fused multiply-adds in float and in double.
    course::DeviceBuffer<double> doubles(n, "doubles");
    const auto t_float = course::time_on_stream(
        [&](cudaStream_t s) { fma_kernel<float><<<(n + 255) / 256, 256, 0, s>>>(out.data(), n); }, stream, 2, 10);
    const auto t_double = course::time_on_stream(
        [&](cudaStream_t s) { fma_kernel<double><<<(n + 255) / 256, 256, 0, s>>>(doubles.data(), n); }, stream, 2, 10);
    const double fmas = 8.0 * 256 * n;
    row("precision", "float fused multiply-add", 2 * fmas / 1e12 / (t_float.median_ms / 1e3), "TFLOP/s", -1, -1);
    row("precision", "double fused multiply-add", 2 * fmas / 1e12 / (t_double.median_ms / 1e3), "TFLOP/s", -1, -1);

    // 4. Divergence: both paths in every warp, or one.
    const int shade_n = 1 << 24;
    course::DeviceBuffer<float> shade_in(shade_n, "shade in"), shade_out(shade_n, "shade out");
    {
      std::mt19937 random(11);
      std::uniform_real_distribution<float> pick(-0.9f, 0.9f);
      std::vector<float> x(shade_n);
      for (auto& v : x) v = pick(random);
      shade_in.upload(x);
    }
    const auto t_branchy = course::time_on_stream(
        [&](cudaStream_t s) { shade_branchy(shade_in.data(), shade_out.data(), shade_n, s); }, stream, 2, 10);
    const auto t_uniform = course::time_on_stream(
        [&](cudaStream_t s) { shade_uniform(shade_in.data(), shade_out.data(), shade_n, s); }, stream, 2, 10);
    row("divergence", "branchy: both paths in every warp", shade_n / 1e9 / (t_branchy.median_ms / 1e3), "Gelem/s", -1, -1);
    row("divergence", "uniform: one path per warp", shade_n / 1e9 / (t_uniform.median_ms / 1e3), "Gelem/s", -1, -1);

    // 5. Three sums of 2^26 values of both signs scaled by 2^-6 to 2^6; then the same values with
    //    +3e7 and -3e7 in turn, one at a random place in every 1024 values (the tests' data).
    const std::size_t sum_n = std::size_t{1} << 26;
    course::DeviceBuffer<float> sum_in(sum_n, "values"), result(1, "result");
    course::DeviceBuffer<double> workspace(kSumWorkspaceDoubles, "workspace");
    const int sms = course::current_device().sm_count;
    for (const char* data : {"mixed", "cancelling"}) {
      const auto values = data[0] == 'c' ? sum_data::cancelling_values(sum_n, 13) : sum_data::mixed_values(sum_n, 13);
      sum_in.upload(values);
      const double exact = sum_data::exact_sum(values), magnitudes = sum_data::sum_of_magnitudes(values);
      std::printf("\n%s values: exact sum %.17g; sum of magnitudes %.6g\n", data, exact, magnitudes);
      const std::string section = std::string("sum (") + data + ")";
      auto sum_row = [&](const char* name, const std::function<void(cudaStream_t)>& work) {
        const auto t = course::time_on_stream(work, stream, 2, 10);
        const float got = result.download()[0];
        row(section.c_str(), name, 4.0 * sum_n / 1e9 / (t.median_ms / 1e3), "GB/s",
            std::fabs(got - exact) / ulp_of(static_cast<float>(exact)), std::fabs(got - exact));
      };
      sum_row("float, blocks added with atomicAdd (given)", [&](cudaStream_t s) {
        sum_float(sum_in.data(), sum_n, result.data(), workspace.data(), s);
      });
      sum_row("Kahan in float per thread, then float", [&](cudaStream_t s) {
        CUDA_CHECK(cudaMemsetAsync(result.data(), 0, sizeof(float), s));
        sum_kahan_float_kernel<<<sms * 8, 256, 0, s>>>(sum_in.data(), sum_n, result.data());
      });
      sum_row("double throughout, one rounding (reference)", [&](cudaStream_t s) {
        sum_accurate(sum_in.data(), sum_n, result.data(), workspace.data(), s);
      });
    }
  });
}

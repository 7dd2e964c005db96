/// @file instructions.h
/// @brief Chapter 09 contract: warps that take one path, and a sum that is both fast and right.
///
/// Exercises (in uniform_paths.cu and accurate_sum.cu): the same per-element work as the given
/// branchy kernel, arranged so that all 32 threads of a warp take the same branch; and the sum
/// of a large float array to within 2 ulp of the exact sum (unless its values cancel by many
/// orders of magnitude, see sum_accurate), at the speed of memory. The
/// functions only enqueue work on `stream` and return; the caller synchronises and checks errors.
///
/// **Rules** (checked by the `...Technique` tests from what ran, and on a call of each perf test
/// drawn at random, at its size):
/// - Your own kernels only (no cuBLAS, CUB or Thrust), on the stream you are given, no copies
///   (ShadeUniformTechnique.OwnKernelOnTheGivenStream, AccurateSumTechnique.OwnKernelsOnTheGivenStream,
///   ShadeUniformPerf, AccurateSumPerf).
/// - `shade_uniform` computes every element with `even_path` / `odd_path` below, unchanged
///   (ShadeUniform.MatchesTheGivenPaths).
/// - Only the CUDA runtime (CodePolicy).
///
/// **Performance**, ratios to a baseline measured in the same process, as the chapter's README
/// explains (an instructor may scale the bars: COURSE_PERF_SCALE): shade_uniform at least 1.6 times
/// the given shade_branchy (ShadeUniformPerf.AtLeast1_6xBranchy); sum_accurate at least 0.75 of the
/// given sum_float's rate (AccurateSumPerf.AtLeast0_75xGivenFloatSum).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

/// Terms of the polynomial of the even elements.
constexpr int kEvenTerms = 512;
/// Terms of the polynomial of the odd elements (in x squared).
constexpr int kOddTerms = 384;

/// The k-th coefficient of a path: small values in [-0.5, 0.4375] that follow no simple
/// formula a compiler could fold.
__host__ __device__ inline float path_coefficient(int k, int salt) {
  return static_cast<float>((k * 37 + salt) % 17 - 8) * 0.0625f;
}

/// The work of an element at an even index: a polynomial of degree kEvenTerms - 1 in x,
/// evaluated by Horner's rule (one fused multiply-add per term).
__host__ __device__ inline float even_path(float x) {
  float y = 0.0f;
  for (int k = 0; k < kEvenTerms; ++k) y = fmaf(y, x, path_coefficient(k, 3));
  return y;
}

/// The work of an element at an odd index: a polynomial of degree kOddTerms - 1 in x * x,
/// times x.
__host__ __device__ inline float odd_path(float x) {
  const float x2 = x * x;
  float y = 0.0f;
  for (int k = 0; k < kOddTerms; ++k) y = fmaf(y, x2, path_coefficient(k, 11));
  return y * x;
}

/// Given: out[i] = even_path(in[i]) for even i, odd_path(in[i]) for odd i, one thread per
/// element: in every warp, 16 threads take one branch and 16 the other, so each warp runs both.
void shade_branchy(const float* in, float* out, int n, cudaStream_t stream);

/// Exercise 1: the same results (any n >= 0; n = 0 enqueues nothing and writes nothing; n up to
/// 2^31 - 1, where a launch size or an index rounded up in an int wraps:
/// ShadeUniformDeviceWide), with the threads of each warp all working on even elements or all on
/// odd ones, so that a warp runs one path only (ShadeUniform, ShadeUniformCalls). `in` and `out`
/// are device memory as cudaMalloc returns it (256-byte aligned: no offset views are tested).
void shade_uniform(const float* in, float* out, int n, cudaStream_t stream);

/// Doubles of scratch memory the sums may use (device memory, contents undefined on entry).
constexpr std::size_t kSumWorkspaceDoubles = 4096;

/// Given: the sum of in[0..n) in float: each thread adds its elements, the block adds its
/// threads' sums, and each block adds its result to *result with atomicAdd. Fast, but both the
/// result and its error depend on the order of the additions.
void sum_float(const float* in, std::size_t n, float* result, double* workspace, cudaStream_t stream);

/// Exercise 2: *result = the exact sum S of in[0..n) (0 <= n <= 2^32; 0 for n = 0), rounded to
/// float, with an error of at most
///     2 ulp(S) + 2^-40 * (|in[0]| + ... + |in[n-1]|)
/// whatever the order and signs of the values (ulp(S): the spacing of floats at S rounded to
/// float). While the values cancel by less than 2^15 (sum of magnitudes < 2^15 |S|) that is
/// within 2.5 ulp; below it, e.g. {1e38, 1, -1e38}, nothing closer than 2^-40 of the sum of
/// magnitudes is promised. Any order of additions in double (53 bits) that passes each value
/// through at most 2^11 roundings meets it; the tests also accept float pairs (hi and lo with
/// TwoSum, 48 bits), on every seed, while each thread's partial sums stay within the float
/// range (a pair's hi overflows where one thread adds several values near FLT_MAX, which the
/// tests never give one thread: that is outside what is promised to pairs), and reject
/// additions in float (AccurateSum). Special values: a NaN, or both +inf and -inf, give NaN;
/// otherwise an infinity gives that infinity; finite values whose S is beyond the float range
/// (|S| >= 2^128) and that cancel by 2^16 at most give the infinity of S's sign
/// (AccurateSumValues). Every call sums its own input (AccurateSumCalls). `in`, `result` and
/// `workspace` are device memory as cudaMalloc returns it (256-byte aligned: the tests give no
/// offset views, so 16-byte loads of `in` need no alignment check). As fast as reading the input allows (see the chapter's tests).
void sum_accurate(const float* in, std::size_t n, float* result, double* workspace, cudaStream_t stream);

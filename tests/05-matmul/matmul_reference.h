// References for the chapter 05 tests and calibration: double-precision CPU products and
// cuBLAS in strict FP32 (CUBLAS_PEDANTIC_MATH: no TF32, no reduced precision).
#pragma once

#include <cublas_v2.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "course/compare.h"
#include "course/cuda_check.h"

namespace matmul_reference {

/// C = A·B in double, row-major; i-k-j order so the inner loop streams rows.
inline std::vector<double> matmul_cpu(const std::vector<float>& A, const std::vector<float>& B, int M,
                                      int N, int K) {
  std::vector<double> C(static_cast<size_t>(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const double a = A[static_cast<size_t>(i) * K + k];
      const float* b = &B[static_cast<size_t>(k) * N];
      double* c = &C[static_cast<size_t>(i) * N];
      for (int j = 0; j < N; ++j) c[j] += a * b[j];
    }
  return C;
}

/// C = A·Aᵀ in double (M x M).
inline std::vector<double> aat_cpu(const std::vector<float>& A, int M, int K) {
  std::vector<double> C(static_cast<size_t>(M) * M, 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < M; ++j) {
      double sum = 0;
      for (int k = 0; k < K; ++k)
        sum += static_cast<double>(A[static_cast<size_t>(i) * K + k]) * A[static_cast<size_t>(j) * K + k];
      C[static_cast<size_t>(i) * M + j] = sum;
    }
  return C;
}

/// Float dot products of length K with inputs in [-1, 1]: rounding errors grow with K.
/// 1e-6 per term is ~10x the typical error and far below any indexing mistake (~0.1).
inline course::Tolerance dot_product_tolerance(int K) { return {1e-6 * K + 1e-6, 1e-5}; }

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: cuBLAS status " + std::to_string(status));
}

/// Owns a cuBLAS handle set to strict FP32 arithmetic.
class Cublas {
 public:
  Cublas() {
    check_cublas(cublasCreate(&handle_), "cublasCreate");
    check_cublas(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  ~Cublas() { cublasDestroy(handle_); }

  /// Row-major C = A·B: in column-major terms Cᵀ = Bᵀ·Aᵀ.
  void matmul(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
    const float one = 1.0f, zero = 0.0f;
    check_cublas(cublasSetStream(handle_, stream), "cublasSetStream");
    check_cublas(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N),
                 "cublasSgemm");
  }
  /// Row-major C = A·Aᵀ: A read as column-major is X = Aᵀ (K x M), and C = Xᵀ·X.
  void aat(const float* A, float* C, int M, int K, cudaStream_t stream) {
    const float one = 1.0f, zero = 0.0f;
    check_cublas(cublasSetStream(handle_, stream), "cublasSetStream");
    check_cublas(cublasSgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, M, M, K, &one, A, K, A, K, &zero, C, M),
                 "cublasSgemm");
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace matmul_reference

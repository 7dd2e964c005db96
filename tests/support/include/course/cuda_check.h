/// @file cuda_check.h
/// @brief The one error-checking helper of the course: every CUDA call goes through it.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace course {

/// A failed CUDA call, with the call's text, file and line in what().
class CudaError : public std::runtime_error {
 public:
  /// An error `code` with the full `message` (see describe_cuda_error).
  CudaError(cudaError_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  /// The CUDA error code that was returned.
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

/// Student code wrote outside a buffer the test gave it (guards.h says how it is caught).
class OutOfBoundsWrite : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Builds the message for a failed call: "<expr> failed at <file>:<line>: <name>: <description>".
std::string describe_cuda_error(cudaError_t code, const char* expr, const char* file, int line);

/// Throws CudaError for a failed call; used by CUDA_CHECK.
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line);

/// Checks the launches made by `what` (a contract function the test just called): a bad
/// launch configuration shows in cudaGetLastError, a fault inside a kernel at the
/// synchronisation (CudaError), a write outside a test buffer in its guard zones
/// (OutOfBoundsWrite). Each names `what`.
void check_launch(const char* what, const char* file, int line);

}  // namespace course

/// Evaluates a CUDA runtime call and throws course::CudaError if it did not return cudaSuccess.
#define CUDA_CHECK(expr)                                                    \
  do {                                                                      \
    const cudaError_t course_status_ = (expr);                              \
    if (course_status_ != cudaSuccess)                                      \
      ::course::throw_cuda_error(course_status_, #expr, __FILE__, __LINE__); \
  } while (0)

/// After calling code that launches kernels: checks the launch and waits for the device.
#define CUDA_CHECK_LAUNCH(what) ::course::check_launch((what), __FILE__, __LINE__)

#include "course/cuda_check.h"

#include <sstream>

#include "course/guards.h"

namespace course {

std::string describe_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  std::ostringstream out;
  out << expr << " failed at " << file << ":" << line << ": " << cudaGetErrorName(code) << ": "
      << cudaGetErrorString(code);
  return out.str();
}

void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  throw CudaError(code, describe_cuda_error(code, expr, file, line));
}

void check_launch(const char* what, const char* file, int line) {
  const std::string prefix = std::string("launching ") + what;
  cudaError_t code = cudaGetLastError();
  if (code != cudaSuccess)
    throw CudaError(code, describe_cuda_error(code, (prefix + " (launch)").c_str(), file, line));
  code = cudaDeviceSynchronize();
  if (code != cudaSuccess)
    throw CudaError(code,
                    describe_cuda_error(code, (prefix + " (while running)").c_str(), file, line));
  const std::string damage = guard_check_all();
  if (!damage.empty()) throw OutOfBoundsWrite(std::string(what) + " " + damage);
}

}  // namespace course

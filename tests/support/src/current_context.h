// The support library's own: the current CUDA context, through the runtime's driver entry points
// (the tests do not link the driver library, so that they start on machines without a GPU).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace course::detail {

inline CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* function = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &status) != cudaSuccess ||
      function == nullptr)
    return nullptr;
  CUcontext context = nullptr;
  reinterpret_cast<GetCurrent>(function)(&context);
  return context;
}

}  // namespace course::detail

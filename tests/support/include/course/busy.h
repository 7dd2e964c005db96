/// @file busy.h
/// @brief Holding a stream back for a while, to see whether code under test waits for it.
#pragma once

#include <cuda_runtime_api.h>

namespace course {

/// Enqueues on `stream` one single-thread kernel that runs for `milliseconds` (it reads the
/// GPU's global timer): whatever is enqueued on `stream` after it starts that much later.
void hold_stream(cudaStream_t stream, double milliseconds);

}  // namespace course

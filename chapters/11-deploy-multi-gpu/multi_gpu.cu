// Chapter 11, exercise 2: one computation over several GPUs. Edit this file only.
// Read README.md beside it first; tests: ctest --preset student -R 11-deploy
#include <vector>

#include "deploy.h"

cudaError_t compute_on_devices(const float* host_in, float* host_out, size_t n, int iterations, const int* devices,
                               int device_count) {
  if (n == 0 || device_count < 1) return cudaSuccess;
  // TODO(1): Check that every id in devices[0, device_count) is a device (0 <= id <
  //          cudaGetDeviceCount), else return cudaErrorInvalidDevice before allocating anything.
  //          Remember the caller's current device (cudaGetDevice), to restore it at the end.

  // TODO(2): For each d in [0, device_count): cudaSetDevice(devices[d]); create a stream and
  //          allocate device memory for part d (elements [d·n/device_count, (d+1)·n/device_count));
  //          enqueue its upload, heavy_kernel and download on that stream. Do not wait here:
  //          the next device should start while this one works.

  // TODO(3): Then, for each device: make it current, synchronise its stream, and release its
  //          stream and memory. Keep the first error you meet and return it at the end, after
  //          restoring the caller's current device.
  return cudaErrorNotYetImplemented;
}

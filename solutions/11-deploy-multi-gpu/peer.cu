// Reference solution of chapter 11, exercise 2: copies between GPUs.
#include "deploy.h"

namespace {
// Enables access from `device` to `peer`'s memory if allowed; true if it is on.
bool enable_one_way(int device, int peer) {
  int can_access = 0;
  if (cudaDeviceCanAccessPeer(&can_access, device, peer) != cudaSuccess || !can_access) return false;
  if (cudaSetDevice(device) != cudaSuccess) return false;
  const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();  // not an error for us
  return status == cudaSuccess || status == cudaErrorPeerAccessAlreadyEnabled;
}
}  // namespace

bool enable_peer_access(int a, int b) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return false;
  if (a < 0 || b < 0 || a >= count || b >= count) return false;  // not devices: nothing to enable
  if (a == b) return true;
  int caller_device = 0;
  if (cudaGetDevice(&caller_device) != cudaSuccess) return false;
  const bool a_to_b = enable_one_way(a, b);
  const bool b_to_a = enable_one_way(b, a);
  cudaSetDevice(caller_device);
  return a_to_b && b_to_a;
}

void copy_between_devices(float* dst, int dst_device, const float* src, int src_device, size_t n,
                          cudaStream_t stream) {
  cudaMemcpyPeerAsync(dst, dst_device, src, src_device, n * sizeof(float), stream);
}

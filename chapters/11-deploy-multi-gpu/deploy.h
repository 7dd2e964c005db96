/// @file deploy.h
/// @brief Chapter 11 contract: what a binary carries for which GPU, and using several GPUs.
///
/// **Performance**, ratios to a baseline measured in the same process, as the chapter's README
/// explains (an instructor may scale the bars: COURSE_PERF_SCALE), on two GPUs: compute_on_devices
/// over both at least 1.7 times its rate on one (MultiGpuPerf.TwoGpusAtLeast1_7xOne);
/// copy_between_devices with peer access at least 5 times a copy through host memory
/// (PeerAccessPerf.AtLeast5xWithoutPeerAccess).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// Given (given/build_info.cu): __CUDA_ARCH_LIST__ as this chapter's code was compiled, e.g.
/// "800,900": the virtual architectures nvcc compiled it for.
const char* chapter_cuda_arch_list();

/// Given: runs a one-thread kernel on the current device and returns the __CUDA_ARCH__ its
/// running code was compiled for (e.g. 900), or 0 if the launch failed (see cudaGetLastError).
int running_cuda_arch();

/// Given: cudaFuncGetAttributes of that kernel (binaryVersion, ptxVersion, ...).
cudaError_t probe_kernel_attributes(cudaFuncAttributes* attributes);

/// Given: a compute-bound kernel on the current device: each out[i] starts from in[i] and
/// applies `iterations` steps of x = fmaf(x, 0.999f, 0.001f).
void heavy_kernel(const float* device_in, float* device_out, size_t n, int iterations, cudaStream_t stream);

/// Exercise 2 (multi_gpu.cu): host_out = heavy_kernel(host_in), with [0, n) split into
/// `device_count` nearly equal parts, part d computed on device devices[d]. Host buffers are
/// pinned. Each device gets its own stream, memory and copies, and all devices work at the
/// same time. Returns when host_out is complete (the tests read it the moment the call
/// returns, MultiGpu.MatchesCpuOnOneDevice), with every allocation and stream released
/// (ComputeOnDevicesCalls.ReleasesItsMemoryBeforeReturning), whatever allocated it and whether
/// the call succeeded or failed: cudaMalloc's memory too, measured as the device's free memory
/// (ComputeOnDevicesDeviceWide.SuccessfulCallsLeakNoDeviceMemory), and the caller's current
/// device restored. Returns the first CUDA error, or cudaSuccess. What is tested, and so
/// promised, goes up to n = 2^24 (64 MiB of pinned memory per buffer). n may be up to 2^31 - 1:
/// allowed, not tested (8 GiB of pinned memory per buffer), so keep sizes in bytes in size_t.
/// n = 0 or device_count <= 0: cudaSuccess at once, nothing read or written (`devices` may then
/// be null) (ComputeOnDevicesCalls.NothingToDo). n may be below device_count (empty parts do nothing),
/// and a device may appear more than once, each entry its own part
/// (MultiGpu.MatchesCpuWithMorePartsThanElements, ComputeOnDevicesCalls.SameDeviceTwice). Otherwise an id
/// that is not a device (negative, or not below cudaGetDeviceCount), anywhere in the list and
/// whatever n, gives cudaErrorInvalidDevice, not a crash, with everything released and the
/// current device restored (ComputeOnDevicesCalls.InvalidDeviceIdIsAnError,
/// ComputeOnDevicesDeviceWide.InvalidDeviceIdReleasesWhatItAllocated). These need one GPU.
/// Rules, checked from what runs (MultiGpuTechnique, two GPUs): kernels and copies run on every
/// device of the list.
/// Rules, checked from the runtime calls (ComputeOnDevicesTechnique, one GPU): every stream it
/// creates is destroyed; memory from cudaMallocAsync is freed on the stream that uses it, or
/// after waiting for that stream (never while a kernel may still read it).
cudaError_t compute_on_devices(const float* host_in, float* host_out, size_t n, int iterations, const int* devices,
                               int device_count);

/// Exercise 2 (peer.cu): enables direct access between devices a and b in both directions
/// if cudaDeviceCanAccessPeer allows it (enabling twice is not an error). Returns true if
/// direct access is on afterwards. Restores the caller's current device, whichever device calls
/// and whichever way round a and b are named (PeerAccess.RestoresTheCallersDeviceEitherWay, two
/// GPUs). a == b (a device):
/// true, nothing to enable. An id that is not a device (negative, or not below
/// cudaGetDeviceCount), a == b included: false, not a crash (EnablePeerCalls.SameDeviceAndInvalidIds).
/// Both directions on, two GPUs that allow it: PeerAccess.CopiesBetweenTwoDevices.
bool enable_peer_access(int a, int b);

/// Exercise 2 (peer.cu): copies n floats from `src` on device `src_device` to `dst` on
/// device `dst_device`, asynchronously on `stream` (cudaMemcpyPeerAsync). With peer access
/// enabled, the copy goes directly over NVLink or PCIe instead of through host memory.
/// Rule (PeerAccessTechnique, two GPUs): a device-to-device copy, nothing through host memory.
void copy_between_devices(float* dst, int dst_device, const float* src, int src_device, size_t n,
                          cudaStream_t stream);

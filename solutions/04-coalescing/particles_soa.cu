// Reference solution of chapter 04, exercise 1: the step on a structure of arrays.
#include "coalescing.h"

namespace {

__global__ void advance_soa_kernel(float* __restrict__ x, float* __restrict__ y, float* __restrict__ z,
                                   const float* __restrict__ vx, const float* __restrict__ vy,
                                   const float* __restrict__ vz, std::size_t count, float dt) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= count) return;
  // Each array is read (and written) by 32 consecutive threads at 32 consecutive addresses.
  x[i] += vx[i] * dt;
  y[i] += vy[i] * dt;
  z[i] += vz[i] * dt;
}

}  // namespace

void advance_soa(const ParticlesSoA& p, float dt, cudaStream_t stream) {
  if (p.count == 0) return;
  advance_soa_kernel<<<static_cast<unsigned>((p.count + 255) / 256), 256, 0, stream>>>(p.x, p.y, p.z, p.vx, p.vy,
                                                                                      p.vz, p.count, dt);
}

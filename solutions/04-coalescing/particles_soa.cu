// Reference solution of chapter 04, exercise 1: a time step on a structure of arrays.
#include <cstdint>

#include "coalescing.h"

namespace {

// Four particles per thread, as one 16-byte load or store of each array: a warp still reads
// and writes consecutive bytes of each array (512 of them per instruction), and with four
// times fewer memory instructions each thread keeps more bytes in flight, which the faster
// memory of an H200 needs to stay busy. Threads past the last whole group of four take one of
// the count % 4 particles left.
__global__ void advance_soa_vector_kernel(float* __restrict__ x, float* __restrict__ y, float* __restrict__ z,
                                          const float* __restrict__ vx, const float* __restrict__ vy,
                                          const float* __restrict__ vz, std::size_t count, float dt) {
  const std::size_t groups = count / 4;
  const std::size_t g = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (g < groups) {
    auto step = [dt, g](float* position, const float* velocity) {
      float4 p = reinterpret_cast<float4*>(position)[g];
      const float4 v = reinterpret_cast<const float4*>(velocity)[g];
      p.x += v.x * dt;
      p.y += v.y * dt;
      p.z += v.z * dt;
      p.w += v.w * dt;
      reinterpret_cast<float4*>(position)[g] = p;
    };
    step(x, vx);
    step(y, vy);
    step(z, vz);
  } else if (const std::size_t i = 4 * groups + (g - groups); i < count) {
    x[i] += vx[i] * dt;
    y[i] += vy[i] * dt;
    z[i] += vz[i] * dt;
  }
}

// One particle per thread: each array is read (and written) by 32 consecutive threads at 32
// consecutive addresses. For arrays that are not 16-byte aligned.
__global__ void advance_soa_kernel(float* __restrict__ x, float* __restrict__ y, float* __restrict__ z,
                                   const float* __restrict__ vx, const float* __restrict__ vy,
                                   const float* __restrict__ vz, std::size_t count, float dt) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= count) return;
  x[i] += vx[i] * dt;
  y[i] += vy[i] * dt;
  z[i] += vz[i] * dt;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

unsigned blocks_for(std::size_t threads) { return static_cast<unsigned>((threads + 255) / 256); }

}  // namespace

void advance_soa(const ParticlesSoA& p, float dt, cudaStream_t stream) {
  if (p.count == 0) return;
  if (aligned16(p.x) && aligned16(p.y) && aligned16(p.z) && aligned16(p.vx) && aligned16(p.vy) && aligned16(p.vz)) {
    const std::size_t threads = p.count / 4 + p.count % 4;
    advance_soa_vector_kernel<<<blocks_for(threads), 256, 0, stream>>>(p.x, p.y, p.z, p.vx, p.vy, p.vz, p.count, dt);
  } else {
    advance_soa_kernel<<<blocks_for(p.count), 256, 0, stream>>>(p.x, p.y, p.z, p.vx, p.vy, p.vz, p.count, dt);
  }
}

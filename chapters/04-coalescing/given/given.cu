// Given: the array-of-structures step and the one-thread-per-row sums.
#include "coalescing.h"

namespace {

__global__ void advance_aos_kernel(Particle* particles, std::size_t count, float dt) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= count) return;
  Particle& p = particles[i];  // neighbours in a warp are 32 bytes apart
  p.x += p.vx * dt;
  p.y += p.vy * dt;
  p.z += p.vz * dt;
}

__global__ void row_sums_naive_kernel(const float* matrix, float* sums, int rows, int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) sum += matrix[static_cast<std::size_t>(row) * cols + c];  // cols floats apart
  sums[row] = sum;
}

}  // namespace

void advance_aos(Particle* particles, std::size_t count, float dt, cudaStream_t stream) {
  if (count == 0) return;
  advance_aos_kernel<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(particles, count, dt);
}

void row_sums_naive(const float* matrix, float* sums, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0) return;
  row_sums_naive_kernel<<<(rows + 255) / 256, 256, 0, stream>>>(matrix, sums, rows, cols);
}

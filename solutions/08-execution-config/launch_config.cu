// Reference solution of chapter 08, exercise 1: the occupancy API chooses the block size.
#include <algorithm>

#include "execution_config.h"

LaunchConfig choose_chase_launch(int starts) {
  LaunchConfig config;
  if (starts <= 0) return config;
  // The block size that lets the most threads reside on an SM given the kernel's registers and
  // its kChaseSharedBytes per block, and the smallest grid that fills every SM with such blocks.
  int min_grid = 0, block = 0;
  if (cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, chase_kernel_handle(), kChaseSharedBytes) != cudaSuccess ||
      block <= 0)
    return config;
  config.block = block;
  // The grid-stride loop covers any number of chains; more blocks than chains / block would idle.
  // starts / block rounded up without starts + block - 1, which overflows near INT_MAX.
  const int needed = starts / block + (starts % block != 0 ? 1 : 0);
  config.grid = std::max(1, std::min(min_grid, needed));
  return config;
}

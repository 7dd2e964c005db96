/// @file coalescing.h
/// @brief Chapter 04 contract: memory accesses that a warp can coalesce.
///
/// Exercises (in particles_soa.cu and row_sums.cu): move particles stored as a structure of
/// arrays, and sum the rows of a row-major matrix with the reads of a warp side by side.
///
/// **Rules** (checked by the `...Technique` tests from what ran, and on a call of each perf test
/// drawn at random, at its size):
/// - Your own kernels only (no cuBLAS, CUB or Thrust), on the stream you are given
///   (AdvanceSoATechnique.OwnKernelOnTheGivenStream, AdvanceSoATechnique.OffsetViewsOnTheGivenStream,
///   RowSumsCoalescedTechnique, AdvanceSoAPerf, RowSumsCoalescedPerf).
/// - `row_sums_coalesced`: the lanes of a warp read a row side by side; counted while the
///   kernels run on a matrix of 3 rows of 2^18 floats, the global loads a warp executes move at
///   least 96 bytes each on average (a warp's 32 lanes x 4 bytes = 128; one thread per row moves
///   at most 3 x 16). How many threads, warps or blocks take a row is free
///   (RowSumsCoalescedCountedTechnique.AWarpReadsEachRowSideBySide).
/// - Only the CUDA runtime (CodePolicy).
///
/// **Domain** (both functions): pointers may be views into larger arrays, each at any float's
/// address of its own (not only 16-byte aligned: AdvanceSoAViews, RowSumsCoalescedViews); inputs
/// and outputs do not overlap. Calls are independent: a later call with other sizes or pointers
/// owes nothing to an earlier one (AdvanceSoARepeated, RowSumsCoalescedRepeated). Work is enqueued on `stream`; the
/// caller synchronises and checks errors. `count` may be 0 (nothing to do: no launch, since a grid
/// of 0 blocks is an error) and up to 2^31 - 1 (AdvanceSoADeviceWide.TheLargestCount: 2^31 - 1
/// particles, with one array for the three velocities, which may be shared as they are only
/// read; it skips where 35 GB are not free): a grid's size or an index computed in an int wraps
/// there. 2^31 particles take 48 GiB in six arrays, too much to test, so larger counts are not
/// promised.
/// `rows` and `cols` from 0 to 2^30 (RowSumsCoalesced): rows = 0 writes nothing, cols = 0 writes
/// sums of 0; rows may exceed what a grid's y dimension holds (3,000,000 x 1), 32 threads per row
/// may exceed the int range (RowSumsCoalescedTallMatrix: 2^26 + 1 rows), and rows x cols may
/// exceed 2^31 elements (RowSumsCoalescedDeviceWide: 65537 x 32768 floats), so thread and element
/// indices need 64 bits.
///
/// **Performance**, ratios to a baseline measured in the same process, as the chapter's README
/// explains (an instructor may scale the bars: COURSE_PERF_SCALE): advance_soa and
/// row_sums_coalesced at least 0.70 of the device-to-device copy peak
/// (AdvanceSoAPerf.NearTheCopyPeak, RowSumsCoalescedPerf.NearTheCopyPeak).
///
/// **Accuracy**: advance_soa within 1e-6 absolute plus 1e-6 relative of the double-precision step
/// (one rounding); a row sum within 1e-6 cols + 1e-6 absolute plus 1e-5 relative of the
/// double-precision sum (float additions in any order).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// One particle, as an array of structures stores it: 32 bytes, of which a step reads 24 and
/// writes 12.
struct Particle {
  float x;       ///< position
  float y;       ///< position
  float z;       ///< position
  float vx;      ///< velocity
  float vy;      ///< velocity
  float vz;      ///< velocity
  float mass;    ///< not used by a step
  float charge;  ///< not used by a step
};

/// The same particles as a structure of arrays: each field its own array of `count` floats.
struct ParticlesSoA {
  float* x;           ///< positions, `count` floats
  float* y;           ///< positions
  float* z;           ///< positions
  const float* vx;    ///< velocities, `count` floats
  const float* vy;    ///< velocities
  const float* vz;    ///< velocities
  std::size_t count;  ///< particles
};

/// Given: one time step on an array of structures, p[i].x += p[i].vx * dt (and y, z).
void advance_aos(Particle* particles, std::size_t count, float dt, cudaStream_t stream);

/// Exercise 1: the same step on a structure of arrays: x[i] += vx[i] * dt (and y, z), for the
/// `dt` given (AdvanceSoATimeStep), with a warp reading consecutive floats of each array (one
/// thread per particle does; more particles per thread, or wider loads, are as good).
void advance_soa(const ParticlesSoA& particles, float dt, cudaStream_t stream);

/// Given: sums[r] = sum of row r of the row-major `rows` x `cols` matrix, one thread per row:
/// at each step the 32 threads of a warp read 32 elements `cols` floats apart.
void row_sums_naive(const float* matrix, float* sums, int rows, int cols, cudaStream_t stream);

/// Exercise 2: the same sums with coalesced reads: the lanes of a warp read a row side by side,
/// for example a warp per row, lane l reading elements l, l + 32, l + 64, ... of its row, the
/// lanes' partial sums added with warp shuffles (how many threads take a row is free: Rules).
void row_sums_coalesced(const float* matrix, float* sums, int rows, int cols, cudaStream_t stream);

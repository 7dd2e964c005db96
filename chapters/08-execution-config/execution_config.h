/// @file execution_config.h
/// @brief Chapter 08 contract: launch configurations, concurrent kernels, stream-ordered memory.
///
/// Exercises (in launch_config.cu, concurrent_tasks.cu and stream_allocator.cu): choose the
/// launch configuration of a latency-bound kernel with the occupancy API; run independent small
/// kernels at the same time on several streams and combine their results in order; and replace
/// a cudaMalloc / cudaFree per batch with the stream-ordered allocator.
///
/// **Rules** (checked by the `...Technique` tests from what ran):
/// - `choose_chase_launch` only chooses, by asking the occupancy API about the chase kernel
///   (ChooseChaseLaunchTechnique.AsksTheOccupancyApiAboutTheChaseKernel); the tests launch the
///   given kernel with its choice, which fills every SM as full as the kernel allows
///   (ChooseChaseLaunch.FillsEverySmAsFullAsTheKernelAllows, ChaseLaunchPerf).
/// - `run_tasks`: the given kernels only, spread over all the streams you are given, the combine
///   on streams[0], no copies (the caller waits for streams[0] only)
///   (RunTasksTechnique.SpreadsTheTasksOverTheStreams); the streams joined on the GPU with
///   events, never by waiting on the host (RunTasksTechnique.JoinsWithEventsNotOnTheHost); a
///   call of RunTasksPerf drawn at random is held to both (RunTasksPerf).
/// - `process_batches_async`: the given kernels on the given stream, each batch's scratch
///   memory from cudaMallocAsync and given back with cudaFreeAsync (the device's default pool
///   is watched) (ProcessBatchesAsyncTechnique.ScratchFromTheStreamOrderedPool), after the last
///   kernel that uses it (ProcessBatchesAsyncTechnique.ScratchGivenBackAfterItsLastUse, and a call
///   of ProcessBatchesAsyncPerf drawn at random).
///
/// **Performance**, ratios to a baseline measured in the same process, as the chapter's README
/// explains (an instructor may scale the bars: COURSE_PERF_SCALE): the chase with your launch at
/// least 0.90 of the best block size of a sweep timed first
/// (ChaseLaunchPerf.WithinTenPercentOfTheBestSweep); run_tasks at least 4 times the given
/// run_tasks_serial (RunTasksPerf.AtLeast4xSerial); process_batches_async at least 4 times the
/// given process_batches_with_malloc (ProcessBatchesAsyncPerf.AtLeast4xWithMalloc).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// ------------------------------------------------------------------ exercise 1: occupancy

/// Grid and block sizes (1-D).
struct LaunchConfig {
  int grid = 0;   ///< blocks
  int block = 0;  ///< threads per block
};

/// Dynamic shared memory every block of the chase kernel reserves (a per-block scratch table):
/// with it, how many blocks fit on an SM depends on nothing else, so small blocks leave most of
/// an SM's threads unused.
constexpr std::size_t kChaseSharedBytes = 48 * 1024;

/// Given: the address of the chase kernel, for the occupancy API
/// (cudaOccupancyMaxPotentialBlockSize, cudaOccupancyMaxActiveBlocksPerMultiprocessor). Its
/// blocks take kChaseSharedBytes of dynamic shared memory.
const void* chase_kernel_handle();

/// Given: follows `starts` chains of `next` (a permutation), `steps` links each, with a
/// grid-stride loop over the chains; ends[s] = where chain s stopped. Every step waits for the
/// load before it: only many resident threads keep the memory busy.
void chase(const int* next, int* ends, int starts, int steps, LaunchConfig config, cudaStream_t stream);

/// Exercise 1: a configuration for `chase` over `starts` chains that keeps every SM as full of
/// threads as the kernel's resources allow (the occupancy API knows them), with enough blocks
/// for all SMs and no more than the chains need (starts / block rounded up, at least 1). Any
/// starts up to INT_MAX, without overflow; {0, 0} (nothing to launch) for starts <= 0. Every call
/// answers for its own `starts` (ChooseChaseLaunch, ChooseChaseLaunchCalls).
LaunchConfig choose_chase_launch(int starts);

// ------------------------------------------------------------------ exercise 2: concurrency

/// Blocks of one task: a task alone occupies a few SMs of a large GPU.
constexpr int kTaskBlocks = 4;

/// Given: task `task` (of a batch): a small, latency-bound kernel of kTaskBlocks blocks that
/// writes partials[task] (tasks 0, 8, 16, ... take a quarter of the others' time).
void launch_task(int task, float* partials, cudaStream_t stream);

/// Given: *result = partials[0] + ... + partials[count - 1] (one small kernel).
void launch_combine(const float* partials, int count, float* result, cudaStream_t stream);

/// Most tasks in a batch.
constexpr int kMaxTasks = 1024;

/// Given, for the tests: the inputs of tasks 0 .. count-1 (values near 0), which every task of
/// the next batches reads (count <= kMaxTasks; the others keep theirs). A perf test gives every
/// timed batch new inputs, so that no batch is the last one again. Synchronous.
void set_task_inputs(const float* inputs, int count);

/// Given: the tasks one after the other on streams[0], then the combine.
void run_tasks_serial(int count, float* partials, float* result, const cudaStream_t* streams, int stream_count,
                      const cudaEvent_t* events);

/// Exercise 2: tasks 0 .. count-1 spread over the `stream_count` streams so that they run at
/// the same time, then launch_combine on streams[0] once every task is done, on every stream it
/// is given (RunTasksTechnique.JoinsEveryStreamItIsGiven holds back one stream, the last among
/// them; `events` holds one event per stream, free to record). The caller waits for streams[0] only. 0 <= count <=
/// kMaxTasks (count 0: the combine alone, *result = 0); stream_count >= 1, fewer or more than
/// count (RunTasks, RunTasksCalls); only the first stream_count streams of the array are given
/// (RunTasksTechnique.UsesOnlyTheStreamsItIsGiven).
void run_tasks(int count, float* partials, float* result, const cudaStream_t* streams, int stream_count,
               const cudaEvent_t* events);

// ------------------------------------------------------------------ exercise 3: allocation

/// Given: the first kernel of a batch, scratch[i] = in[i] * in[i] + 1 for i < count.
void launch_batch_first(const float* in, float* scratch, int count, cudaStream_t stream);
/// Given: the second kernel of a batch, out[i] = sqrt(scratch[i]) for i < count.
void launch_batch_second(const float* scratch, float* out, int count, cudaStream_t stream);

/// Given: batch b (of `batches`, each `batch_size` floats of in and out) with its scratch from
/// cudaMalloc and given back with cudaFree: both take time, and cudaFree waits for the device.
void process_batches_with_malloc(const float* in, float* out, int batches, int batch_size, cudaStream_t stream);

/// Exercise 3: the same results, each batch's scratch from cudaMallocAsync on `stream` and
/// given back with cudaFreeAsync, so that nothing waits and freed memory is reused. batches = 0
/// or batch_size = 0: nothing to do, nothing enqueued (ProcessBatchesAsyncCalls). batches *
/// batch_size < 2^31 (more would take 8 GiB for each of in and out to test), up to that limit
/// without overflow: a batch of 2^31 - 1 floats, whose scratch passes 2^32 bytes, or 3 batches of
/// 715827882 (ProcessBatchesAsyncDeviceWide.TheLargestWorkTheContractAllows; it skips, saying so,
/// where less than 35 GB of device memory is free).
void process_batches_async(const float* in, float* out, int batches, int batch_size, cudaStream_t stream);

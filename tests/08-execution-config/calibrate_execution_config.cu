// Calibration of chapter 08 (not a test): the chase kernel over block sizes (occupancy), tasks
// serial against concurrent, and scratch memory from cudaMalloc against cudaMallocAsync.
// Usage: calibrate_execution_config [--csv FILE]   (FILE: section,x,variant,value,unit)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "course/calibration.h"
#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/timing.h"
#include "chapter_data.h"
#include "execution_config.h"

int main(int argc, char** argv) {
  return course::run_calibration(argc, argv, "calibrate_execution_config", [](const course::CalibrationArgs& args) {
    std::FILE* csv = args.csv();
    if (csv) std::fprintf(csv, "section,x,variant,value,unit\n");
    int device = 0, max_threads = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    const int sms = course::current_device().sm_count;
    course::Stream stream;

    // 1. Occupancy: 2^20 chains of 32 links through a random cycle of 2^24 entries.
    const int entries = 1 << 24, starts = 1 << 20, steps = 32;
    course::DeviceBuffer<int> d_next(chapter_data::random_cycle(entries, 5), "next"), ends(starts, "ends");
    std::printf("| block | blocks per SM | occupancy | G links/s |\n| ---: | ---: | ---: | ---: |\n");
    for (int block : {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024}) {
      const int blocks = chapter_data::resident_blocks(block);
      const LaunchConfig config{std::min(sms * blocks, (starts + block - 1) / block), block};
      const auto t = course::time_on_stream(
          [&](cudaStream_t s) { chase(d_next.data(), ends.data(), starts, steps, config, s); }, stream, 2, 5);
      const double rate = double(starts) * steps / 1e9 / (t.median_ms / 1e3);
      const double occupancy = double(blocks * block) / max_threads;
      std::printf("| %d | %d | %.2f | %.2f |\n", block, blocks, occupancy, rate);
      if (csv) std::fprintf(csv, "occupancy,%d,%.3f,%.3f,G links/s\n", block, occupancy, rate);
    }
    const LaunchConfig chosen = choose_chase_launch(starts);
    std::printf("choose_chase_launch: grid %d, block %d\n\n", chosen.grid, chosen.block);

    // 2. Tasks: serial against concurrent over 8 streams.
    chapter_data::StreamsAndEvents se;
    constexpr int kStreams = chapter_data::kStreams;
    course::DeviceBuffer<float> partials(64, "partials"), result(1, "result");
    std::printf("| tasks | serial (ms) | concurrent (ms) | speed-up |\n| ---: | ---: | ---: | ---: |\n");
    for (int count : {1, 2, 4, 8, 16, 32, 64}) {
      const auto serial = course::time_on_host(
          [&] { run_tasks_serial(count, partials.data(), result.data(), se.streams, kStreams, se.events); }, 1, 5);
      const auto concurrent = course::time_on_host(
          [&] { run_tasks(count, partials.data(), result.data(), se.streams, kStreams, se.events); }, 1, 5);
      std::printf("| %d | %.3f | %.3f | %.2f |\n", count, serial.median_ms, concurrent.median_ms,
                  serial.median_ms / concurrent.median_ms);
      if (csv) {
        std::fprintf(csv, "tasks,%d,serial,%.4f,ms\n", count, serial.median_ms);
        std::fprintf(csv, "tasks,%d,concurrent,%.4f,ms\n", count, concurrent.median_ms);
      }
    }

    // 3. Scratch memory: 256 batches of several sizes.
    std::printf("\n| batch | cudaMalloc + cudaFree (us per batch) | cudaMallocAsync + cudaFreeAsync (us per batch) |\n"
                "| ---: | ---: | ---: |\n");
    const int batches = 256;
    course::DeviceBuffer<float> in(std::size_t{batches} << 18, "in"), out(std::size_t{batches} << 18, "out");
    CUDA_CHECK(cudaMemset(in.data(), 0, in.bytes()));
    for (int size : {1 << 10, 1 << 14, 1 << 16, 1 << 18}) {
      const auto with_malloc = course::time_on_host(
          [&] { process_batches_with_malloc(in.data(), out.data(), batches, size, stream); }, 1, 5);
      const auto async = course::time_on_host(
          [&] { process_batches_async(in.data(), out.data(), batches, size, stream); }, 1, 5);
      const double a = with_malloc.median_ms * 1e3 / batches, b = async.median_ms * 1e3 / batches;
      std::printf("| %d floats | %.2f | %.2f |\n", size, a, b);
      if (csv) {
        std::fprintf(csv, "allocation,%d,cudaMalloc,%.3f,us per batch\n", size, a);
        std::fprintf(csv, "allocation,%d,cudaMallocAsync,%.3f,us per batch\n", size, b);
      }
    }
  });
}

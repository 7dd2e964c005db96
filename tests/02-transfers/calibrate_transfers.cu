// Calibration of chapter 02 (not a test): pageable vs pinned transfers, and the sequential
// vs staged pipeline for several chunk counts, and the timeline of one staged run.
// Usage: calibrate_transfers [--csv FILE] [--timeline FILE]
#include <cstdio>
#include <cstring>
#include <vector>

#include "course/calibration.h"
#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/timing.h"
#include "transfers.h"

int main(int argc, char** argv) {
  return course::run_calibration(argc, argv, "calibrate_transfers", [](const course::CalibrationArgs& args) {
    std::FILE* csv = args.csv();

    const size_t n = size_t{1} << 26, bytes = n * sizeof(float);
    std::printf("%d copy engines; 256 MiB each way\n", course::current_device().async_engine_count);
    if (csv) std::fprintf(csv, "what,chunks,ms,gbps\n");
    std::vector<float> pageable(n, 1.0f);
    course::PinnedHostBuffer<float> pinned_in(n), pinned_out(n);
    std::memset(pinned_in.data(), 0, bytes);
    course::DeviceBuffer<float> device_in(n), device_out(n);
    course::Stream stream;

    auto copy_row = [&](const char* what, void* dst, const void* src, cudaMemcpyKind kind) {
      const auto t = course::time_on_host([&] { CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind)); }, 2, 10);
      const double gbps = bytes / 1e9 / (t.median_ms / 1e3);
      std::printf("%-40s %9.2f ms %8.1f GB/s\n", what, t.median_ms, gbps);
      if (csv) std::fprintf(csv, "%s,0,%.3f,%.2f\n", what, t.median_ms, gbps);
    };
    copy_row("H2D pageable", device_in.data(), pageable.data(), cudaMemcpyHostToDevice);
    copy_row("H2D pinned", device_in.data(), pinned_in.data(), cudaMemcpyHostToDevice);
    copy_row("D2H pageable", pageable.data(), device_out.data(), cudaMemcpyDeviceToHost);
    copy_row("D2H pinned", pinned_out.data(), device_out.data(), cudaMemcpyDeviceToHost);

    const auto sequential = course::time_on_host([&] {
      process_sequential(pinned_in.data(), pinned_out.data(), device_in.data(), device_out.data(), n, stream);
    });
    std::printf("%-40s %9.2f ms %8.3f x sequential\n", "sequential (one stream)", sequential.median_ms, 1.0);
    if (csv) std::fprintf(csv, "sequential,1,%.3f,0\n", sequential.median_ms);
    std::vector<cudaStream_t> streams(4);
    for (auto& s : streams) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int chunks : {4, 8, 16, 32, 64}) {
      const auto t = course::time_on_host([&] {
        process_staged(pinned_in.data(), pinned_out.data(), device_in.data(), device_out.data(), n, streams.data(), 4,
                       chunks);
      });
      char label[64];
      std::snprintf(label, sizeof label, "staged, 4 streams, %d chunks", chunks);
      std::printf("%-40s %9.2f ms %8.3f x sequential\n", label, t.median_ms, t.median_ms / sequential.median_ms);
      if (csv) std::fprintf(csv, "staged 4 streams,%d,%.3f,0\n", chunks, t.median_ms);
    }
    // A timeline of one staged run (4 streams, 8 chunks): events around every operation.
    if (const char* timeline_path = args.option("timeline")) {
      constexpr int kChunks = 8;
      std::vector<cudaEvent_t> events(4 * kChunks);
      for (auto& e : events) CUDA_CHECK(cudaEventCreate(&e));
      CUDA_CHECK(cudaDeviceSynchronize());
      for (int c = 0; c < kChunks; ++c) {
        const size_t begin = n * c / kChunks, count = n * (c + 1) / kChunks - begin;
        cudaStream_t s = streams[c % 4];
        cudaEvent_t* e = &events[4 * c];
        CUDA_CHECK(cudaEventRecord(e[0], s));
        CUDA_CHECK(cudaMemcpyAsync(device_in.data() + begin, pinned_in.data() + begin, count * 4, cudaMemcpyHostToDevice, s));
        CUDA_CHECK(cudaEventRecord(e[1], s));
        light_kernel(device_in.data() + begin, device_out.data() + begin, count, s);
        CUDA_CHECK(cudaEventRecord(e[2], s));
        CUDA_CHECK(cudaMemcpyAsync(pinned_out.data() + begin, device_out.data() + begin, count * 4, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaEventRecord(e[3], s));
      }
      CUDA_CHECK(cudaDeviceSynchronize());
      std::FILE* timeline = std::fopen(timeline_path, "w");
      if (timeline) std::fprintf(timeline, "stream,chunk,operation,start_ms,end_ms\n");
      const char* names[] = {"upload", "kernel", "download"};
      for (int c = 0; c < kChunks && timeline; ++c)
        for (int op = 0; op < 3; ++op) {
          float start = 0, end = 0;
          CUDA_CHECK(cudaEventElapsedTime(&start, events[0], events[4 * c + op]));
          CUDA_CHECK(cudaEventElapsedTime(&end, events[0], events[4 * c + op + 1]));
          std::fprintf(timeline, "%d,%d,%s,%.4f,%.4f\n", c % 4, c, names[op], start, end);
        }
      if (timeline) std::fclose(timeline);
      for (auto e : events) cudaEventDestroy(e);
    }
    for (auto s : streams) cudaStreamDestroy(s);
  });
}

// Calibration of chapter 05 (not a test): TFLOP/s of each variant and of cuBLAS on the GPU it
// runs on. Usage: calibrate_matmul [--csv FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "course/calibration.h"
#include "course/cuda_check.h"
#include "course/device_buffer.h"
#include "course/gpu.h"
#include "course/random.h"
#include "course/timing.h"
#include "matmul.h"
#include "matmul_reference.h"
#include "matmul_variants.h"

namespace {

struct Row {
  std::string problem, variant;
  double tflops, fraction_of_cublas, spread;
};

double tflops(double m, double n, double k, double ms) { return 2.0 * m * n * k / (ms * 1e-3) / 1e12; }

// Times `run` after checking its result against `reference` (max abs difference).
Row measure(const std::string& problem, const std::string& variant, const std::function<void(cudaStream_t)>& run,
            course::DeviceBuffer<float>& out, const std::vector<float>& reference, double flops_mnk[3], int K,
            cudaStream_t stream, int reps) {
  out.poison();
  run(stream);
  CUDA_CHECK_LAUNCH(variant.c_str());
  const auto got = out.download();
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, static_cast<double>(std::fabs(got[i] - reference[i])));
  if (!(worst <= 1e-6 * K + 1e-6)) throw std::runtime_error(variant + ": wrong result, max error " + std::to_string(worst));
  const auto t = course::time_on_stream(run, stream, 2, reps);
  return {problem, variant, tflops(flops_mnk[0], flops_mnk[1], flops_mnk[2], t.median_ms), 0, t.relative_spread()};
}

void print(std::vector<Row>& rows, std::FILE* csv) {
  double cublas = 0;
  for (const Row& r : rows)
    if (r.variant == "cuBLAS FP32") cublas = r.tflops;
  for (Row& r : rows) {
    r.fraction_of_cublas = cublas > 0 ? r.tflops / cublas : 0;
    std::printf("%-22s %-28s %9.2f %9.3f %7.1f%%\n", r.problem.c_str(), r.variant.c_str(), r.tflops,
                r.fraction_of_cublas, 100 * r.spread);
    if (csv) std::fprintf(csv, "%s,%s,%.3f,%.3f\n", r.problem.c_str(), r.variant.c_str(), r.tflops, r.fraction_of_cublas);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return course::run_calibration(argc, argv, "calibrate_matmul", [](const course::CalibrationArgs& args) {
    std::FILE* csv = args.csv();

    std::printf("%-22s %-28s %9s %9s %8s\n", "problem", "variant", "TFLOP/s", "x cuBLAS", "spread");
    if (csv) std::fprintf(csv, "problem,variant,tflops,fraction_of_cublas\n");
    course::Stream stream;
    matmul_reference::Cublas cublas;

    for (int n : {2048, 4096}) {
      const size_t count = static_cast<size_t>(n) * n;
      course::DeviceBuffer<float> A(course::random_floats(count, 1)), B(course::random_floats(count, 2));
      course::DeviceBuffer<float> C(count);
      cublas.matmul(A.data(), B.data(), C.data(), n, n, n, stream);
      CUDA_CHECK_LAUNCH("cuBLAS");
      const auto reference = C.download();
      double mnk[3] = {double(n), double(n), double(n)};
      const std::string problem = "C=AB " + std::to_string(n) + "^3";
      std::vector<Row> rows;
      auto add = [&](const std::string& name, auto&& f, int reps) {
        rows.push_back(measure(problem, name, f, C, reference, mnk, n, stream, reps));
      };
      add("naive", [&](cudaStream_t s) { matmul_naive(A.data(), B.data(), C.data(), n, n, n, s); }, 5);
      add("tiled 16x16", [&](cudaStream_t s) { matmul_tiled16(A.data(), B.data(), C.data(), n, n, n, s); }, 10);
      add("tiled 32x32", [&](cudaStream_t s) { matmul_tiled(A.data(), B.data(), C.data(), n, n, n, s); }, 10);
      add("register-tiled 8x8",
          [&](cudaStream_t s) { matmul_register_tiled_variant(8, 2, A.data(), B.data(), C.data(), n, n, n, s); }, 20);
      add("warp-tiled 16x8 (reference)",
          [&](cudaStream_t s) { matmul_register_tiled(A.data(), B.data(), C.data(), n, n, n, s); }, 20);
      struct Plain {
        int tile_k, min_blocks;
      };
      for (const Plain v : {Plain{8, 1}, Plain{16, 1}, Plain{16, 2}})
        add("register-tiled 8x8 (K step " + std::to_string(v.tile_k) + "; " + std::to_string(v.min_blocks) +
                " block(s)/SM)",
            [&, v](cudaStream_t s) {
              matmul_register_tiled_variant(v.tile_k, v.min_blocks, A.data(), B.data(), C.data(), n, n, n, s);
            },
            20);
      struct Warp {
        int stages, group_rows;
        bool early_barrier;
      };
      for (const Warp v : {Warp{4, 8, false}, Warp{4, 1, true}, Warp{3, 8, true}, Warp{2, 8, true}})
        add("warp-tiled 16x8 (" + std::to_string(v.stages) + " stages; groups of " + std::to_string(v.group_rows) +
                " block rows; barrier " + (v.early_barrier ? "before the last k)" : "at the top of a step)"),
            [&, v](cudaStream_t s) {
              matmul_warp_tiled_variant(v.stages, v.group_rows, v.early_barrier, A.data(), B.data(), C.data(), n, n,
                                        n, s);
            },
            20);
      add("cuBLAS FP32", [&](cudaStream_t s) { cublas.matmul(A.data(), B.data(), C.data(), n, n, n, s); }, 20);
      print(rows, csv);
    }

    for (int K : {32, 1024}) {
      const int M = 8192;
      course::DeviceBuffer<float> A(course::random_floats(static_cast<size_t>(M) * K, 3));
      course::DeviceBuffer<float> C(static_cast<size_t>(M) * M);
      cublas.aat(A.data(), C.data(), M, K, stream);
      CUDA_CHECK_LAUNCH("cuBLAS");
      const auto reference = C.download();
      double mnk[3] = {double(M), double(M), double(K)};
      const std::string problem = "C=AAT 8192x" + std::to_string(K);
      std::vector<Row> rows;
      auto add = [&](const std::string& name, auto&& f, int reps) {
        rows.push_back(measure(problem, name, f, C, reference, mnk, K, stream, reps));
      };
      add("naive (strided)", [&](cudaStream_t s) { aat_naive(A.data(), C.data(), M, K, s); }, 5);
      add("tiled (no padding)", [&](cudaStream_t s) { aat_tiled_unpadded(A.data(), C.data(), M, K, s); }, 10);
      add("tiled (padded)", [&](cudaStream_t s) { aat_tiled(A.data(), C.data(), M, K, s); }, 10);
      add("cuBLAS FP32", [&](cudaStream_t s) { cublas.aat(A.data(), C.data(), M, K, s); }, 20);
      print(rows, csv);
    }
  });
}

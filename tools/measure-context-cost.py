#!/usr/bin/env python3
"""What a CUDA program's start and end cost on this GPU, the floor under a class's time (issue 43).

Every test program of a grading makes a context and tears it down; the course's GPU turns hold the
context turn for both, so a GPU's class can not go faster than (make + exit) x programs. This
measures both, for programs that end in three ways, holding some device memory:
  plain   returns from main: the runtime tears the context down at exit (what the tests do today)
  reset   cudaDeviceReset() before returning
  quick   _exit(0) after a cudaDeviceSynchronize: no teardown in the program, the kernel's close of
          the device files frees everything
and, for K programs started at once, whether the driver makes and ends contexts side by side or one
after another (the wall time for all of them against K x one).

For each: the time to the first CUDA call's end (make), from the program's last line to its end
(exit), and the free device memory that the next program sees (all of it back, or not yet).

With --mps, the same again with every program a client of a CUDA MPS server of its own
(nvidia-cuda-mps-control, pipe and log folders in a temporary folder), whose clients share one
context on the GPU: whether that makes a program's start and end cheaper, whether a fault in one
client (an illegal address) ends another that runs beside it (fault containment: a classmate's
grade), and whether CUDA_MPS_PINNED_DEVICE_MEM_LIMIT bounds a client's memory (issue 43).

Usage: tools/measure-context-cost.py [--bytes N] [--repeats R] [--side-by-side 1,2,4,8] [--mps]
Needs a GPU and nvcc; prints a table. Runs in about 30 s on an H100 (60 s with --mps).
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

PROBE = r"""
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
static double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(system_clock::now().time_since_epoch()).count();
}
static void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status)); std::exit(2); }
}
__global__ void write_at(int* where) { *where = 1; }
__global__ void spin(float* data, int rounds) {
  float x = data[threadIdx.x];
  for (int i = 0; i < rounds; ++i) x = x * 0.999f + 0.001f;
  data[threadIdx.x] = x;
}
int main(int argc, char** argv) {
  const char* mode = argv[1];
  if (std::strcmp(mode, "fault") == 0) {  // an illegal address, as a first CUDA assignment makes
    write_at<<<1, 1>>>(reinterpret_cast<int*>(0x10));
    std::printf("fault %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
  }
  if (std::strcmp(mode, "survive") == 0) {  // kernels for about argv[2] ms, beside a fault
    float* data = nullptr;
    check(cudaMalloc(&data, 1024 * sizeof(float)), "cudaMalloc");
    check(cudaMemset(data, 0, 1024 * sizeof(float)), "cudaMemset");
    const double until = now_ms() + std::atof(argv[2]);
    cudaError_t status = cudaSuccess;
    int launches = 0;
    while (status == cudaSuccess && now_ms() < until) {
      spin<<<1, 1024>>>(data, 100000);
      status = cudaDeviceSynchronize();
      ++launches;
    }
    std::printf("survive %s launches %d\n", cudaGetErrorName(status), launches);
    return 0;
  }
  if (std::strcmp(mode, "allocate") == 0) {  // argv[2] bytes: within a client's limit or not
    void* memory = nullptr;
    std::printf("allocate %s\n", cudaGetErrorName(cudaMalloc(&memory, std::strtoull(argv[2], nullptr, 10))));
    return 0;
  }
  const size_t bytes = std::strtoull(argv[2], nullptr, 10);
  const double started = now_ms();
  check(cudaFree(nullptr), "cudaFree(0)");
  const double made = now_ms();
  size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  void* memory = nullptr;
  if (bytes) {
    check(cudaMalloc(&memory, bytes), "cudaMalloc");
    check(cudaMemset(memory, 1, bytes), "cudaMemset");
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  if (std::strcmp(mode, "reset") == 0) check(cudaDeviceReset(), "cudaDeviceReset");
  std::printf("make_ms %.3f free_gib %.3f total_gib %.3f ending_at %.3f\n", made - started, free_bytes / 1073741824.0,
              total_bytes / 1073741824.0, now_ms());
  std::fflush(stdout);
  if (std::strcmp(mode, "quick") == 0) _exit(0);
  return 0;
}
"""


def run_side_by_side(probe, mode, bytes_, count, env=None):
    """Starts `count` probes at once (with `env`, else this environment); (make times, exit times,
    wall time, free GiB seen) in ms."""
    start = time.time() * 1000.0
    programs = [subprocess.Popen([probe, mode, str(bytes_)], stdout=subprocess.PIPE, text=True, env=env)
                for _ in range(count)]
    makes, exits, free = [], [], []
    for program in programs:
        out, _ = program.communicate()
        ended = time.time() * 1000.0
        if program.returncode != 0:
            sys.exit(f"the probe failed ({mode}): exit {program.returncode}")
        said = dict(zip(out.split()[0::2], map(float, out.split()[1::2])))
        makes.append(said["make_ms"])
        exits.append(ended - said["ending_at"])  # an upper bound when an earlier one was waited for
        free.append(said["free_gib"])
    return makes, exits, time.time() * 1000.0 - start, free


def measure(probe, args, label, env=None):
    print(f"{label}: one program at a time, {args.repeats} each (median ms; free GiB the next program saw: min):")
    print(f"{'end':<7} {'holds GiB':>9} {'make':>8} {'exit':>8} {'whole':>8} {'free GiB':>9}")
    for mode in ("plain", "reset", "quick"):
        for held in (0, args.bytes):
            makes, exits, walls, frees = [], [], [], []
            for _ in range(args.repeats):
                m, e, w, f = run_side_by_side(probe, mode, held, 1, env)
                makes += m
                exits += e
                walls.append(w)
                frees += f
            print(f"{mode:<7} {held / 2**30:>9.1f} {statistics.median(makes):>8.1f} {statistics.median(exits):>8.1f} "
                  f"{statistics.median(walls):>8.1f} {min(frees[1:] or frees):>9.2f}")
    print(f"\n{label}: K programs started at once (plain end, no memory held): wall ms against K x one")
    one = statistics.median(run_side_by_side(probe, "plain", 0, 1, env)[2] for _ in range(max(2, args.repeats // 2)))
    for count in (int(k) for k in args.side_by_side.split(",")):
        walls = [run_side_by_side(probe, "plain", 0, count, env)[2] for _ in range(max(2, args.repeats // 2))]
        wall = statistics.median(walls)
        print(f"K={count:<3} wall {wall:>8.1f}  K x one {count * one:>8.1f}  side by side {count * one / wall:>5.2f}x")


def containment(probe, env, label):
    """Whether a fault in one program ends another that runs beside it, and the limit on a client's memory."""
    survivor = subprocess.Popen([probe, "survive", "3000"], stdout=subprocess.PIPE, text=True, env=env)
    time.sleep(1.0)
    fault = subprocess.run([probe, "fault"], capture_output=True, text=True, env=env, timeout=60)
    out, _ = survivor.communicate(timeout=60)
    print(f"{label}: a fault beside a running program: the faulty one says {fault.stdout.strip() or fault.stderr.strip()!r}, "
          f"the other {out.strip()!r} (exit {survivor.returncode})")
    after = subprocess.run([probe, "survive", "200"], capture_output=True, text=True, env=env, timeout=60)
    print(f"{label}: a program started after it: {after.stdout.strip() or after.stderr.strip()!r}")


def with_mps(probe, args, folder):
    """measure() and containment() again, every probe a client of an MPS server started here."""
    env = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=str(folder / "mps-pipe"), CUDA_MPS_LOG_DIRECTORY=str(folder / "mps-log"))
    (folder / "mps-pipe").mkdir()
    (folder / "mps-log").mkdir()
    try:
        subprocess.run(["nvidia-cuda-mps-control", "-d"], env=env, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        print(f"\nWith MPS: no MPS server here ({error})")
        return
    try:
        print()
        started = time.time()
        run_side_by_side(probe, "plain", 0, 1, env)  # the server's own start
        print(f"With MPS: the server started with its first client in {1000 * (time.time() - started):.0f} ms")
        measure(probe, args, "With MPS", env)
        containment(probe, env, "With MPS")
        limited = dict(env, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="0=2G")
        for size in (1 << 30, 3 << 30):
            done = subprocess.run([probe, "allocate", str(size)], capture_output=True, text=True, env=limited, timeout=60)
            print(f"With MPS: a client limited to 2 GiB allocates {size >> 30} GiB: "
                  f"{done.stdout.strip() or done.stderr.strip()!r}")
    finally:
        subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", text=True, env=env, timeout=60)
        log = folder / "mps-log" / "control.log"
        if log.exists():
            print("With MPS: the control daemon's log, last lines:\n  " + "\n  ".join(log.read_text().splitlines()[-6:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bytes", type=int, default=4 << 30, help="device memory each program holds at its end")
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--side-by-side", default="1,2,4,8")
    parser.add_argument("--mps", action="store_true", help="measure again as clients of an MPS server of its own")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        source = pathlib.Path(folder) / "probe.cu"
        source.write_text(PROBE)
        probe = str(pathlib.Path(folder) / "probe")
        subprocess.run(["nvcc", "-O2", "-o", probe, str(source)], check=True)
        run_side_by_side(probe, "plain", 0, 1)  # the first context of a boot or a driver load costs more
        measure(probe, args, "Without MPS")
        containment(probe, dict(os.environ), "Without MPS")
        if args.mps:
            with_mps(probe, args, pathlib.Path(folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#include "course/parallel.h"

#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace course {

std::size_t for_each_range(std::size_t count, std::size_t per_thread, std::size_t max_threads,
                           const std::function<void(std::size_t, std::size_t, std::size_t)>& work) {
  // The CPUs this thread may run on (main keeps a program near its GPU: course::run_near_the_gpu),
  // not every CPU of the machine.
  cpu_set_t allowed;
  const std::size_t cores = sched_getaffinity(0, sizeof allowed, &allowed) == 0
                                ? std::max(1, CPU_COUNT(&allowed))
                                : std::max(1u, std::thread::hardware_concurrency());
  const std::size_t parts =
      std::max<std::size_t>(1, std::min({cores, max_threads, (count + per_thread - 1) / per_thread}));
  const std::size_t share = (count + parts - 1) / parts;
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < parts; ++t)
    workers.emplace_back(work, t, std::min(count, t * share), std::min(count, (t + 1) * share));
  work(0, 0, std::min(count, share));
  for (auto& worker : workers) worker.join();
  return parts;
}

}  // namespace course

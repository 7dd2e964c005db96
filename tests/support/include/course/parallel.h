/// @file parallel.h
/// @brief Host work split over threads: large inputs, comparisons and copies of the perf tests.
#pragma once

#include <cstddef>
#include <functional>

namespace course {

/// Splits [0, count) into consecutive ranges of at least `per_thread` elements, at most
/// `max_threads` of them (and no more than the machine's cores), and runs
/// `work(part, begin, end)` for each, part 0 on the calling thread. Returns how many parts
/// there were (1 for a small or empty range, which runs on the calling thread alone).
std::size_t for_each_range(std::size_t count, std::size_t per_thread, std::size_t max_threads,
                           const std::function<void(std::size_t part, std::size_t begin, std::size_t end)>& work);

}  // namespace course

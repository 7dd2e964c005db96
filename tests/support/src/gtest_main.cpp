// main() of every test executable: GoogleTest, with the seed and the device named up front.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <exception>

#include "course/gpu.h"
#include "course/random.h"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::strcmp(argv[i], "--gtest_list_tests") == 0;
  ::testing::InitGoogleTest(&argc, argv);
  if (!listing) {
    try {
      std::printf("[  COURSE  ] %s\n", course::seed_note().c_str());
      if (const auto why = course::gpu_unavailable_reason())
        std::printf("[  COURSE  ] %s\n", why->c_str());
      else
        std::printf("[  COURSE  ] device: %s\n", course::device_line().c_str());
    } catch (const std::exception& error) {
      std::fprintf(stderr, "[  COURSE  ] cannot start: %s\n", error.what());
      return 2;
    }
  }
  return RUN_ALL_TESTS();
}

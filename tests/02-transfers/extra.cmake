# process_staged overlaps chunks on several streams: its tests keep CUDA's hardware queues, so
# that a chunk's work that does not wait for its own copy can run into another's (see
# cmake/CourseTestList.cmake, hardware queues).
set(extra_concurrent_suites "^ProcessStaged")

# Disable JIT compilation of PTX: a kernel then runs only if the binary has SASS for the GPU.
list(APPEND extra_test_environment "CUDA_DISABLE_PTX_JIT=1")
# The visible-devices test once more, with CUDA_VISIBLE_DEVICES=1: the program must then see
# only the second GPU, numbered 0 (skipped, with the reason, on a machine with one GPU).
list(APPEND extra_test_runs "MultiGpu.UsesOnlyVisibleDevices|CUDA_VISIBLE_DEVICES_1|CUDA_VISIBLE_DEVICES=1")
# The tests that use several GPUs keep CUDA's hardware queues: each GPU's work and the copies
# between them run side by side (see cmake/CourseTestList.cmake, hardware queues).
set(extra_concurrent_suites "^(MultiGpu|PeerAccess)")

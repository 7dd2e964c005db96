# Disable JIT compilation of PTX: a kernel then runs only if the binary has SASS for the GPU.
list(APPEND extra_test_environment "CUDA_DISABLE_PTX_JIT=1")

# Chapter 11: the tests inspect their own executable with cuobjdump where the toolkit has it.
find_program(COURSE_CUOBJDUMP cuobjdump HINTS "${CUDAToolkit_BIN_DIR}")
if(NOT COURSE_CUOBJDUMP)
  set(COURSE_CUOBJDUMP "")
endif()
target_compile_definitions(${id}_tests_obj PRIVATE "COURSE_CUOBJDUMP=\"${COURSE_CUOBJDUMP}\"")
# Disable JIT compilation of PTX: a kernel then runs only if the binary has SASS for the GPU.
list(APPEND extra_test_environment "CUDA_DISABLE_PTX_JIT=1")

# Chooses CMAKE_CUDA_ARCHITECTURES when the user did not.
#
#  1. -DCMAKE_CUDA_ARCHITECTURES=... or the CUDAARCHS environment variable: used as given.
#  2. A GPU visible at configure time (nvidia-smi answers): build for exactly that GPU,
#     so the tests time the machine code the GPU really runs.
#  3. No GPU (CI, a laptop): a fixed list that CUDA 13 supports, SASS for Turing, Ampere
#     and Hopper plus PTX for Hopper, so that the build checks all of them.
set(COURSE_FALLBACK_CUDA_ARCHITECTURES "75-real;80-real;90")

# The compute capabilities of the GPUs nvidia-smi reports ("90"), none without a GPU.
function(course_find_gpu_architectures out)
  set(archs "")
  find_program(COURSE_NVIDIA_SMI nvidia-smi)
  if(COURSE_NVIDIA_SMI)
    execute_process(
      COMMAND "${COURSE_NVIDIA_SMI}" --query-gpu=compute_cap --format=csv,noheader
      OUTPUT_VARIABLE smi_out RESULT_VARIABLE smi_rc ERROR_QUIET TIMEOUT 30)
    if(smi_rc EQUAL 0)
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" caps "${smi_out}")
      foreach(cap IN LISTS caps)
        string(REPLACE "." "" arch "${cap}")
        list(APPEND archs "${arch}")
      endforeach()
      list(REMOVE_DUPLICATES archs)
    endif()
  endif()
  set(${out} "${archs}" PARENT_SCOPE)
endfunction()

function(course_choose_cuda_architectures)
  # The technique tests read the SASS their GPU runs. The build writes it beside each test
  # program for these architectures (the GPU's, found now), so that a test reads a file instead
  # of running cuobjdump (1-3 s per program); without a GPU, tests run cuobjdump when they need it.
  if(NOT DEFINED COURSE_SASS_CACHE_ARCHITECTURES)
    course_find_gpu_architectures(gpu_archs)
    set(COURSE_SASS_CACHE_ARCHITECTURES "${gpu_archs}" CACHE STRING
        "Architectures whose SASS the build writes beside each test program (<program>.sm_NN.sass); default: the GPU's")
  endif()
  if(DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(COURSE_CUDA_ARCHITECTURES_REASON "set by the user" PARENT_SCOPE)
    return()
  endif()
  if(DEFINED ENV{CUDAARCHS})
    set(COURSE_CUDA_ARCHITECTURES_REASON "from the CUDAARCHS environment variable" PARENT_SCOPE)
    return()
  endif()

  course_find_gpu_architectures(archs)
  if(archs)
    set(CMAKE_CUDA_ARCHITECTURES "${archs}" CACHE STRING "CUDA architectures to build for")
    set(COURSE_CUDA_ARCHITECTURES_REASON "the GPU found at configure time" PARENT_SCOPE)
  else()
    set(CMAKE_CUDA_ARCHITECTURES "${COURSE_FALLBACK_CUDA_ARCHITECTURES}" CACHE STRING
      "CUDA architectures to build for")
    set(COURSE_CUDA_ARCHITECTURES_REASON "no GPU found at configure time: fixed list" PARENT_SCOPE)
  endif()
endfunction()

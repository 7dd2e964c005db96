# Chooses CMAKE_CUDA_ARCHITECTURES when the user did not.
#
#  1. -DCMAKE_CUDA_ARCHITECTURES=... or the CUDAARCHS environment variable: used as given.
#  2. A GPU visible at configure time (nvidia-smi answers): build for exactly that GPU,
#     so the tests time the machine code the GPU really runs.
#  3. No GPU (CI, a laptop): a fixed list that CUDA 13 supports, SASS for Turing, Ampere
#     and Hopper plus PTX for Hopper, so that the build checks all of them.
set(COURSE_FALLBACK_CUDA_ARCHITECTURES "75-real;80-real;90")

function(course_choose_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(COURSE_CUDA_ARCHITECTURES_REASON "set by the user" PARENT_SCOPE)
    return()
  endif()
  if(DEFINED ENV{CUDAARCHS})
    set(COURSE_CUDA_ARCHITECTURES_REASON "from the CUDAARCHS environment variable" PARENT_SCOPE)
    return()
  endif()

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

  if(archs)
    set(CMAKE_CUDA_ARCHITECTURES "${archs}" CACHE STRING "CUDA architectures to build for")
    set(COURSE_CUDA_ARCHITECTURES_REASON "the GPU found at configure time" PARENT_SCOPE)
  else()
    set(CMAKE_CUDA_ARCHITECTURES "${COURSE_FALLBACK_CUDA_ARCHITECTURES}" CACHE STRING
      "CUDA architectures to build for")
    set(COURSE_CUDA_ARCHITECTURES_REASON "no GPU found at configure time: fixed list" PARENT_SCOPE)
  endif()
endfunction()

# A ctest test of every chapter (<role>.<chapter>.LinkTechnique.UsesNoLibraryButTheCudaRuntime):
# the exercise library may call the CUDA runtime, but no other GPU library (cuBLAS, cuFFT, ...),
# not the driver API, and it may not load code at run time (dlopen). Reads the library's
# undefined symbols with nm: what the code calls, whatever its source says.
#
#   cmake -D LIBRARY=<lib.a> -D NM=<nm> [-D STATUS_DIR=<dir>] -P cmake/CourseCheckLinks.cmake
#
# STATUS_DIR is where the build launchers report student code that did not build: then there
# is nothing to check, and the test fails rather than pass on an empty library.
cmake_minimum_required(VERSION 3.25)
if(STATUS_DIR)
  file(GLOB build_failures "${STATUS_DIR}/*.log")
  if(build_failures)
    message(FATAL_ERROR "The exercise code did not build (see the Build.Compiles test), so its calls were not checked.")
  endif()
endif()
execute_process(COMMAND "${NM}" --undefined-only --no-sort "${LIBRARY}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE result ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cannot read the symbols of ${LIBRARY}: ${errors}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(forbidden "")
foreach(line IN LISTS lines)
  if(line MATCHES "^ *U (.+)$")
    set(symbol "${CMAKE_MATCH_1}")
    if(symbol MATCHES "^(cublas|cublasLt|cufft|curand|cusparse|cusolver|cudnn|nvjpeg|npp|nccl|cutensor|nvrtc|nvJitLink|nvPTXCompiler)"
       OR symbol MATCHES "^cu[A-Z]"
       OR symbol MATCHES "^(dlopen|dlmopen|dlsym|dlvsym)(@.*)?$")
      list(APPEND forbidden "${symbol}")
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES forbidden)
if(forbidden)
  list(JOIN forbidden ", " text)
  message("[ RUN      ] LinkTechnique.UsesNoLibraryButTheCudaRuntime\n"
          "link: Failure\n"
          "The exercise code calls ${text}: only the CUDA runtime (cuda*) may be used here, not another "
          "GPU library, the driver API (cu*) or code loaded at run time (dlopen).\n"
          "[  FAILED  ] LinkTechnique.UsesNoLibraryButTheCudaRuntime")
  message(FATAL_ERROR "forbidden calls in ${LIBRARY}")
endif()
message("[       OK ] LinkTechnique.UsesNoLibraryButTheCudaRuntime: ${LIBRARY} calls no GPU library but the CUDA runtime")

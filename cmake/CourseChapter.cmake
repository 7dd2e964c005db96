# course_add_chapter(<folder>) wires one chapter together, by convention:
#
#   chapters/<folder>/*.h        the exercise contract (what the tests call)
#   chapters/<folder>/*.cu       the starter: the only files a student edits
#   chapters/<folder>/given/*.cu working code the chapter hands out (naive versions, launches)
#   solutions/<folder>/*.cu      the reference solution, same file names as the starter
#   tests/<folder>/*_test.cu     GoogleTest sources, compiled once, linked twice
#   tests/<folder>/calibrate_*.cu  calibration programs (built against the solution)
#   tests/<folder>/extra.cmake   optional: extra libraries (extra_libraries), environment
#                                (extra_test_environment), runs of a case with another
#                                environment (extra_test_runs) and the suites whose verdicts
#                                need streams to run side by side (extra_concurrent_suites, a
#                                regular expression), see CourseTestList.cmake, for this
#                                chapter's tests
#   <chapter or solution>/architectures.cmake  optional: one set(CHAPTER_CUDA_ARCHITECTURES "...")
#                                line, read as data: the CUDA_ARCHITECTURES of that library (an
#                                exercise of chapter 11)
#
# Test names: student.<folder>.<Suite>.<Case> and solution.<folder>.<Suite>.<Case>, labelled
# by role, chapter, perf or correctness, and stretch (cmake/CourseTestList.cmake).

set(COURSE_CORRECTNESS_TIMEOUT 90 CACHE STRING "Seconds one correctness test may run")
set(COURSE_PERF_TIMEOUT 180 CACHE STRING "Seconds one performance test may run")
set(COURSE_TEST_REPORT_DIR "${CMAKE_BINARY_DIR}/test-reports" CACHE PATH
    "Where each test writes GoogleTest's record of it (the grade reads it beside the exit status)")
set(COURSE_TEST_LAUNCHER "" CACHE STRING
    "A command put in front of every run of a test program (tools/grade-submission: the sandbox)")
find_program(COURSE_COMPUTE_SANITIZER compute-sanitizer HINTS "${CUDAToolkit_BIN_DIR}")
if(NOT COURSE_COMPUTE_SANITIZER)
  set(COURSE_COMPUTE_SANITIZER "")
endif()

# Adds the ctest tests of test executable `target`, one ctest test per GoogleTest case, listed
# when ctest runs (cmake/CourseTestList.cmake says how tests are named and labelled).
# `status_dir` is where the build launchers of student code report a failed build.
function(course_add_test_executable target role chapter status_dir)
  set(list_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake")
  string(CONCAT content
    "set(COURSE_TL_EXE [==[$<TARGET_FILE:${target}>]==])\n"
    "set(COURSE_TL_ROLE [==[${role}]==])\n"
    "set(COURSE_TL_CHAPTER [==[${chapter}]==])\n"
    "set(COURSE_TL_STATUS_DIR [==[${status_dir}]==])\n"
    "set(COURSE_TL_CORRECTNESS_TIMEOUT ${COURSE_CORRECTNESS_TIMEOUT})\n"
    "set(COURSE_TL_PERF_TIMEOUT ${COURSE_PERF_TIMEOUT})\n"
    "set(COURSE_TL_ENVIRONMENT [==[${extra_test_environment}]==])\n"
    "set(COURSE_TL_SANITIZER_COMMAND [==[${COURSE_COMPUTE_SANITIZER}]==])\n"
    "set(COURSE_TL_FILTER [==[${extra_test_filter}]==])\n"
    "set(COURSE_TL_LAUNCHER [==[${COURSE_TEST_LAUNCHER}]==])\n"
    "set(COURSE_TL_REPORT_DIR [==[${COURSE_TEST_REPORT_DIR}]==])\n"
    "set(COURSE_TL_EXTRA_RUNS [==[${extra_test_runs}]==])\n"
    "set(COURSE_TL_CONCURRENT_SUITES [==[${extra_concurrent_suites}]==])\n"
    "set(COURSE_TL_CMAKE [==[${CMAKE_COMMAND}]==])\n"
    "include([==[${PROJECT_SOURCE_DIR}/cmake/CourseTestList.cmake]==])\n")
  file(GENERATE OUTPUT "${list_file}" CONTENT "${content}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${list_file}")
endfunction()

# Student code builds through cmake/course-build-launcher.sh: a starter that does not compile
# or link leaves a report in `status_dir` and a stand-in executable that fails with the first
# errors, and the build of every other chapter goes on.
function(course_isolate_student_build library executable status_dir)
  set(launcher "${PROJECT_SOURCE_DIR}/cmake/course-build-launcher.sh")
  set(empty_source "${CMAKE_BINARY_DIR}/course-empty.cu")
  if(NOT EXISTS "${empty_source}")
    file(WRITE "${empty_source}" "// Compiled in place of a student source that did not compile.\n")
  endif()
  set_target_properties(${library} PROPERTIES
    CUDA_COMPILER_LAUNCHER "bash;${launcher};compile;${status_dir};${empty_source}"
    CXX_COMPILER_LAUNCHER "bash;${launcher};compile;${status_dir};${empty_source}")
  set_target_properties(${executable} PROPERTIES
    CXX_LINKER_LAUNCHER "bash;${launcher};link;${status_dir}"
    CUDA_LINKER_LAUNCHER "bash;${launcher};link;${status_dir}")
endfunction()

# The libraries every test program links, besides the course's own code: a submission may not
# define what they define (tools/course_grading/policy.py reads their symbols).
set(COURSE_PROGRAM_LIBRARIES "")
foreach(name IN ITEMS libstdc++.so libc.so.6 libm.so.6 libgcc_s.so.1)
  execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -print-file-name=${name}
                  OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(IS_ABSOLUTE "${path}" AND EXISTS "${path}")
    list(APPEND COURSE_PROGRAM_LIBRARIES "${path}")
  endif()
endforeach()
foreach(target IN ITEMS CUDA::cudart CUDA::cudart_static CUDA::cupti)
  if(TARGET ${target})
    list(APPEND COURSE_PROGRAM_LIBRARIES "$<TARGET_FILE:${target}>")
  endif()
endforeach()

# <prefix>.CodePolicy.<rule> (CPU only): the object code of `library` (its files but the given
# ones) against the course's code policy (grading/code-policy.txt, tools/course_grading/policy.py):
# what it calls, what it defines globally, and that nothing of it runs outside the contract's
# calls. `tests_obj` is the chapter's tests: what they call tells the contract's functions. Each
# test fails when the build launchers reported a failed build in `status_dir`.
function(course_add_code_policy library prefix status_dir given_sources tests_obj)
  string(REPLACE "." ";" parts "${prefix}")
  list(GET parts 0 role)
  list(GET parts -1 chapter)
  set(role_label "${role}")
  set(arguments --library "$<TARGET_FILE:${library}>" --status-dir "${status_dir}"
      "--judge-tests=$<JOIN:$<TARGET_OBJECTS:${tests_obj}>,|>"
      --judge "$<TARGET_FILE:course_support>" --judge "$<TARGET_FILE:course_gtest_main>"
      --policy "${PROJECT_SOURCE_DIR}/grading/code-policy.txt")
  if(TARGET GTest::gtest)
    list(APPEND arguments --judge "$<TARGET_FILE:GTest::gtest>")
  endif()
  foreach(source IN LISTS given_sources)
    get_filename_component(file_name "${source}" NAME)
    list(APPEND arguments --given "${file_name}.o")
  endforeach()
  foreach(path IN LISTS COURSE_PROGRAM_LIBRARIES)
    list(APPEND arguments --shared-library "${path}")
  endforeach()
  foreach(rule IN ITEMS imports definitions startup)
    if(rule STREQUAL "imports")
      set(case CallsOnlyWhatTheCourseAllows)
    elseif(rule STREQUAL "definitions")
      set(case DefinesOnlyTheContractGlobally)
    else()
      set(case RunsNothingOutsideTheContractCalls)
    endif()
    set(name "${prefix}.CodePolicy.${case}")
    add_test(NAME "${name}"
             COMMAND Python3::Interpreter "${PROJECT_SOURCE_DIR}/tools/course_grading/policy.py" --rule ${rule}
                     ${arguments})
    set_tests_properties("${name}" PROPERTIES LABELS "${role_label};${chapter};correctness" TIMEOUT 60
                         ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
  endforeach()
endfunction()

# Writes the SASS of test program `exe` beside it once it is linked, for the architectures of
# COURSE_SASS_CACHE_ARCHITECTURES (cmake/CourseSassCache.cmake says why).
function(course_cache_sass exe)
  set(cached "${COURSE_SASS_CACHE_ARCHITECTURES}")
  # Tests in the grader's sandbox (COURSE_TEST_LAUNCHER) may not start cuobjdump (no new
  # processes under its system-call filter): without a GPU to choose for, the newest architecture
  # the build compiles, whose SASS the tests then read (course::sass_arch_to_check).
  if(NOT cached AND COURSE_TEST_LAUNCHER)
    set(newest 0)
    foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
      string(REGEX MATCH "^[0-9]+" number "${arch}")
      if(number AND number GREATER newest)
        set(newest ${number})
      endif()
    endforeach()
    if(newest GREATER 0)
      set(cached ${newest})
    endif()
  endif()
  if(cached AND COURSE_CUOBJDUMP)
    string(REPLACE ";" "," archs "${cached}")  # one argument
    add_custom_command(TARGET ${exe} POST_BUILD
      COMMAND "${CMAKE_COMMAND}" "-DCOURSE_EXE=$<TARGET_FILE:${exe}>" "-DCOURSE_CUOBJDUMP=${COURSE_CUOBJDUMP}"
              "-DCOURSE_SASS_ARCHS=${archs}" -P "${PROJECT_SOURCE_DIR}/cmake/CourseSassCache.cmake"
      VERBATIM)
  endif()
endfunction()

# Links a chapter's test program: the judge first (the tests, their main, the support library,
# GoogleTest), the exercise library last, so that the judge's copies of inline functions and
# template instances are the ones every caller gets, and a submission's definition of a judge
# function clashes instead of replacing it. Full RELRO: every library function is bound when the
# program starts and the GOT is read-only before main, so that no code of a submission can
# redirect the judge's calls (e.g. cudaEventElapsedTime) through it (tools/check-relro.py).
function(course_link_test_program exe tests_obj exercise_library)
  target_link_libraries(${exe} PRIVATE ${tests_obj} course_gtest_main course_support GTest::gtest ${exercise_library})
  target_link_options(${exe} PRIVATE "LINKER:-z,relro,-z,now")
  course_cache_sass(${exe})
endfunction()

# Gives `target` the architectures that <dir>/architectures.cmake sets, if any. The file is read
# as data, never run: comments, blank lines and one line
#     set(CHAPTER_CUDA_ARCHITECTURES "80-real;90")
# whose value lists compute capabilities as CMake writes them (NN, NN-real, NN-virtual), or is
# empty (the course's architectures). Anything else is reported, with its line, as the failure
# of the chapter's Build.Compiles test (a log in `status_dir`), and the course's architectures
# are used.
function(course_apply_chapter_architectures target dir status_dir)
  set(file "${dir}/architectures.cmake")
  set(problem_log "${status_dir}/architectures.cmake.log")
  file(REMOVE "${problem_log}")
  if(NOT EXISTS "${file}")
    return()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
  file(READ "${file}" content)
  # Lines one by one, with the list separator kept out of CMake's way.
  string(REPLACE ";" "<semicolon>" content "${content}")
  string(REPLACE "\r" "" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")
  set(value "")
  set(found 0)
  set(problem "")
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    string(STRIP "${line}" line)
    if(line STREQUAL "" OR line MATCHES "^#")
      continue()
    endif()
    if(line MATCHES "^set\\(CHAPTER_CUDA_ARCHITECTURES \"([^\"]*)\"\\)( +#.*)?$" AND found EQUAL 0)
      set(found 1)
      string(REPLACE "<semicolon>" ";" value "${CMAKE_MATCH_1}")
      foreach(item IN LISTS value)
        if(NOT item MATCHES "^[1-9][0-9]*(-real|-virtual)?$")
          set(problem "line ${number}: \"${item}\" is not a compute capability as CMake writes it (80, 80-real, 90-virtual)")
          break()
        endif()
      endforeach()
    else()
      string(REPLACE "<semicolon>" ";" line "${line}")
      set(problem "line ${number} is neither a comment nor the one set(CHAPTER_CUDA_ARCHITECTURES \"...\") line: ${line}")
    endif()
    if(problem)
      break()
    endif()
  endforeach()
  if(problem)
    file(WRITE "${problem_log}" "${file}: error: ${problem}\n"
         "The file is data, not code: comments and one line set(CHAPTER_CUDA_ARCHITECTURES \"...\").\n")
    message(WARNING "${file}: ${problem}")
    return()
  endif()
  if(value)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${value}")
    message(STATUS "${target}: CUDA architectures ${value} (from ${file})")
  endif()
endfunction()

# Maintainers (COURSE_FIXTURES=ON; tools/check-fixtures.py): every folder
# tools/fixtures/<chapter>/<name>/ is a submission built from the reference solution with some
# of its files replaced by the folder's .cu files (a wrong, cheating, too slow or legitimately
# different version). Its tests are fixture.<name>.<chapter>.<Suite>.<Case>, limited to the
# GoogleTest filter on the `filter:` line of its fixture.txt, which also says the verdict expected.
option(COURSE_FIXTURES "Build the submissions of tools/fixtures and their tests (label fixture)" OFF)
function(course_add_fixtures chapter id solution_dir given_sources)
  file(GLOB fixture_dirs LIST_DIRECTORIES true "${PROJECT_SOURCE_DIR}/tools/fixtures/${chapter}/*")
  file(GLOB solution_sources CONFIGURE_DEPENDS "${solution_dir}/*.cu")
  foreach(fixture_dir IN LISTS fixture_dirs)
    if(NOT IS_DIRECTORY "${fixture_dir}" OR NOT EXISTS "${fixture_dir}/fixture.txt")
      continue()
    endif()
    get_filename_component(name "${fixture_dir}" NAME)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${fixture_dir}/fixture.txt")
    file(GLOB fixture_sources CONFIGURE_DEPENDS "${fixture_dir}/*.cu")
    set(sources ${solution_sources})
    foreach(source IN LISTS fixture_sources)
      get_filename_component(file_name "${source}" NAME)
      list(REMOVE_ITEM sources "${solution_dir}/${file_name}")
    endforeach()
    string(REPLACE "-" "_" fid "${name}")
    set(library ${id}_fixture_${fid})
    set(exe fixture_${id}_${fid}_tests)
    add_library(${library} STATIC ${sources} ${fixture_sources} ${given_sources})
    target_link_libraries(${library} PUBLIC ${id}_contract)
    target_include_directories(${library} PRIVATE "${solution_dir}")
    set(status_dir "${CMAKE_BINARY_DIR}/course-build-status/fixture-${name}-${chapter}")
    if(EXISTS "${fixture_dir}/architectures.cmake")
      course_apply_chapter_architectures(${library} "${fixture_dir}" "${status_dir}")
    else()
      course_apply_chapter_architectures(${library} "${solution_dir}" "${status_dir}")
    endif()
    add_executable(${exe})
    course_link_test_program(${exe} ${id}_tests_obj ${library})
    course_isolate_student_build(${library} ${exe} "${status_dir}")
    file(STRINGS "${fixture_dir}/fixture.txt" filter_line REGEX "^filter:")
    string(REGEX REPLACE "^filter: *" "" filter "${filter_line}")
    set(extra_test_filter "${filter}")
    course_add_test_executable(${exe} "fixture.${name}" ${chapter} "${status_dir}")
    course_add_code_policy(${library} "fixture.${name}.${chapter}" "${status_dir}" "${given_sources}"
                           ${id}_tests_obj)
  endforeach()
endfunction()

function(course_add_chapter chapter)
  set(chapter_dir "${PROJECT_SOURCE_DIR}/chapters/${chapter}")
  set(solution_dir "${PROJECT_SOURCE_DIR}/solutions/${chapter}")
  set(test_dir "${PROJECT_SOURCE_DIR}/tests/${chapter}")
  string(REPLACE "-" "_" id "ch${chapter}")

  file(GLOB starter_sources CONFIGURE_DEPENDS "${chapter_dir}/*.cu")
  file(GLOB given_sources CONFIGURE_DEPENDS "${chapter_dir}/given/*.cu")
  file(GLOB test_sources CONFIGURE_DEPENDS "${test_dir}/*_test.cu" "${test_dir}/*_test.cpp")
  file(GLOB calibration_sources CONFIGURE_DEPENDS "${test_dir}/calibrate_*.cu" "${test_dir}/calibrate_*.cpp")

  # The contract: the chapter's headers.
  add_library(${id}_contract INTERFACE)
  target_include_directories(${id}_contract INTERFACE "${chapter_dir}")
  target_link_libraries(${id}_contract INTERFACE CUDA::cudart)

  # The code the chapter hands out (given/) goes into both libraries: it may launch kernels
  # that the starter or the solution defines.
  set(roles student)
  add_library(${id}_student STATIC ${starter_sources} ${given_sources})
  target_link_libraries(${id}_student PUBLIC ${id}_contract)

  if(COURSE_HAVE_SOLUTIONS AND EXISTS "${solution_dir}")
    file(GLOB solution_sources CONFIGURE_DEPENDS "${solution_dir}/*.cu")
    add_library(${id}_solution STATIC ${solution_sources} ${given_sources})
    target_include_directories(${id}_solution PUBLIC "${solution_dir}")
    target_link_libraries(${id}_solution PUBLIC ${id}_contract)
    list(APPEND roles solution)
  endif()

  course_apply_chapter_architectures(${id}_student "${chapter_dir}" "${CMAKE_BINARY_DIR}/course-build-status/student-${chapter}")
  if(TARGET ${id}_solution)
    course_apply_chapter_architectures(${id}_solution "${solution_dir}"
                                       "${CMAKE_BINARY_DIR}/course-build-status/solution-${chapter}")
  endif()

  # The tests are compiled once (or imported from the class's prebuilt judge, CoursePrebuilt.cmake) ...
  course_chapter_tests(${id} "${test_dir}" "${test_sources}")
  set(extra_libraries "")
  set(extra_test_environment "")
  set(extra_test_filter "")
  set(extra_test_runs "")
  set(extra_concurrent_suites "")
  if(EXISTS "${test_dir}/extra.cmake")
    include("${test_dir}/extra.cmake")  # may append to extra_libraries
  endif()
  if(COURSE_PREBUILT_DIR AND extra_libraries)
    target_link_libraries(${id}_tests_obj INTERFACE ${extra_libraries})
  elseif(extra_libraries)
    target_link_libraries(${id}_tests_obj PUBLIC ${extra_libraries})
  endif()

  # ... and linked twice: against the starter and against the reference.
  foreach(role IN LISTS roles)
    set(exe ${role}_${id}_tests)
    add_executable(${exe})
    course_prebuilt_linker(${exe} "${test_sources}")
    course_link_test_program(${exe} ${id}_tests_obj ${id}_${role})
    set(status_dir "${CMAKE_BINARY_DIR}/course-build-status/${role}-${chapter}")
    if(role STREQUAL "student")
      course_isolate_student_build(${id}_student ${exe} "${status_dir}")
    endif()
    course_add_test_executable(${exe} ${role} ${chapter} "${status_dir}")
    course_add_code_policy(${id}_${role} "${role}.${chapter}" "${status_dir}" "${given_sources}" ${id}_tests_obj)
    set_property(GLOBAL APPEND PROPERTY COURSE_TEST_TARGETS ${exe})
  endforeach()

  if(COURSE_FIXTURES AND TARGET ${id}_solution)
    course_add_fixtures(${chapter} ${id} "${solution_dir}" "${given_sources}")
  endif()

  # The calibration programs also measure variants of the reference (an unpadded tile, other
  # stage counts), compiled in only with COURSE_REFERENCE_VARIANTS: the reference itself stays a
  # valid submission (the contract's functions and nothing else).
  set(calibration_library ${id}_solution)
  file(GLOB variant_headers "${solution_dir}/*_variants.h")
  if(TARGET ${id}_solution AND variant_headers AND calibration_sources)
    set(calibration_library ${id}_solution_variants)
    add_library(${calibration_library} STATIC EXCLUDE_FROM_ALL ${solution_sources} ${given_sources})
    target_include_directories(${calibration_library} PUBLIC "${solution_dir}")
    target_compile_definitions(${calibration_library} PRIVATE COURSE_REFERENCE_VARIANTS)
    target_link_libraries(${calibration_library} PUBLIC ${id}_contract)
    get_target_property(solution_architectures ${id}_solution CUDA_ARCHITECTURES)
    set_target_properties(${calibration_library} PROPERTIES CUDA_ARCHITECTURES "${solution_architectures}")
  endif()
  if(TARGET ${id}_solution)
    foreach(source IN LISTS calibration_sources)
      get_filename_component(name "${source}" NAME_WE)
      set(exe ${name})
      add_executable(${exe} "${source}")
      target_include_directories(${exe} PRIVATE "${test_dir}")
      target_link_libraries(${exe} PRIVATE ${calibration_library} course_support ${extra_libraries})
    endforeach()
  endif()
endfunction()

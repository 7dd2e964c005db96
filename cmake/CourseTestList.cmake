# Read by ctest (not by cmake): adds the ctest tests of one GoogleTest executable, one ctest
# test per test case. course_add_test_executable() in CourseChapter.cmake generates, for each
# executable, a small file that sets the COURSE_TL_* variables below and includes this one.
#
#   COURSE_TL_EXE          the test executable
#   COURSE_TL_ROLE         student | solution | fixture.<name>
#   COURSE_TL_CHAPTER      the chapter folder, e.g. 06-transpose
#   COURSE_TL_STATUS_DIR   where the build launchers leave <file>.log when a source did not
#                          compile or the executable did not link (student code only)
#   COURSE_TL_CORRECTNESS_TIMEOUT, COURSE_TL_PERF_TIMEOUT   seconds
#   COURSE_TL_ENVIRONMENT  extra environment (a list of NAME=value)
#   COURSE_TL_SANITIZER_COMMAND  compute-sanitizer's path, or empty
#   COURSE_TL_FILTER       a GoogleTest filter: only these tests (fixtures), or empty for all
#
# Classification, from the GoogleTest suite name:
#   *Perf*        label perf (else correctness); runs alone (RUN_SERIAL): it times the GPU
#   *DeviceWide*, *Timer*  run alone: they measure something of the whole device (free
#                 memory) or time work against a clock (chapter 01's timers)
#   *Stretch*     label stretch: optional for students
#   *MultiGpu*, *PeerAccess*   label multi-gpu: needs (or may use) every GPU of the machine;
#                 tools/grade-submission runs these apart when it pins a grading to one GPU
#
# Properties are set with one set_tests_properties call per property value, so that a list
# value (LABELS) reaches ctest as a list whatever the CMake version.
#
# At ctest time, COURSE_SANITIZER=memcheck|racecheck|initcheck|synccheck runs every test under
# compute-sanitizer (performance tests then skip: a timing under a sanitizer means nothing).

set(_course_prefix "${COURSE_TL_ROLE}.${COURSE_TL_CHAPTER}")
set(_course_common_labels "${COURSE_TL_ROLE}" "${COURSE_TL_CHAPTER}")
if(COURSE_TL_ROLE MATCHES "^fixture\\.")
  set(_course_common_labels fixture "${COURSE_TL_CHAPTER}")
endif()

# The student's code did not build: one failing test says why, instead of the chapter's tests.
file(GLOB _course_build_failures "${COURSE_TL_STATUS_DIR}/*.log")
if(_course_build_failures)
  set(_course_name "${_course_prefix}.Build.Compiles")
  add_test("${_course_name}" "${COURSE_TL_EXE}")
  set_tests_properties("${_course_name}" PROPERTIES LABELS "${_course_common_labels};correctness")
  set_tests_properties("${_course_name}" PROPERTIES TIMEOUT "${COURSE_TL_CORRECTNESS_TIMEOUT}")
  return()
endif()

if(NOT EXISTS "${COURSE_TL_EXE}")
  set(_course_name "${_course_prefix}.Build.NotBuilt")
  add_test("${_course_name}" "${COURSE_TL_EXE}")
  set_tests_properties("${_course_name}" PROPERTIES LABELS "${_course_common_labels};correctness")
  set_tests_properties("${_course_name}" PROPERTIES TIMEOUT 10)
  return()
endif()

set(_course_list_filter "")
if(COURSE_TL_FILTER)
  set(_course_list_filter "--gtest_filter=${COURSE_TL_FILTER}")
endif()
# The listing runs the program (its static initialisers too), so it is kept beside the
# executable and reused until the executable changes: a program that hangs or crashes while
# starting costs its 20 s once, not at every ctest run. The filter is part of the name: a
# fixture whose filter changes is listed again.
string(MD5 _course_filter_hash "${COURSE_TL_FILTER}")
string(SUBSTRING "${_course_filter_hash}" 0 12 _course_filter_hash)
set(_course_listing_cache "${COURSE_TL_EXE}.${_course_filter_hash}.course-listing")
if(EXISTS "${_course_listing_cache}" AND NOT "${COURSE_TL_EXE}" IS_NEWER_THAN "${_course_listing_cache}")
  # First line: the listing's exit status; the rest: its output. (Not REGEX REPLACE with "^":
  # CMake applies it again at every line.)
  file(READ "${_course_listing_cache}" _course_listing)
  string(FIND "${_course_listing}" "\n" _course_newline)
  string(SUBSTRING "${_course_listing}" 0 ${_course_newline} _course_listing_result)
  math(EXPR _course_newline "${_course_newline} + 1")
  string(SUBSTRING "${_course_listing}" ${_course_newline} -1 _course_listing)
else()
  execute_process(
    COMMAND "${COURSE_TL_EXE}" --gtest_list_tests ${_course_list_filter}
    OUTPUT_VARIABLE _course_listing
    ERROR_VARIABLE _course_listing_error
    RESULT_VARIABLE _course_listing_result
    TIMEOUT 20)
  file(WRITE "${_course_listing_cache}" "${_course_listing_result}\n${_course_listing}")
endif()
if(NOT _course_listing_result EQUAL 0)
  set(_course_name "${_course_prefix}.Build.ListsItsTests")
  add_test("${_course_name}" "${COURSE_TL_EXE}" --gtest_list_tests)
  set_tests_properties("${_course_name}" PROPERTIES LABELS "${_course_common_labels};correctness")
  set_tests_properties("${_course_name}" PROPERTIES TIMEOUT 20)
  return()
endif()

set(_course_launcher "")
set(_course_sanitizer "$ENV{COURSE_SANITIZER}")
set(_course_timeout_factor 1)
if(_course_sanitizer)
  if(NOT COURSE_TL_SANITIZER_COMMAND)
    message(WARNING "COURSE_SANITIZER=${_course_sanitizer}, but no compute-sanitizer was found at configure time")
  else()
    set(_course_launcher "${COURSE_TL_SANITIZER_COMMAND}" --tool "${_course_sanitizer}" --error-exitcode 86
                         --print-limit 20)
    set(_course_timeout_factor 10)
  endif()
endif()

string(REPLACE "\n" ";" _course_lines "${_course_listing}")
set(_course_suite "")
foreach(_course_line IN LISTS _course_lines)
  # "Suite." or "Prefix/Suite.  # TypeParam = ..." on its own line, cases indented below it.
  if(_course_line MATCHES "^([^ #]+)\\.( .*)?$")
    set(_course_suite "${CMAKE_MATCH_1}")
    continue()
  endif()
  if(NOT _course_line MATCHES "^  ([^ #]+)")
    continue()
  endif()
  set(_course_case "${CMAKE_MATCH_1}")
  set(_course_filter "${_course_suite}.${_course_case}")
  set(_course_name "${_course_prefix}.${_course_suite}.${_course_case}")
  set(_course_labels ${_course_common_labels})
  set(_course_serial FALSE)
  if(_course_suite MATCHES "Perf")
    list(APPEND _course_labels perf)
    set(_course_serial TRUE)
    math(EXPR _course_timeout "${COURSE_TL_PERF_TIMEOUT} * ${_course_timeout_factor}")
  else()
    list(APPEND _course_labels correctness)
    math(EXPR _course_timeout "${COURSE_TL_CORRECTNESS_TIMEOUT} * ${_course_timeout_factor}")
  endif()
  if(_course_suite MATCHES "DeviceWide|Timer")
    set(_course_serial TRUE)
  endif()
  if(_course_suite MATCHES "Stretch")
    list(APPEND _course_labels stretch)
  endif()
  if(_course_suite MATCHES "MultiGpu|PeerAccess")
    list(APPEND _course_labels multi-gpu)
  endif()
  set(_course_environment ${COURSE_TL_ENVIRONMENT})
  if(_course_sanitizer)
    list(APPEND _course_environment "COURSE_SANITIZER=${_course_sanitizer}")
  endif()

  add_test("${_course_name}" ${_course_launcher} "${COURSE_TL_EXE}" "--gtest_filter=${_course_filter}")
  set_tests_properties("${_course_name}" PROPERTIES LABELS "${_course_labels}")
  set_tests_properties("${_course_name}" PROPERTIES TIMEOUT "${_course_timeout}")
  set_tests_properties("${_course_name}" PROPERTIES RUN_SERIAL "${_course_serial}")
  set_tests_properties("${_course_name}" PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  if(_course_environment)
    set_tests_properties("${_course_name}" PROPERTIES ENVIRONMENT "${_course_environment}")
  endif()
endforeach()

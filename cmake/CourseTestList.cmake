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
#   COURSE_TL_LAUNCHER     a command put in front of every run of the program, the listing too
#                          (tools/grade-submission: the sandbox), or empty
#   COURSE_TL_REPORT_DIR   where each test writes GoogleTest's record of it, <test name>.xml
#                          ("/" in the name as "~"): the grade reads it beside the exit status
#   COURSE_TL_EXTRA_RUNS   more runs of one case: "<Suite.Case>|<name suffix>|<VAR=value,...>"
#   COURSE_TL_CONCURRENT_SUITES  a regular expression: the suites whose verdicts need streams
#                          to run side by side (a missing wait between streams shows only then)
#   COURSE_TL_CMAKE        cmake itself (it prints the Build.Compiles report)
#
# Classification, from the GoogleTest suite name:
#   *Perf*        label perf (else correctness); runs alone (RUN_SERIAL): it times the GPU
#   *DeviceWide*, *Timer*, *Counted*  run alone: they measure something of the whole device
#                 (free memory), time work against a clock (chapter 01's timers) or count the
#                 instructions that ran (CUPTI's profiler, which one process at a time may hold)
#                 Every test that runs alone is labelled `alone`.
#   *Stretch*     label stretch: optional for students
#   *MultiGpu*, *PeerAccess*   label multi-gpu: needs (or may use) every GPU of the machine;
#                 tools/grade-submission runs these apart when it pins a grading to one GPU
#
# Hardware queues (CUDA_DEVICE_MAX_CONNECTIONS, through ENVIRONMENT_MODIFICATION). CUDA gives a
# process 8 queues by default, so that the work of up to 8 streams can run side by side. The
# GPU sets up and tears down one process's context at a time, whatever the number of cores, and
# the more queues live on it the longer that takes: on an H100 (2026-11-25) a context took
# 0.07 s to make with one queue and 0.15 s with 8 beside 16 idle one-queue contexts, 0.11 and
# 0.27-0.32 s beside 96 of them, and 0.10-0.15 and 0.29-0.33 s beside 16 idle 8-queue ones.
# So a test gets one queue, and CUDA's default (the variable unset, whatever the caller's
# environment) where streams must run side by side, a timer test (*Timer*: they check which
# streams' work a timer counts) and a suite of COURSE_TL_CONCURRENT_SUITES (with one queue,
# streams run one after another in the order of their work: a missing wait between them goes
# unseen, and work spread over streams gains nothing), and a perf test (they time as
# calibrated). A perf test times one stream (but those of COURSE_TL_CONCURRENT_SUITES): with
# one queue its work runs as with 8, or slower, never faster (streams cannot overlap), so a
# class's batches (below) run it with one.
#
# Properties are set with one set_tests_properties call per property value, so that a list
# value (LABELS) reaches ctest as a list whatever the CMake version.
#
# Batches, for the graders (tools/course_grading, never the presets). At ctest time,
# COURSE_TEST_BATCHES=1 lists, instead of one test per case, one test per group of a program's
# cases that share their classification (perf or correctness, alone or side by side, hardware
# queues): <role>.<chapter>.Batch.<group>, the program run once with those cases selected and
# --gtest_fail_fast, its record in one file. A program's CUDA context costs the GPU 0.08-0.3 s
# whatever it runs, so a batch of 12 cases saves 11 of them. A batch is only a first pass: the
# grader takes its record's verdicts that ran after passes only (results.judge_batch), and runs
# the other cases again (and every case of a batch that crashed, hung or left no record), so that
# a failure and what follows it are judged as the presets judge them. Cases that use several GPUs
# (multi-gpu) and the extra runs stay one test each (but with =queues, below, the multi-gpu cases
# make a batch of their own, Batch.every-gpu). COURSE_TEST_BATCHES=queues, for a grader
# whose every program takes turns through COURSE_GPU_LOCK (course/gpu_turn.h: a program measures
# in its exclusive turn whatever it runs beside), puts every case of a program in one batch,
# Batch.turns (time limit the longest of its cases', CUDA's default queues if any case needs
# streams side by side, else one, its perf cases' too: a case given one queue gives the same
# result with 8, and a perf case's pass with one queue is one with 8, above, though only a
# failure under its own queues stands, results.judge_batch); =queues-one-gpu, on a
# machine whose one GPU the grading has, puts the multi-gpu cases in those batches too (they see
# that one GPU). COURSE_TEST_LEAVE_OUT=<file> (one test name a line, as the one-case tests are
# named) leaves those cases out of the batches (the grader's second round of batches: the cases
# judged, or to be run one by one); its batches are named Batch.<group>-rest. COURSE_TEST_ONLY=<file>
# (one test name a line) lists only the tests named there, one per case as usual: the grader's
# last pass.
#
# At ctest time, COURSE_SANITIZER=memcheck|racecheck|initcheck|synccheck runs every test under
# compute-sanitizer (performance tests then skip: a timing under a sanitizer means nothing), and
# COURSE_SEED and COURSE_PERF_SCALE set the seed and scale the perf thresholds. All three reach
# the program as flags on its command line (--course_sanitizer=, --course_seed=,
# --course_perf_scale=), never through its environment. A program whose tests were all skipped
# exits with status 77 (SKIP_RETURN_CODE).

set(_course_prefix "${COURSE_TL_ROLE}.${COURSE_TL_CHAPTER}")
# The graders' two passes (see "Batches" above).
set(_course_only_mode FALSE)
set(_course_only "")
if(NOT "$ENV{COURSE_TEST_ONLY}" STREQUAL "")
  set(_course_only_mode TRUE)
  file(STRINGS "$ENV{COURSE_TEST_ONLY}" _course_only)
endif()
set(_course_batches FALSE)
set(_course_batch_by_queues FALSE)  # COURSE_TEST_BATCHES=queues*: grouped by hardware queues alone
set(_course_batch_multi_gpu FALSE)  # COURSE_TEST_BATCHES=queues-one-gpu: the multi-gpu cases too
set(_course_leave_out "")
set(_course_batch_suffix "")
if(NOT _course_only_mode AND "$ENV{COURSE_TEST_BATCHES}" MATCHES "^(1|queues|queues-one-gpu)$")
  set(_course_batches TRUE)
  if("$ENV{COURSE_TEST_BATCHES}" MATCHES "^queues")
    set(_course_batch_by_queues TRUE)
  endif()
  if("$ENV{COURSE_TEST_BATCHES}" STREQUAL "queues-one-gpu")
    set(_course_batch_multi_gpu TRUE)
  endif()
  if(NOT "$ENV{COURSE_TEST_LEAVE_OUT}" STREQUAL "")
    file(STRINGS "$ENV{COURSE_TEST_LEAVE_OUT}" _course_leave_out)
    set(_course_batch_suffix "-rest")
  endif()
endif()
# Whether the test `name` is listed in this pass.
function(_course_wanted name result)
  set(wanted TRUE)
  if(_course_only_mode)
    list(FIND _course_only "${name}" at)  # (ctest reads this file without CMP0057's IN_LIST)
    if(at EQUAL -1)
      set(wanted FALSE)
    endif()
  endif()
  set(${result} ${wanted} PARENT_SCOPE)
endfunction()
set(_course_common_labels "${COURSE_TL_ROLE}" "${COURSE_TL_CHAPTER}")
if(COURSE_TL_ROLE MATCHES "^fixture\\.")
  set(_course_common_labels fixture "${COURSE_TL_CHAPTER}")
endif()

# The student's code did not build: one failing test says why, instead of the chapter's tests.
# Its output is the first errors of the build launchers' logs (cmake/course-build-launcher.sh)
# and of the architectures file (CourseChapter.cmake), printed by cmake -E cat: nothing built
# from the submission runs.
file(GLOB _course_build_failures "${COURSE_TL_STATUS_DIR}/*.log")
if(_course_build_failures)
  set(_course_name "${_course_prefix}.Build.Compiles")
  set(_course_what "did not compile")
  set(_course_errors "")
  set(_course_kept 0)
  foreach(_course_log IN LISTS _course_build_failures)
    get_filename_component(_course_log_name "${_course_log}" NAME)
    if(_course_log_name STREQUAL "link.log")
      set(_course_what "did not link (a function of the contract is missing or has another signature?)")
    endif()
    file(STRINGS "${_course_log}" _course_log_lines)
    set(_course_context 0)
    foreach(_course_line IN LISTS _course_log_lines)
      if(_course_line MATCHES "error|undefined reference|multiple definition")
        set(_course_context 4)
      endif()
      if(_course_context GREATER 0 AND _course_kept LESS 20)
        string(APPEND _course_errors "${_course_line}\n")
        math(EXPR _course_kept "${_course_kept} + 1")
        math(EXPR _course_context "${_course_context} - 1")
      endif()
    endforeach()
  endforeach()
  set(_course_message "${COURSE_TL_STATUS_DIR}/Build.Compiles.txt")
  file(WRITE "${_course_message}" "[ RUN      ] Build.Compiles\nbuild: Failure\nThe code of this chapter "
       "${_course_what}, so none of its tests ran. First errors:\n${_course_errors}[  FAILED  ] Build.Compiles\n")
  _course_wanted("${_course_name}" _course_listed)
  if(_course_listed)
    add_test("${_course_name}" "${COURSE_TL_CMAKE}" -E cat "${_course_message}")
    set_tests_properties("${_course_name}" PROPERTIES WILL_FAIL TRUE)
    set_tests_properties("${_course_name}" PROPERTIES LABELS "${_course_common_labels};correctness")
    set_tests_properties("${_course_name}" PROPERTIES TIMEOUT "${COURSE_TL_CORRECTNESS_TIMEOUT}")
  endif()
  return()
endif()

if(NOT EXISTS "${COURSE_TL_EXE}")
  set(_course_name "${_course_prefix}.Build.NotBuilt")
  _course_wanted("${_course_name}" _course_listed)
  if(_course_listed)
    add_test("${_course_name}" "${COURSE_TL_EXE}")
    set_tests_properties("${_course_name}" PROPERTIES LABELS "${_course_common_labels};correctness")
    set_tests_properties("${_course_name}" PROPERTIES TIMEOUT 10)
  endif()
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
    COMMAND ${COURSE_TL_LAUNCHER} "${COURSE_TL_EXE}" --gtest_list_tests ${_course_list_filter}
    OUTPUT_VARIABLE _course_listing
    ERROR_VARIABLE _course_listing_error
    RESULT_VARIABLE _course_listing_result
    TIMEOUT 20)
  file(WRITE "${_course_listing_cache}" "${_course_listing_result}\n${_course_listing}")
endif()
if(NOT _course_listing_result EQUAL 0)
  set(_course_name "${_course_prefix}.Build.ListsItsTests")
  _course_wanted("${_course_name}" _course_listed)
  if(_course_listed)
    add_test("${_course_name}" ${COURSE_TL_LAUNCHER} "${COURSE_TL_EXE}" --gtest_list_tests)
    set_tests_properties("${_course_name}" PROPERTIES LABELS "${_course_common_labels};correctness")
    set_tests_properties("${_course_name}" PROPERTIES TIMEOUT 20)
  endif()
  return()
endif()

set(_course_launcher ${COURSE_TL_LAUNCHER})
set(_course_flags "")
set(_course_sanitizer "$ENV{COURSE_SANITIZER}")
set(_course_timeout_factor 1)
if(_course_sanitizer)
  if(NOT COURSE_TL_SANITIZER_COMMAND)
    message(WARNING "COURSE_SANITIZER=${_course_sanitizer}, but no compute-sanitizer was found at configure time")
  else()
    list(APPEND _course_launcher "${COURSE_TL_SANITIZER_COMMAND}" --tool "${_course_sanitizer}" --error-exitcode 86
                                 --print-limit 20)
    list(APPEND _course_flags "--course_sanitizer=${_course_sanitizer}")
    set(_course_timeout_factor 10)
  endif()
endif()
if(NOT "$ENV{COURSE_SEED}" STREQUAL "")
  list(APPEND _course_flags "--course_seed=$ENV{COURSE_SEED}")
endif()
if(NOT "$ENV{COURSE_PERF_SCALE}" STREQUAL "")
  list(APPEND _course_flags "--course_perf_scale=$ENV{COURSE_PERF_SCALE}")
endif()
# A diagnostic: where each program's time goes (tools/profile-tests.py sums it over a ctest log).
if("$ENV{COURSE_PROFILE}" STREQUAL "1")
  list(APPEND _course_flags "--course_profile=1")
endif()
# Each perf test that has diagnosis rules profiles one more, untimed call and explains its
# figures (course/diagnosis.h): on by default (checked on the H100: about 0.5 s per perf test);
# COURSE_DIAGNOSE=0 turns it off, COURSE_DIAGNOSE=shortfall keeps it for the checks that fail
# (tools/grade-class's default).
if("$ENV{COURSE_DIAGNOSE}" STREQUAL "shortfall")
  list(APPEND _course_flags "--course_diagnose=shortfall")
elseif(NOT "$ENV{COURSE_DIAGNOSE}" STREQUAL "0")
  list(APPEND _course_flags "--course_diagnose=1")
endif()
# COURSE_GPU_YIELD=0: each program holds its shared GPU turn to the end instead of yielding it to
# waiting measurements (course/gpu_turn.h; grade-submission --hold-gpu-turns).
if("$ENV{COURSE_GPU_YIELD}" STREQUAL "0")
  list(APPEND _course_flags "--course_gpu_yield=0")
endif()
# COURSE_GPU_ALONE=1 (a grader judging a perf shortfall again at the turn level): each program
# holds the exclusive GPU turn from its context to its end (course/settings.h, gpu_alone).
if("$ENV{COURSE_GPU_ALONE}" STREQUAL "1")
  list(APPEND _course_flags "--course_gpu_alone=1")
endif()

# A grader that runs the tests labelled `alone` apart from the others (tools/course_grading)
# gives COURSE_GPU_LOCK, a lock file: each program then takes turns on the GPU with it
# (course/gpu_turn.h: shared from its start, exclusive only while it measures) instead of
# RUN_SERIAL, so that process starts, inputs, correctness checks and exits overlap another
# test's measurement. A class on several GPUs gives the tests that use every GPU each GPU's
# file, separated by commas.
set(_course_gpu_lock "$ENV{COURSE_GPU_LOCK}")

# One ctest test: the program with one case (a batch: several) selected, its own record, and its
# properties. Further arguments are further flags.
function(_course_add_case name filter labels timeout serial environment queues)
  _course_wanted("${name}" listed)
  if(NOT listed)
    return()
  endif()
  string(REPLACE "/" "~" report "${name}")
  set(turn "")
  if(_course_gpu_lock)
    set(turn "--course_gpu_lock=${_course_gpu_lock}")
    set(serial FALSE)
  endif()
  add_test("${name}" ${_course_launcher} "${COURSE_TL_EXE}" "--gtest_filter=${filter}"
           "--gtest_output=xml:${COURSE_TL_REPORT_DIR}/${report}.xml" ${_course_flags} ${turn} ${ARGN})
  set_tests_properties("${name}" PROPERTIES LABELS "${labels}")
  set_tests_properties("${name}" PROPERTIES TIMEOUT "${timeout}")
  set_tests_properties("${name}" PROPERTIES RUN_SERIAL "${serial}")
  set_tests_properties("${name}" PROPERTIES SKIP_RETURN_CODE 77)
  if(environment)
    set_tests_properties("${name}" PROPERTIES ENVIRONMENT "${environment}")
  endif()
  if(queues STREQUAL "default")
    set_tests_properties("${name}" PROPERTIES ENVIRONMENT_MODIFICATION "CUDA_DEVICE_MAX_CONNECTIONS=unset:")
  else()
    set_tests_properties("${name}" PROPERTIES ENVIRONMENT_MODIFICATION "CUDA_DEVICE_MAX_CONNECTIONS=set:1")
  endif()
endfunction()

string(REPLACE "\n" ";" _course_lines "${_course_listing}")
set(_course_suite "")
set(_course_groups "")
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
  if(_course_suite MATCHES "DeviceWide|Timer|Counted")
    set(_course_serial TRUE)
  endif()
  if(_course_serial)
    list(APPEND _course_labels alone)
  endif()
  if(_course_suite MATCHES "Stretch")
    list(APPEND _course_labels stretch)
  endif()
  if(_course_suite MATCHES "MultiGpu|PeerAccess")
    list(APPEND _course_labels multi-gpu)
  endif()
  set(_course_queues one)
  # The suite without a "Prefix/" of a parameterised test.
  string(REGEX REPLACE "^.*/" "" _course_bare_suite "${_course_suite}")
  set(_course_streams FALSE)  # whether its verdict needs streams that run side by side
  if(_course_suite MATCHES "Timer" OR
     (COURSE_TL_CONCURRENT_SUITES AND _course_bare_suite MATCHES "${COURSE_TL_CONCURRENT_SUITES}"))
    set(_course_streams TRUE)
  endif()
  if(_course_streams OR _course_suite MATCHES "Perf")
    set(_course_queues default)
  endif()
  # A suite whose lesson is a later call in one program (...Repeated, ...Calls: an answer, a grid
  # or a stream kept in a static from the first call) runs each case in a program of its own: in
  # a batch, an earlier case's call would be the first, and a large one hides the bug.
  # With COURSE_TEST_BATCHES=queues (a class on several GPUs), the multi-gpu cases make a batch
  # of their own, Batch.every-gpu: one program, one context on each GPU, for all of them (one
  # program each, 13 gradings on 2 H100s had 52-70 of them alive at once, waiting for turns on
  # both GPUs and contexts made one at a time, and none of the class graded in 265 s, 2026-11-27).
  if(_course_batches AND (_course_batch_multi_gpu OR _course_batch_by_queues OR NOT _course_suite MATCHES "MultiGpu|PeerAccess")
     AND NOT _course_bare_suite MATCHES "(Repeated|Calls)$")
    # Into its group's batch (added after the listing): its cases share these properties.
    set(_course_group correctness)
    if(_course_batch_by_queues AND NOT _course_batch_multi_gpu AND _course_suite MATCHES "MultiGpu|PeerAccess")
      set(_course_group every-gpu)
    elseif(_course_batch_by_queues)
      set(_course_group turns)
    else()
      if(_course_suite MATCHES "Perf")
        set(_course_group perf)
      endif()
      if(_course_serial)
        string(APPEND _course_group "-alone")
      endif()
    endif()
    if(_course_queues STREQUAL "default" AND NOT _course_batch_by_queues)
      string(APPEND _course_group "-8queues")
    endif()
    string(APPEND _course_group "${_course_batch_suffix}")
    list(FIND _course_leave_out "${_course_name}" _course_left_out)
    list(FIND _course_groups "${_course_group}" _course_group_at)
    if(NOT _course_left_out EQUAL -1)
      # judged already, or to be run on its own
    elseif(_course_group_at EQUAL -1)
      list(APPEND _course_groups "${_course_group}")
      set(_course_batch_labels ${_course_labels} batch)
      list(REMOVE_ITEM _course_batch_labels stretch)  # a case's own label; the batch is not optional
      set("_course_group_labels_${_course_group}" ${_course_batch_labels})
      set("_course_group_timeout_${_course_group}" "${_course_timeout}")
      set("_course_group_serial_${_course_group}" "${_course_serial}")
      if(_course_batch_by_queues AND NOT _course_streams)
        set("_course_group_queues_${_course_group}" one)  # a perf case too: see above
      else()
        set("_course_group_queues_${_course_group}" "${_course_queues}")
      endif()
      set("_course_group_filter_${_course_group}" "${_course_filter}")
    else()
      # A group by queues alone: every label of its cases (one phase runs them all), the longest
      # time limit, run alone when any case must be.
      set(_course_batch_labels ${_course_group_labels_${_course_group}} ${_course_labels})
      list(REMOVE_ITEM _course_batch_labels stretch)
      list(REMOVE_DUPLICATES _course_batch_labels)
      set("_course_group_labels_${_course_group}" ${_course_batch_labels})
      if(_course_timeout GREATER "${_course_group_timeout_${_course_group}}")
        set("_course_group_timeout_${_course_group}" "${_course_timeout}")
      endif()
      if(_course_serial)
        set("_course_group_serial_${_course_group}" TRUE)
      endif()
      if(_course_streams)
        set("_course_group_queues_${_course_group}" default)  # one queue's cases run with 8 too
      endif()
      string(APPEND "_course_group_filter_${_course_group}" ":${_course_filter}")
    endif()
  elseif(_course_batches AND _course_batch_suffix)
    # A second round of batches lists nothing else.
  else()
    _course_add_case("${_course_name}" "${_course_filter}" "${_course_labels}" "${_course_timeout}" "${_course_serial}"
                     "${COURSE_TL_ENVIRONMENT}" "${_course_queues}")
  endif()
  # Further runs of this case with another environment (chapter 11: CUDA_VISIBLE_DEVICES=1).
  foreach(_course_run IN LISTS COURSE_TL_EXTRA_RUNS)
    string(REPLACE "|" ";" _course_run "${_course_run}")
    list(GET _course_run 0 _course_run_case)
    if(NOT _course_run_case STREQUAL _course_filter OR _course_batch_suffix)
      continue()
    endif()
    list(GET _course_run 1 _course_run_suffix)
    list(GET _course_run 2 _course_run_environment)
    string(REPLACE "," ";" _course_run_environment "${_course_run_environment}")
    set(_course_run_labels ${_course_labels} multi-gpu)
    list(REMOVE_DUPLICATES _course_run_labels)
    set(_course_run_all_environment ${COURSE_TL_ENVIRONMENT} ${_course_run_environment})
    _course_add_case("${_course_name}.${_course_run_suffix}" "${_course_filter}" "${_course_run_labels}"
                     "${_course_timeout}" "${_course_serial}" "${_course_run_all_environment}" "${_course_queues}")
  endforeach()
endforeach()

# A batch has one case's time limit: a batch runs its cases in far less (the references' in a few
# seconds), and one that runs out of time has its cases run again one by one, each with its limit.
foreach(_course_group IN LISTS _course_groups)
  _course_add_case("${_course_prefix}.Batch.${_course_group}" "${_course_group_filter_${_course_group}}"
                   "${_course_group_labels_${_course_group}}" "${_course_group_timeout_${_course_group}}"
                   "${_course_group_serial_${_course_group}}" "${COURSE_TL_ENVIRONMENT}"
                   "${_course_group_queues_${_course_group}}" --gtest_fail_fast)
endforeach()

# The judge built once per class (tools/grade-class): a build tree of the course compiles the
# support library, the GoogleTest main and every chapter's tests (target course_prebuilt) and
# writes course-prebuilt.cmake, the paths of what it compiled. A grading's build configured with
# -DCOURSE_PREBUILT_DIR=<that tree> imports them instead of compiling its own: it compiles only
# the submission's starter files (and the given ones) and links.

set(COURSE_PREBUILT_DIR "" CACHE PATH
    "A build tree of this course whose compiled judge (course_prebuilt) the test programs link instead of compiling it")

# The imported targets of the prebuilt judge: course_support and course_gtest_main (the chapters
# import their tests in course_add_chapter). A macro: the manifest's paths are for the whole project.
macro(course_import_prebuilt_judge)
  if(NOT EXISTS "${COURSE_PREBUILT_DIR}/course-prebuilt.cmake")
    message(FATAL_ERROR "COURSE_PREBUILT_DIR: no ${COURSE_PREBUILT_DIR}/course-prebuilt.cmake "
                        "(build the target course_prebuilt there first)")
  endif()
  include("${COURSE_PREBUILT_DIR}/course-prebuilt.cmake")
  find_package(Threads REQUIRED)
  add_library(course_support STATIC IMPORTED GLOBAL)
  set_target_properties(course_support PROPERTIES
    IMPORTED_LOCATION "${COURSE_PREBUILT_SUPPORT}"
    INTERFACE_INCLUDE_DIRECTORIES "${PROJECT_SOURCE_DIR}/tests/support/include"
    INTERFACE_LINK_LIBRARIES "CUDA::cudart;GTest::gtest;$<LINK_ONLY:CUDA::cupti>;$<LINK_ONLY:Threads::Threads>")
  add_library(course_gtest_main STATIC IMPORTED GLOBAL)
  set_target_properties(course_gtest_main PROPERTIES
    IMPORTED_LOCATION "${COURSE_PREBUILT_GTEST_MAIN}"
    INTERFACE_LINK_LIBRARIES course_support)
  # (Not while the judge compiles: tools/grade-class builds a submission's own files meanwhile,
  # and links once the judge has compiled; course-prebuilt.pending, tools/course_grading.)
  foreach(prebuilt_library IN ITEMS "${COURSE_PREBUILT_SUPPORT}" "${COURSE_PREBUILT_GTEST_MAIN}")
    if(NOT EXISTS "${prebuilt_library}" AND NOT EXISTS "${COURSE_PREBUILT_DIR}/course-prebuilt.pending")
      message(FATAL_ERROR "COURSE_PREBUILT_DIR: ${prebuilt_library} is missing (build course_prebuilt there)")
    endif()
  endforeach()
endmacro()

# The chapter's diagnosis rules (test_dir/diagnosis.txt, course/diagnosis.h), compiled into its
# tests as COURSE_DIAGNOSIS_RULES_TEXT (a string; "" without the file): the tests carry
# them, so that no program reads a file for them, inside a grader's sandbox or out.
function(course_compile_diagnosis_rules id test_dir)
  set(rules_file "${test_dir}/diagnosis.txt")
  set(text "")
  if(EXISTS "${rules_file}")
    file(READ "${rules_file}" text)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${rules_file}")
  endif()
  set(header "${CMAKE_BINARY_DIR}/course-diagnosis/${id}/course_diagnosis_rules.h")
  string(CONCAT content "// Generated from ${rules_file} (cmake/CoursePrebuilt.cmake).\n#pragma once\n\n"
                       "namespace course_generated {\n"
                       "inline constexpr char kDiagnosisRules[] = R\"course_rules(${text})course_rules\";\n"
                       "}  // namespace course_generated\n\n"
                       "#define COURSE_DIAGNOSIS_RULES_TEXT ::course_generated::kDiagnosisRules\n")
  if(EXISTS "${header}")
    file(READ "${header}" before)
  endif()
  if(NOT "${before}" STREQUAL "${content}")
    file(WRITE "${header}" "${content}")
  endif()
  target_include_directories(${id}_tests_obj PRIVATE "${CMAKE_BINARY_DIR}/course-diagnosis/${id}")
endfunction()

# A chapter's tests: compiled here, or imported from the prebuilt judge. Returns the target.
function(course_chapter_tests id test_dir test_sources)
  if(COURSE_PREBUILT_DIR)
    if(NOT DEFINED COURSE_PREBUILT_TESTS_${id})
      message(FATAL_ERROR "COURSE_PREBUILT_DIR: the prebuilt judge has no tests of ${id}")
    endif()
    add_library(${id}_tests_obj OBJECT IMPORTED)
    set_target_properties(${id}_tests_obj PROPERTIES IMPORTED_OBJECTS "${COURSE_PREBUILT_TESTS_${id}}")
    target_link_libraries(${id}_tests_obj INTERFACE course_support GTest::gtest ${id}_contract)
  else()
    add_library(${id}_tests_obj OBJECT ${test_sources})
    target_link_libraries(${id}_tests_obj PUBLIC course_support GTest::gtest ${id}_contract)
    # Compiled beside the support library, not after it (its objects need only its headers):
    # the judge's build is then as long as its slowest file, not the library's plus a chapter's.
    set_target_properties(${id}_tests_obj PROPERTIES OPTIMIZE_DEPENDENCIES ON)
    target_include_directories(${id}_tests_obj PRIVATE "${test_dir}")
    course_compile_diagnosis_rules(${id} "${test_dir}")
    set_property(GLOBAL APPEND PROPERTY COURSE_PREBUILT_CHAPTER_IDS ${id})
  endif()
endfunction()

# The test program's linker, as the compiled tests would choose it: nvcc with a CUDA source.
function(course_prebuilt_linker exe test_sources)
  if(COURSE_PREBUILT_DIR)
    set(language CXX)
    foreach(source IN LISTS test_sources)
      if(source MATCHES "\\.cu$")
        set(language CUDA)
      endif()
    endforeach()
    set_target_properties(${exe} PROPERTIES LINKER_LANGUAGE ${language})
  endif()
endfunction()

# In a build that compiles the judge: course_prebuilt and the manifest.
function(course_write_prebuilt_manifest)
  if(COURSE_PREBUILT_DIR)
    return()
  endif()
  get_property(ids GLOBAL PROPERTY COURSE_PREBUILT_CHAPTER_IDS)
  string(CONCAT content "# Written by cmake/CoursePrebuilt.cmake: what course_prebuilt compiled.\n"
      "set(COURSE_PREBUILT_SUPPORT [==[$<TARGET_FILE:course_support>]==])\n"
      "set(COURSE_PREBUILT_GTEST_MAIN [==[$<TARGET_FILE:course_gtest_main>]==])\n")
  add_custom_target(course_prebuilt)
  add_dependencies(course_prebuilt course_support course_gtest_main)
  foreach(id IN LISTS ids)
    string(APPEND content "set(COURSE_PREBUILT_TESTS_${id} [==[$<TARGET_OBJECTS:${id}_tests_obj>]==])\n")
    # With COURSE_GRADED_CHAPTERS, only those chapters' tests are compiled.
    set(wanted TRUE)
    if(COURSE_GRADED_CHAPTERS)
      string(REPLACE "-" "_" graded_ids "${COURSE_GRADED_CHAPTERS}")
      list(TRANSFORM graded_ids PREPEND "ch")
      if(NOT id IN_LIST graded_ids)
        set(wanted FALSE)
      endif()
    endif()
    if(wanted)
      add_dependencies(course_prebuilt ${id}_tests_obj)
    endif()
  endforeach()
  file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/course-prebuilt.cmake" CONTENT "${content}")
endfunction()

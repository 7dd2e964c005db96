# GoogleTest from the system (Debian: libgtest-dev). Where only the sources are
# installed (Debian: googletest, in /usr/src/googletest), build them in-tree.
find_package(GTest QUIET)
if(NOT GTest_FOUND)
  # Debian's sources, else a copy in .deps/ (how maintainers bring them to a GPU machine
  # that has no GoogleTest installed).
  set(default_source "/usr/src/googletest")
  if(NOT EXISTS "${default_source}/CMakeLists.txt")
    set(default_source "${CMAKE_CURRENT_SOURCE_DIR}/.deps/googletest")
  endif()
  set(COURSE_GTEST_SOURCE_DIR "${default_source}" CACHE PATH
    "GoogleTest sources used when no installed GTest package is found")
  if(NOT EXISTS "${COURSE_GTEST_SOURCE_DIR}/CMakeLists.txt")
    message(FATAL_ERROR
      "GoogleTest not found. Install it (Debian/Ubuntu: apt-get install libgtest-dev) "
      "or point COURSE_GTEST_SOURCE_DIR at its sources.")
  endif()
  message(STATUS "Building GoogleTest from ${COURSE_GTEST_SOURCE_DIR}")
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  add_subdirectory("${COURSE_GTEST_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/_deps/googletest" EXCLUDE_FROM_ALL)
  add_library(GTest::gtest ALIAS gtest)
  add_library(GTest::gtest_main ALIAS gtest_main)
endif()

# Run after a test program is linked (cmake -P): writes its SASS for each architecture of
# COURSE_SASS_ARCHS beside it, <program>.sm_NN.sass, as `cuobjdump -sass -arch sm_NN` prints it.
# The technique tests read that file instead of running cuobjdump themselves
# (tests/support/src/fatbin.cpp), and only while it is newer than the program. Test programs
# cannot write the build tree when tools/grade-submission sandboxes them, so the file is the
# judge's. A program without SASS for an architecture (a chapter 11 build for others) gets no
# file for it: its tests then run cuobjdump, as they do without this cache.
#   -DCOURSE_EXE=<program> -DCOURSE_CUOBJDUMP=<cuobjdump> -DCOURSE_SASS_ARCHS=<90,80>
string(REPLACE "," ";" archs "${COURSE_SASS_ARCHS}")
foreach(arch IN LISTS archs)
  set(cache "${COURSE_EXE}.sm_${arch}.sass")
  file(REMOVE "${cache}" "${cache}.part")
  execute_process(
    COMMAND "${COURSE_CUOBJDUMP}" -sass -arch "sm_${arch}" "${COURSE_EXE}"
    OUTPUT_FILE "${cache}.part"
    ERROR_QUIET
    RESULT_VARIABLE status
    TIMEOUT 120)
  file(SIZE "${cache}.part" bytes)
  if(status EQUAL 0 AND bytes GREATER 0)
    file(RENAME "${cache}.part" "${cache}")
  else()
    file(REMOVE "${cache}.part")
  endif()
endforeach()

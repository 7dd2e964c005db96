#!/usr/bin/env bash
# Compiler and linker launcher of the student targets (see course_isolate_student_build in
# CourseChapter.cmake): one chapter whose starter does not compile or link must not stop the
# build of the others, so that every other chapter is still graded.
#
#   course-build-launcher.sh compile <status-dir> <empty.cu> <compiler command...>
#   course-build-launcher.sh link    <status-dir> <compiler command...>
#
# compile: runs the command; if it fails, prints the errors, keeps them in
#   <status-dir>/<source>.log and compiles <empty.cu> in place of the source, so that the
#   library still builds (without the student's functions).
# link: runs the command; if it fails (its messages kept in <status-dir>/link.log), or a source
#   of the chapter did not compile, writes in place of the executable a stand-in that fails. The
#   chapter's tests then show one failing test, <role>.<chapter>.Build.Compiles, with the first
#   errors of the logs (cmake/CourseTestList.cmake).
set -u
mode=$1 status_dir=$2
shift 2
mkdir -p "$status_dir"

# The argument that follows `flag` in the command line "$@".
argument_after() {
  local flag=$1 previous=""
  shift
  for argument in "$@"; do
    [ "$previous" = "$flag" ] && { printf '%s' "$argument"; return; }
    previous=$argument
  done
}

# Runs the command, passing its messages on; on success forgets `log` and exits 0, on failure
# keeps its messages in `log` and returns.
run_or_record() {
  local log=$1 messages
  shift
  messages=$("$@" 2>&1)
  local status=$?
  [ -n "$messages" ] && printf '%s\n' "$messages" >&2
  if [ $status -eq 0 ]; then
    rm -f "$log"
    exit 0
  fi
  printf '%s\n' "$messages" >"$log"
}

if [ "$mode" = compile ]; then
  empty=$1
  shift
  source=$(argument_after -c "$@")
  run_or_record "$status_dir/$(basename "$source").log" "$@"
  echo "course: $source did not compile; its chapter's tests will report it (the other chapters still build)" >&2
  args=("$@")
  for ((i = 0; i < ${#args[@]}; i++)); do
    [ "${args[$i]}" = "$source" ] && args[$i]=$empty
  done
  exec "${args[@]}"
fi

# link
output=$(argument_after -o "$@")
log="$status_dir/link.log"
compile_logs=$(find "$status_dir" -name '*.log' ! -name link.log | sort)
if [ -z "$compile_logs" ]; then
  run_or_record "$log" "$@"
  echo "course: $output did not link; its chapter's tests will report it (the other chapters still build)" >&2
fi
# A stand-in for the program, so that the build goes on; ctest reports Build.Compiles from the
# logs in $status_dir (cmake/CourseTestList.cmake), never by running this.
printf '#!/bin/sh\necho "this chapter did not build: see its Build.Compiles test"\nexit 1\n' >"$output"
chmod +x "$output"
exit 0

#!/usr/bin/env bash
# Maintainer check, on a GPU: every threshold must be able to fail. Each folder
#   tools/threshold-variants/<chapter>/<variant>/
# holds a replacement for the chapter's starter (e.g. a correct but unpadded transpose) and
# `expected-failures`, a regular expression. The student tests are built against the variant;
# the check passes when exactly the tests matching the expression fail.
# Usage: tools/check-thresholds.sh [build-dir]   (default build-variants)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-variants}
status=0
for dir in "$top"/tools/threshold-variants/*/*/; do
  dir=${dir%/}
  variant=$(basename "$dir")
  chapter=$(basename "$(dirname "$dir")")
  id="ch${chapter//-/_}"
  expected=$(cat "$dir/expected-failures")
  echo "== $chapter / $variant: expecting failures matching '$expected'"
  cmake -S "$top" -B "$build" -DCOURSE_STARTER_OVERRIDE="$chapter=$dir" ${COURSE_EXTRA_CMAKE_ARGS:-} >"$build.configure.log" 2>&1 \
    && cmake --build "$build" --target "student_${id}_tests" -j 8 >"$build.build.log" 2>&1 \
    || { echo "   FAILED to build (see $build.build.log)"; status=1; continue; }
  ctest --test-dir "$build" -R "^student\.$chapter\." --output-on-failure -j 4 >"$build.$chapter.$variant.log" 2>&1
  # Every test listed as failed, whatever the reason; a crash or timeout is never expected.
  # ctest lists "  N - <name> (<reason>)", newer versions followed by the labels.
  failed=$(sed -n '/The following tests FAILED:/,$ s/^[[:space:]]*[0-9]* - \(student\.[^ ]*\) (.*$/\1/p' "$build.$chapter.$variant.log" | sort)
  if grep -A1000 "The following tests FAILED:" "$build.$chapter.$variant.log" | grep -E "^[[:space:]]*[0-9]+ - " | grep -v "(Failed)"; then
    echo "   a test crashed or timed out"; status=1
  fi
  all=$(ctest --test-dir "$build" -N -R "^student\.$chapter\." | sed -n 's/^ *Test *#[0-9]*: //p' | sort)
  want=$(grep -E -- "$expected" <<<"$all" || true)
  grep -h "\[  PERF    \]" "$build.$chapter.$variant.log" | sed 's/^/   /'
  if [ "$failed" == "$want" ] && [ -n "$want" ]; then
    echo "   OK: failed exactly as expected ($(wc -l <<<"$want") test(s))"
  else
    echo "   MISMATCH. failed:"; sed 's/^/     /' <<<"$failed"; echo "   expected:"; sed 's/^/     /' <<<"$want"
    status=1
  fi
done
exit $status

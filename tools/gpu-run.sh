#!/usr/bin/env bash
# Everything a maintainer runs on a GPU machine, with logs in one folder:
# the README's two workflows, the calibration programs (tables and CSV), and the threshold
# check. Usage: tools/gpu-run.sh [log-dir]   Exit status: non-zero if the reference tests or
# the threshold check failed (the grade workflow is expected to fail on untouched starters).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-$top/build/gpu-logs}
mkdir -p "$logs"
cd "$top"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/device.txt"

cmake --preset default ${COURSE_EXTRA_CMAKE_ARGS:-} >"$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
grep -E "CUDA architectures|GoogleTest" "$logs/configure.log"

cmake --workflow --preset test >"$logs/test.log" 2>&1
test_status=$?
echo "== test workflow (exit $test_status)"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\(SEGFAULT\)|\(Skipped\)" "$logs/test.log" | head -40
# The same results as a summary with every perf measurement of the references.
cmake -D BUILD_DIR=build -D JUNIT_IN=build/test-report.xml -P cmake/grade.cmake 2>&1 |
  sed -n '/^Performance/,/^Result/p' | tee "$logs/test-summary.txt"

cmake --workflow --preset grade >"$logs/grade.log" 2>&1
echo "== grade workflow (exit $?; the untouched starters are expected to fail)"
sed -n '/==== Grade summary/,/^Reports:/p' "$logs/grade.log"
cp build/grade-report.md build/grade-report.xml build/test-report.xml "$logs/" 2>/dev/null

echo "== calibration (docs/figures/measure.sh: tables here, CSV in docs/data)"
docs/figures/measure.sh build 2>&1 | tee "$logs/calibration.txt"
cp docs/data/* "$logs/" 2>/dev/null

if command -v compute-sanitizer >/dev/null 2>&1; then
  echo "== compute-sanitizer (memcheck, then racecheck) on the references, small shapes"
  small='*Cols33*:*M17K33*:*N1025:*N4099:*N1000Streams3Chunks7:*N4097:*MatchesCpuOnOneDevice'
  for exe in build/solution_*_tests; do
    for tool in memcheck racecheck; do
      compute-sanitizer --tool $tool --error-exitcode 3 "$exe" --gtest_filter="$small" >"$logs/sanitizer-$tool-$(basename "$exe").log" 2>&1
      echo "   $tool $(basename "$exe"): exit $? ($(grep -c '^\[       OK \]' "$logs/sanitizer-$tool-$(basename "$exe").log") tests ran)"
    done
  done
fi

if [ -n "${COURSE_SKIP_THRESHOLDS:-}" ]; then
  echo "== threshold check skipped (COURSE_SKIP_THRESHOLDS)"
  exit $(( test_status != 0 ))
fi
echo "== threshold check"
tools/check-thresholds.sh "$top/build-variants" 2>&1 | tee "$logs/thresholds.txt"
threshold_status=${PIPESTATUS[0]}
exit $(( test_status != 0 || threshold_status != 0 ))

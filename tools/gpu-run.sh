#!/usr/bin/env bash
# Everything a maintainer runs on a GPU machine, with logs in one folder: the README's two
# workflows (the test workflow COURSE_TEST_RUNS times in a row, default 1), the fixture check
# (every wrong, cheating and legitimate submission of tools/fixtures gets its verdict),
# compute-sanitizer on the references, with COURSE_CALIBRATE=1 the calibration programs
# (tables and CSV for docs/data), and with COURSE_GRADE_CLASS=1 the class fixtures graded with
# tools/grade-class on every GPU here (tests/grading/check_grade_class.py; class.csv kept), and
# with COURSE_PROFILE=1 where each test run's time went (tools/profile-tests.py, profile-N.txt),
# and with COURSE_STRESS_TURNS=1 the GPU turn's yielding stressed (tools/stress-gpu-turns.py).
# COURSE_SKIP_TESTS, COURSE_SKIP_GRADE, COURSE_SKIP_FIXTURES and COURSE_SKIP_SANITIZER leave a part out,
# COURSE_FIXTURE_CHAPTERS=a,b checks only those chapters' fixtures, COURSE_FIXTURE_NAMES=ch/name,... only those,
# COURSE_FIXTURE_DIAGNOSE=1 checks their diagnosis lines too (tools/check-fixtures.py --diagnose),
# COURSE_FIXTURE_GPUS=all runs them on every GPU side by side (check-fixtures.py --gpus; one GPU
# took more than 330 s for the fixtures' 3,925 tests, 2 x H200, 2026-11-28), and with it
# COURSE_FIXTURE_DEADLINE=S starts no fixture after S seconds (those not run are named)
# (e.g. to run the parts side by side, one GPU each: CUDA_VISIBLE_DEVICES, a copy of the tree each).
# Usage: tools/gpu-run.sh [log-dir]   Exit status: non-zero if a reference test or a fixture
# verdict failed, or an untouched starter earned a point (the grade workflow is expected to fail
# on untouched starters, in every test that carries points).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-$top/build/gpu-logs}
mkdir -p "$logs"
cd "$top"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/device.txt"

cmake --preset default -DCOURSE_FIXTURES=ON ${COURSE_EXTRA_CMAKE_ARGS:-} >"$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
grep -E "CUDA architectures|GoogleTest" "$logs/configure.log"
start=$(date +%s)
cmake --build --preset default >"$logs/build.log" 2>&1 || { grep -E "error" "$logs/build.log" | head -30; exit 1; }
echo "== build: $(( $(date +%s) - start )) s"

test_status=0
starter_status=0
runs=${COURSE_TEST_RUNS:-1}
[ -n "${COURSE_SKIP_TESTS:-}" ] && runs=0  # e.g. the grade workflow or the fixtures alone, on another GPU
for run in $(seq 1 "$runs"); do
  start=$(date +%s)
  cmake --workflow --preset test >"$logs/test-$run.log" 2>&1
  status=$?
  [ $status -ne 0 ] && test_status=1
  echo "== test workflow run $run/$runs: exit $status, $(( $(date +%s) - start )) s: $(grep -E "tests passed|tests failed" "$logs/test-$run.log")"
  # ctest's own log of the run (every test's output and time); with COURSE_PROFILE=1, where it went.
  cp build/Testing/Temporary/LastTest.log "$logs/ctest-$run.log" 2>/dev/null
  [ "${COURSE_PROFILE:-}" = 1 ] && python3 tools/profile-tests.py "$logs/ctest-$run.log" --top 15 >"$logs/profile-$run.txt"
  grep -E "\((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception)\)" "$logs/test-$run.log" | head -20
done
if [ "$runs" -gt 0 ]; then
  grep -E "\(Skipped\)" "$logs/test-1.log" | head -10
  # The same results as a summary with every perf measurement of the references.
  python3 tools/grade-report --build build --junit-in build/test-report.xml 2>&1 |
    sed -n '/^Performance/,/^Result/p' | tee "$logs/test-summary.txt"
  python3 tools/check-test-properties.py build | tee "$logs/test-properties.txt"
fi

if [ -z "${COURSE_SKIP_GRADE:-}" ]; then
  cmake --workflow --preset grade >"$logs/grade.log" 2>&1
  echo "== grade workflow (exit $?; the untouched starters are expected to fail)"
  sed -n '/==== Grade summary/,/^Reports:/p' "$logs/grade.log"
  cp build/grade-report.md build/grade-report.xml "$logs/" 2>/dev/null
  # The untouched starters earn no points: a test that one passes can not fail.
  python3 tools/check-starters-score-zero.py --build build | tee "$logs/starters-score-zero.txt"
  [ "${PIPESTATUS[0]}" -ne 0 ] && starter_status=1
fi
cp build/test-report.xml "$logs/" 2>/dev/null

fixture_status=0
if [ -z "${COURSE_SKIP_FIXTURES:-}" ]; then
echo "== fixtures"
start=$(date +%s)
python3 tools/check-fixtures.py --build build --report "$logs/fixtures.md" ${COURSE_FIXTURE_CHAPTERS:+--chapters "$COURSE_FIXTURE_CHAPTERS"} \
  ${COURSE_FIXTURE_NAMES:+--fixtures "$COURSE_FIXTURE_NAMES"} ${COURSE_FIXTURE_DIAGNOSE:+--diagnose} \
  ${COURSE_FIXTURE_GPUS:+--gpus "$COURSE_FIXTURE_GPUS"} ${COURSE_FIXTURE_DEADLINE:+--deadline "$COURSE_FIXTURE_DEADLINE"} \
  >"$logs/fixtures.txt" 2>&1
fixture_status=$?
cat "$logs/fixtures.txt"
echo "(fixtures: $(( $(date +%s) - start )) s)"
cp build/fixtures-report*.xml "$logs/" 2>/dev/null
fi

if [ -n "${COURSE_CALIBRATE:-}" ]; then
  echo "== calibration (docs/figures/measure.sh: tables here, CSV in docs/data)"
  docs/figures/measure.sh build 2>&1 | tee "$logs/calibration.txt"
  cp docs/data/* "$logs/" 2>/dev/null
fi

if [ -z "${COURSE_SKIP_SANITIZER:-}" ] && command -v compute-sanitizer >/dev/null 2>&1; then
  echo "== compute-sanitizer (ctest's COURSE_SANITIZER mode) on the references' correctness tests, small shapes"
  for tool in memcheck racecheck; do
    COURSE_SANITIZER=$tool ctest --test-dir build -L '^solution$' -LE perf -j 4 \
      -R 'Cols33|M17K33|N1025$|N4099$|N1000Streams3Chunks7|N4097$|Technique' >"$logs/sanitizer-$tool.log" 2>&1
    echo "   $tool: exit $? ($(grep -E "tests passed|tests failed" "$logs/sanitizer-$tool.log"))"
  done
fi
stress_status=0
if [ -n "${COURSE_STRESS_TURNS:-}" ]; then
  echo "== the GPU turn's yielding, stressed (tools/stress-gpu-turns.py)"
  python3 tools/stress-gpu-turns.py --build build --logs "$logs/stress" >"$logs/stress.txt" 2>&1
  stress_status=$?
  cat "$logs/stress.txt"
fi
class_status=0
if [ -n "${COURSE_GRADE_CLASS:-}" ]; then
  echo "== class fixtures graded with tools/grade-class (tests/grading/check_grade_class.py)"
  python3 tests/grading/check_grade_class.py --work "$logs/class" --timeouts 15,40 >"$logs/class.log" 2>&1
  class_status=$?
  tail -n 25 "$logs/class.log"
  cp "$logs/class/graded/class.csv" "$logs/class/graded/class-timing.csv" "$logs/" 2>/dev/null
fi
exit $(( test_status != 0 || starter_status != 0 || fixture_status != 0 || class_status != 0 || stress_status != 0 ))

#!/usr/bin/env bash
# Issue 45's checks on a GPU, with logs in one folder: the references' perf tests of the chapters
# that have diagnosis rules (tests/<chapter>/diagnosis.txt) run without (COURSE_DIAGNOSE=0) and
# then with the diagnosis (the default), each chapter timed (what the profile adds) and every "[ DIAGNOSIS]" line kept
# (what the references are told), then tools/check-fixtures.py --diagnose on the fixtures that carry
# "diagnosis:" lines (what the wrong ones are told, and that their verdicts stay).
# Usage: tools/gpu-run-diagnosis.sh LOGDIR   (builds build/ with the fixtures, as tools/gpu-run.sh does)
# Exit status: non-zero if a reference perf test failed in either run or a fixture's verdict or
# diagnosis differs from its fixture.txt.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
logs=$(mkdir -p "$1" && cd "$1" && pwd)
cd "$top"
cmake --preset default -DCOURSE_FIXTURES=ON >"$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
start=$(date +%s)
cmake --build --preset default >"$logs/build.log" 2>&1 || { grep -E "error" "$logs/build.log" | head -30; exit 1; }
echo "== build: $(( $(date +%s) - start )) s"

status=0
chapters=$(cd tests && ls -d */diagnosis.txt 2>/dev/null | cut -d/ -f1)
printf '| chapter | perf tests passed | without (s) | with COURSE_DIAGNOSE=1 (s) | added | each test |\n| --- | --- | --- | --- | --- | --- |\n' >"$logs/diagnosis-cost.md"
for chapter in $chapters; do
  for mode in plain diagnose; do
    if [ $mode = diagnose ]; then export COURSE_DIAGNOSE=1; else export COURSE_DIAGNOSE=0; fi
    ctest --test-dir build -L '^solution$' -L '^perf$' -L "^$chapter\$" -V >"$logs/$chapter-$mode.log" 2>&1 || status=1
    unset COURSE_DIAGNOSE
  done
  # Each test's own time, as ctest measured it, summed per mode.
  python3 - "$chapter" "$logs/$chapter-plain.log" "$logs/$chapter-diagnose.log" >>"$logs/diagnosis-cost.md" <<'PY'
import re, sys
def times(path):
    return {m[0]: float(m[1]) for m in re.findall(r"Test +#\d+: (\S+) \.+ +Passed +([\d.]+) sec", open(path).read())}
plain, diagnose = times(sys.argv[2]), times(sys.argv[3])
a, b = sum(plain.values()), sum(diagnose.values())
each = ", ".join(f"{t.split('.', 2)[2]} {plain[t]:.1f} -> {diagnose.get(t, 0):.1f}" for t in plain)
print(f"| {sys.argv[1]} | {len(plain)} | {a:.1f} | {b:.1f} | {100 * (b - a) / a if a else 0:+.0f} % | {each} |")
PY
  echo "== $chapter: $(grep -E "tests passed|tests failed" "$logs/$chapter-plain.log") | with diagnosis: $(grep -E "tests passed|tests failed" "$logs/$chapter-diagnose.log")"
  grep -hE "\[ DIAGNOSIS\]|\[ *PERF *\]" "$logs/$chapter-diagnose.log" | sed 's/^[0-9]*: //' | head -20
done
cat "$logs/diagnosis-cost.md"

echo "== fixtures with diagnosis lines, checked with --diagnose"
names=$(cd tools/fixtures && grep -l "^diagnosis:" */*/fixture.txt | xargs -n1 dirname | paste -sd,)
python3 tools/check-fixtures.py --build build --diagnose --fixtures "$names" --report "$logs/fixtures-diagnose.md" \
  >"$logs/fixtures-diagnose.txt" 2>&1 || status=1
cat "$logs/fixtures-diagnose.txt"
exit $status

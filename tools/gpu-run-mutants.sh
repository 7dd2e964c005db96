#!/usr/bin/env bash
# A mutation score measured on a GPU machine: tools/mutate.py grades a class of mutants of the
# references (each on its own chapter, beside an unchanged reference per chapter, the control) on
# every GPU here, and writes the report, stopping at a deadline so that what was graded is kept.
# COURSE_MUTANT_SEED (default 1) and COURSE_MUTANT_PER_CHAPTER (default 12) choose the sample,
# COURSE_MUTANT_CHAPTERS=a,b its chapters, COURSE_MUTANT_IDS=id,id,... these mutants instead (a
# report's survivors and ungraded ones). COURSE_MUTANT_ARGS: more grade-class options.
# Usage: tools/gpu-run-mutants.sh LOGDIR [SECONDS (default 540)]
#   LOGDIR gets mutants.txt (the class's progress), mutation-report.md and .json, class.csv and
#   mutants-graded.tgz (mutants.json and every grading's results.json: tools/mutate.py report
#   can be run again elsewhere, or over several such runs merged). The class is judged by this
#   working tree, copied without its builds and without .git (a course with .git is judged by its
#   HEAD, and the GPU machine's copy of .git can be older than its files).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
logs=$(mkdir -p "$1" && cd "$1" && pwd)
deadline=$(( $(date +%s) + ${2:-540} ))
work=${COURSE_MUTANT_WORK:-/tmp/course-mutants}
rm -rf "$work" && mkdir -p "$work/course"
(cd "$top" && tar --exclude=./build --exclude='./build-*' --exclude=./.git -cf - .) | tar -xf - -C "$work/course"
cd "$work/course"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee "$logs/device.txt"
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
python3 tools/mutate.py make-class "$work/class" --seed "${COURSE_MUTANT_SEED:-1}" \
  --per-chapter "${COURSE_MUTANT_PER_CHAPTER:-12}" ${COURSE_MUTANT_CHAPTERS:+--chapters "$COURSE_MUTANT_CHAPTERS"} \
  ${COURSE_MUTANT_IDS:+--ids "$COURSE_MUTANT_IDS"} >"$logs/mutants.txt" 2>&1 || { cat "$logs/mutants.txt"; exit 1; }
status=0
# --time-limit: a grading held past it is reported as not graded, never as a kill.
timeout "$(( deadline - $(date +%s) - 20 ))" python3 tools/mutate.py run "$work/class" -o "$work/graded" \
  --gpus "$gpus" --timeouts 30,120 --time-limit 300 --markdown "$logs/mutation-report.md" \
  ${COURSE_MUTANT_ARGS:-} >>"$logs/mutants.txt" 2>&1 || status=$?
echo "== mutants: exit $status" >>"$logs/mutants.txt"
# Stopped at the deadline: the report of what was graded (the rest counts as not graded).
[ -f "$logs/mutation-report.md" ] || python3 tools/mutate.py report "$work/graded" --mutants "$work/class" \
  --markdown "$logs/mutation-report.md" >/dev/null 2>>"$logs/mutants.txt"
cp "$work/graded/class.csv" "$work/graded/class-timing.csv" "$work/graded/mutation-report.json" "$logs/" 2>/dev/null
(cd "$work" && tar -czf "$logs/mutants-graded.tgz" class/mutants.json class/chapters.txt graded/*/results.json \
  graded/*/timing.json 2>/dev/null)
tail -n 40 "$logs/mutation-report.md"
exit $status

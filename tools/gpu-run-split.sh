#!/usr/bin/env bash
# tools/gpu-run.sh's parts side by side on a machine of four GPUs, one GPU each, in one call of
# about ten minutes instead of four: GPU 0 runs the test workflow and then the fixtures of chapters
# 01-06, GPU 1 the grade workflow on the untouched starters (with check-starters-score-zero) and
# then the fixtures of chapters 07-11, GPUs 2 and 3 grade a class of mutants of the references
# (tools/mutate.py, PER_CHAPTER mutants per chapter and a control each). Each part works in its
# own copy of the tree, so that their builds and reports stay apart. Every timing still has its
# GPU to itself; the host (cores, memory, the PCIe root) is shared, so the host-link figures of
# chapters 02 and 03 are noisier than on a machine of their own.
# With COURSE_SPLIT=mutants, GPU 0 runs the test workflow and then the grade workflow (one build),
# no fixtures, and GPUs 1-3 grade the mutants (COURSE_MUTANT_SEED, default 1): a mutation score
# measured in one call. With COURSE_SPLIT=fixtures-mutants, GPU 0 checks every fixture, GPU 1 runs
# the grade workflow (untouched starters) beside the mutants' gradings, and GPUs 1-3 grade the
# mutants (the references' own tests pass in the controls). A class of mutants on every GPU, and
# nothing else: tools/gpu-run-mutants.sh. With COURSE_SPLIT_DIAGNOSIS=1, GPU 3 checks the
# diagnoses from hardware counters (tools/gpu-run-diagnosis.sh) and the mutants have one GPU less.
# Outgrown by the default split (4 x H100, 2026-11-27, 545 s): the test workflow reached 424 of
# its 450 tests beside two other builds and 15 gradings of mutants (340 s, against 147 s alone),
# neither fixture part began, and 47 of 143 mutants were graded. A machine of one GPU, whose
# held time counts half, runs the same in three calls for less: tools/gpu-run.sh with
# COURSE_SKIP_FIXTURES=1, then twice with COURSE_SKIP_TESTS=1 COURSE_SKIP_GRADE=1 and half of
# the chapters each in COURSE_FIXTURE_CHAPTERS (the fixtures take 3-5 s each, about 160 in all).
# Usage: tools/gpu-run-split.sh LOGDIR [PER_CHAPTER (default 12)] [SECONDS (default 540)]
#   Everything stops SECONDS after the start (a part gets what is left of them, so that two parts
#   one after the other on a GPU end in time too); exit status non-zero if a part failed or ran out
#   of time. The class of mutants is judged by the committed tree (tools/mutate.py prints which):
#   commit before the run.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
logs=$(mkdir -p "$1" && cd "$1" && pwd)
per_chapter=${2:-12}
deadline=$(( $(date +%s) + ${3:-540} ))
left() { local n=$(( deadline - $(date +%s) )); echo $(( n > 1 ? n : 1 )); }
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee "$logs/device.txt"

copy_tree() {  # the working tree without its builds, and without .git: the device's copy of .git
  # can be older than its files (it was at the session's first commit), and a course with .git is
  # judged by its HEAD (clean_copy), so fixtures and mutants would meet stale tests.
  rm -rf "$1" && mkdir -p "$1"
  (cd "$top" && tar --exclude=./build --exclude='./build-*' --exclude=./.git -cf - .) | tar -xf - -C "$1"
}
part() {  # part NAME GPU VAR=VALUE...: tools/gpu-run.sh in a copy of its own, on GPU
  local name=$1 gpu=$2
  shift 2
  env CUDA_VISIBLE_DEVICES="$gpu" COURSE_SKIP_SANITIZER=1 "$@" \
    timeout "$(left)" tools/gpu-run.sh "$logs/$name" >"$logs/$name.txt" 2>&1
  echo "== $name: exit $?" >>"$logs/$name.txt"
}

mutant_gpus=2,3
[ "${COURSE_SPLIT:-}" = mutants ] || [ "${COURSE_SPLIT:-}" = fixtures-mutants ] && mutant_gpus=1,2,3
# With COURSE_SPLIT_DIAGNOSIS=1 the last GPU runs tools/gpu-run-diagnosis.sh instead of mutants.
if [ -n "${COURSE_SPLIT_DIAGNOSIS:-}" ]; then
  mutant_gpus=${mutant_gpus%,3}
  copy_tree /tmp/course-d
  (cd /tmp/course-d && CUDA_VISIBLE_DEVICES=3 timeout "$(left)" tools/gpu-run-diagnosis.sh "$logs/diagnosis" \
    >"$logs/diagnosis.txt" 2>&1; echo "== diagnosis: exit $?" >>"$logs/diagnosis.txt") &
fi
copy_tree /tmp/course-a
[ "${COURSE_SPLIT:-}" = mutants ] || copy_tree /tmp/course-b
copy_tree /tmp/course-m
start=$(date +%s)
if [ "${COURSE_SPLIT:-}" = fixtures-mutants ]; then
  (cd /tmp/course-a && part fixtures 0 COURSE_SKIP_TESTS=1 COURSE_SKIP_GRADE=1) &
  (cd /tmp/course-b && part grade 1 COURSE_SKIP_TESTS=1 COURSE_SKIP_FIXTURES=1) &
elif [ "${COURSE_SPLIT:-}" = mutants ]; then
  (cd /tmp/course-a && part tests 0 COURSE_SKIP_GRADE=1 COURSE_SKIP_FIXTURES=1 &&
    part grade 0 COURSE_SKIP_TESTS=1 COURSE_SKIP_FIXTURES=1) &
else
(cd /tmp/course-a && part tests 0 COURSE_SKIP_GRADE=1 COURSE_SKIP_FIXTURES=1 &&
  part fixtures-01-06 0 COURSE_SKIP_TESTS=1 COURSE_SKIP_GRADE=1 COURSE_FIXTURE_CHAPTERS=01-measuring,02-transfers,03-zero-copy,04-coalescing,05-matmul,06-transpose) &
(cd /tmp/course-b && part grade 1 COURSE_SKIP_TESTS=1 COURSE_SKIP_FIXTURES=1 &&
  part fixtures-07-11 1 COURSE_SKIP_TESTS=1 COURSE_SKIP_GRADE=1 COURSE_FIXTURE_CHAPTERS=07-async-pipeline,08-execution-config,09-instructions,10-l2-persistence,11-deploy-multi-gpu) &
fi
(cd /tmp/course-m && python3 tools/mutate.py make-class /tmp/mutants --per-chapter "$per_chapter" --seed "${COURSE_MUTANT_SEED:-1}" ${COURSE_MUTANT_IDS:+--ids "$COURSE_MUTANT_IDS"} >"$logs/mutants.txt" 2>&1 &&
  timeout "$(( $(left) - 20 ))" python3 tools/mutate.py run /tmp/mutants -o /tmp/mutants-graded --gpus "$mutant_gpus" --timeouts 30,120 \
    --time-limit 300 --markdown "$logs/mutation-report.md" >>"$logs/mutants.txt" 2>&1
  echo "== mutants: exit $?" >>"$logs/mutants.txt"
  # Stopped at the deadline: the report of what was graded (the rest counts as not graded), and
  # every grading's results.json, so that tools/mutate.py report can be run again elsewhere.
  [ -f "$logs/mutation-report.md" ] || python3 tools/mutate.py report /tmp/mutants-graded --mutants /tmp/mutants \
    --markdown "$logs/mutation-report.md" >/dev/null 2>>"$logs/mutants.txt"
  (cd /tmp && tar -czf "$logs/mutants-graded.tgz" mutants/mutants.json mutants/chapters.txt mutants-graded/*/results.json 2>/dev/null)
  cp /tmp/mutants-graded/class.csv /tmp/mutants-graded/mutation-report.json "$logs/" 2>/dev/null) &
wait
echo "== all parts: $(( $(date +%s) - start )) s"
status=0
parts="tests grade fixtures-01-06 fixtures-07-11 mutants"
[ "${COURSE_SPLIT:-}" = mutants ] && parts="tests grade mutants"
[ "${COURSE_SPLIT:-}" = fixtures-mutants ] && parts="fixtures grade mutants"
[ -n "${COURSE_SPLIT_DIAGNOSIS:-}" ] && parts="$parts diagnosis"
for f in $parts; do
  line=$(grep -E "^== $f: exit" "$logs/$f.txt" 2>/dev/null | tail -n 1)
  echo "${line:-== $f: did not run}"
  [ "$line" = "== $f: exit 0" ] || status=1
done
exit $status

#!/usr/bin/env bash
# CI check of the Gradescope autograder (no GPU, no Gradescope): packs it with
# tools/make-gradescope-autograder.sh, checks that no reference code is in it, lays it out as
# Gradescope does (/autograder/source, /autograder/submission) in a temporary folder, uploads a
# loose starter file as a student would, runs run_autograder and checks results.json.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$top/tools/make-gradescope-autograder.sh" "$work/autograder.zip" --chapters 11-deploy-multi-gpu >/dev/null
root="$work/autograder"
mkdir -p "$root/source" "$root/submission"
python3 -m zipfile -e "$work/autograder.zip" "$root/source"
problems=0
[ -e "$root/source/course/solutions" ] && { echo "FAIL: solutions/ is in the autograder"; problems=1; }
[ -e "$root/source/setup.sh" ] && [ -e "$root/source/run_autograder" ] ||
  { echo "FAIL: setup.sh or run_autograder is not at the top of the zip"; problems=1; }
chmod +x "$root/source/run_autograder"
# A student's upload: the one file chapter 11's first exercise asks for, at the top level.
echo 'set(CHAPTER_CUDA_ARCHITECTURES "80-real;90")' >"$root/submission/architectures.cmake"
AUTOGRADER_ROOT="$root" "$root/source/run_autograder" >"$work/run.log" 2>&1 ||
  { tail -20 "$work/run.log"; echo "FAIL: run_autograder exited with an error"; problems=1; }
python3 - "$root/results/results.json" "$top" <<'PY' || problems=1
import json, pathlib, sys
sys.path.insert(0, str(pathlib.Path(sys.argv[2]) / "tests" / "grading"))
from check_grade_submission import check_gradescope_shape
results = json.loads(pathlib.Path(sys.argv[1]).read_text())
problems = check_gradescope_shape(results)
names = {t["name"]: t for t in results.get("tests", [])}
for name in ("11-deploy-multi-gpu.FatBinary.CompiledForComputeCapabilities80And90",
             "11-deploy-multi-gpu.FatBinary.EmbedsSassFor80And90AndPtxFor90"):
    if names.get(name, {}).get("status") != "passed":
        problems.append(f"{name} did not pass from the loose upload: {names.get(name)}")
if any(not t["name"].startswith("11-deploy-multi-gpu.") for t in results.get("tests", [])):
    problems.append("tests of chapters the autograder does not grade were graded")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
[ $problems -eq 0 ] && echo "check-gradescope: the autograder zip holds no solutions; run_autograder graded a loose upload into a valid results.json"
exit $problems

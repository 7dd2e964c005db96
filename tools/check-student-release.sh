#!/usr/bin/env bash
# CI check of the student release (tools/make-student-release.sh), from the committed course:
# no file of solutions/ or of the fixtures, no reference kernel body in any file (no run of
# 3 consecutive code lines of a solution appears in the release), and both README commands
# work in it: the grade workflow fails on the untouched starters with a summary, the test
# workflow passes (without solutions/ it runs the CPU unit tests).
# Usage: tools/check-student-release.sh [work-dir]
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
rm -rf "$work/cuda-course"
"$top/tools/make-student-release.sh" "$work/release.tar.gz" >/dev/null || { echo "FAIL: no release"; exit 1; }
tar -xzf "$work/release.tar.gz" -C "$work"
release="$work/cuda-course"
problems=0
[ -e "$release/solutions" ] && { echo "FAIL: solutions/ is in the release"; problems=1; }
[ -e "$release/tools/fixtures" ] && { echo "FAIL: tools/fixtures is in the release"; problems=1; }

# Reference code: the lines of a solution that the handed-out chapter does not already hold (its
# starter's launch code and signatures, its given/ code) are what a student must write; no run
# of 3 of them (no comments, braces or includes) may appear in any file of the release.
python3 - "$top/solutions" "$release" <<'PY' || problems=1
import pathlib, sys
solutions, release = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def code_lines(text):
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if len(line) < 12 or line.startswith(("//", "#include", "/*", "*")) or set(line) <= set("{}();"):
            continue
        lines.append(line)
    return lines
handed_out = set()
for path in (release / "chapters").rglob("*"):
    if path.is_file():
        handed_out.update(code_lines(path.read_text(errors="replace")))
runs = {}
for source in solutions.rglob("*"):
    if source.is_file():
        lines = [l for l in code_lines(source.read_text(errors="replace")) if l not in handed_out]
        for i in range(len(lines) - 2):
            runs.setdefault("\n".join(lines[i:i + 3]), source.relative_to(solutions.parent))
found = 0
for path in release.rglob("*"):
    if not path.is_file() or path.stat().st_size > 1 << 20:
        continue
    lines = code_lines(path.read_text(errors="replace"))
    text = {"\n".join(lines[i:i + 3]) for i in range(len(lines) - 2)}
    for run in text & runs.keys():
        print(f"FAIL: {path.relative_to(release)} holds reference code from {runs[run]}:\n  " + run.replace("\n", "\n  "))
        found += 1
        break
print(f"release: {sum(1 for _ in release.rglob('*'))} files, {found} with reference code")
sys.exit(1 if found else 0)
PY

cd "$release" || exit 1
grade_log="$work/release-grade.log"
if cmake --workflow --preset grade >"$grade_log" 2>&1; then
  echo "FAIL: the grade workflow passed on the untouched starters of the release"; problems=1
fi
grep -q "==== Grade summary" "$grade_log" && grep -q "Result: NOT PASSED" "$grade_log" ||
  { tail -30 "$grade_log"; echo "FAIL: the release's grade workflow printed no summary"; problems=1; }
cmake --workflow --preset test >"$work/release-test.log" 2>&1 ||
  { tail -30 "$work/release-test.log"; echo "FAIL: the release's test workflow failed"; problems=1; }
[ $problems -eq 0 ] && echo "check-student-release: no solutions, no reference code, both README commands work in the release"
exit $problems

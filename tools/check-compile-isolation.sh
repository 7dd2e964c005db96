#!/usr/bin/env bash
# CI check: a starter that does not compile costs only its own chapter. Breaks one starter
# (chapters/06-transpose/transpose.cu) in the checkout, runs the README's grade workflow, and
# expects: a failing student.06-transpose.Build.Compiles with the compiler's error in the
# summary, and every other chapter graded as usual. Restores the starter afterwards.
# Usage: tools/check-compile-isolation.sh   (from a configured checkout; CI runs it)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
starter=chapters/06-transpose/transpose.cu
backup=$(mktemp)
cp "$starter" "$backup"
restore() { cp "$backup" "$starter"; rm -f "$backup"; }
trap restore EXIT
echo "this line is not C++;  // planted by tools/check-compile-isolation.sh" >>"$starter"

log=$(mktemp)
cmake --workflow --preset grade >"$log" 2>&1
status=$?
summary=$(sed -n '/==== Grade summary/,/^Reports:/p' "$log")
printf '%s\n' "$summary" | sed -n '1,12p'
problems=0
[ $status -ne 0 ] || { echo "FAIL: the grade workflow passed with a broken starter"; problems=1; }
[ -n "$summary" ] || { echo "FAIL: no grade summary: the broken starter stopped the workflow"; tail -30 "$log"; problems=1; }
grep -q "student.06-transpose.Build.Compiles (Failed" <<<"$summary" ||
  { echo "FAIL: no failing student.06-transpose.Build.Compiles in the summary"; problems=1; }
grep -q "did not compile" <<<"$summary" || { echo "FAIL: the summary does not say the chapter did not compile"; problems=1; }
grep -q "transpose.cu.*error" <<<"$summary" || { echo "FAIL: the summary does not carry the compiler's error"; problems=1; }
for chapter in chapters/*/; do
  chapter=$(basename "$chapter")
  [ "$chapter" = 06-transpose ] && continue
  row=$(grep -E "^\| $chapter \|" <<<"$summary")
  total=$(awk -F'|' '{print $3 + $4 + $5}' <<<"$row")
  if [ -z "$row" ] || [ "${total:-0}" -lt 2 ]; then
    echo "FAIL: chapter $chapter was not graded: '$row'"; problems=1
  fi
done
rm -f "$log"
restore
trap - EXIT
# Rebuild the restored starter, so that the build tree is as it was.
cmake --build --preset default >/dev/null 2>&1 || { echo "FAIL: the restored checkout does not build"; problems=1; }
[ $problems -eq 0 ] && echo "check-compile-isolation: 06-transpose reported as not compiling, every other chapter graded"
exit $problems

#!/usr/bin/env bash
# Packs the Gradescope autograder: setup.sh and run_autograder (grading/gradescope/) at the top
# of the zip, and the course without solutions/ and fixtures in course/, with the instructor's
# grading/points.json. Upload the zip as the assignment's autograder ("Zip file upload").
# Usage: tools/make-gradescope-autograder.sh [autograder.zip] [grading options, e.g. --chapters 06-transpose]
set -euo pipefail
top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
out=$(realpath -m "${1:-autograder.zip}")
shift || true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/autograder"
# The course as students get it (no solutions, no fixtures), unpacked as course/.
"$top/tools/make-student-release.sh" "$tmp/release.tar.gz" >/dev/null
tar -xzf "$tmp/release.tar.gz" -C "$tmp/autograder"
mv "$tmp/autograder/cuda-course" "$tmp/autograder/course"
cp "$top/grading/points.json" "$tmp/autograder/course/grading/points.json"  # the instructor's, edits included
cp "$top/grading/gradescope/setup.sh" "$top/grading/gradescope/run_autograder" "$tmp/autograder/"
echo "$*" >"$tmp/autograder/grading-options"
rm -f "$out"
(cd "$tmp/autograder" && python3 -c "
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    for folder, _, files in os.walk('.'):
        for name in files:
            path = os.path.join(folder, name)
            info = zipfile.ZipInfo.from_file(path, os.path.normpath(path))
            with open(path, 'rb') as f:
                z.writestr(info, f.read(), zipfile.ZIP_DEFLATED)
" "$out")
echo "wrote $out (setup.sh, run_autograder, course/ without solutions)"

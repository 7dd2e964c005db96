#!/usr/bin/env bash
# Packs the committed course without the reference solutions, for handing out to students.
# Usage: tools/make-student-release.sh [out.tar.gz]
set -euo pipefail
top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
out=${1:-cuda-course-student.tar.gz}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$top" archive --format=tar --prefix=cuda-course/ HEAD | tar -x -C "$tmp"
# The references, and the maintainers' fixtures built on them, stay with the instructors.
rm -rf "$tmp/cuda-course/solutions" "$tmp/cuda-course/tools/fixtures" "$tmp/cuda-course/tools/check-fixtures.py"
tar -czf "$out" -C "$tmp" cuda-course
echo "wrote $out (no solutions/, no fixtures)"

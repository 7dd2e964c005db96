#!/usr/bin/env python3
"""The untouched starters earn no points: every test that carries points fails (or skips) on them.

Every test must be able to fail, and the handed-out starter is the first submission it must fail:
a test that an untouched starter passes gives points for nothing. Reads the grade workflow's
JUnit report (`cmake --workflow --preset grade` on a checkout whose starters are as handed out)
with each program's own record of its cases, and lists every passed test that earns points
(anything but Build.Compiles and the CodePolicy rules, which any code that follows the policy
meets).

    tools/check-starters-score-zero.py [--build build]   exit status 1 when a starter earns points

On a machine without a GPU only the CPU-side tests run (chapter 11's build checks); on a GPU
(tools/gpu-run.sh) every test does.
"""
import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from course_grading import results as R  # noqa: E402

FREE_KINDS = {"build", "rule"}  # 0 points: met by any code that compiles and follows the policy


def points_for_nothing(results):
    """The student tests that an untouched starter passed and that carry points."""
    return [r for r in results if r.role == "student" and r.outcome == "passed" and r.kind not in FREE_KINDS]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    junit = build / "grade-report.xml"
    if not junit.exists():
        print(f"check-starters-score-zero: {junit} is missing: run `cmake --workflow --preset grade` first",
              file=sys.stderr)
        return 2
    results = R.read_junit(junit, reports=R.report_dir(build))
    ran = [r for r in results if r.role == "student" and r.outcome != "skipped" and r.kind not in FREE_KINDS]
    offenders = points_for_nothing(results)
    for r in offenders:
        print(f"  {r.name}: passes on the untouched starter ({r.kind}); a test must be able to fail")
    print(f"check-starters-score-zero: {len(ran)} student tests with points ran on the untouched starters, "
          f"{len(offenders)} passed")
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""CI check of tools/grade-submission (no GPU needed).

Builds a submission whose starter files are the reference solutions (solutions/<chapter>/<file>
in place of chapters/<chapter>/<file>: a reference is a valid submission), and that also tampers
with what a student may not change: a test file replaced by one that always passes, the
top-level CMakeLists.txt, the presets, the points file, and COURSE_PERF_SCALE in the
environment. Grades it as a folder (the whole course), a .tar.gz and a .zip (chapter 11; the zip
with --one-by-one, without batches), and checks: every test that could run here passed (the references score the maximum, their code
policy included); the same score each way; the tampering had no effect (no test of the
student's own, chapter 11's fat-binary tests graded from the real test file, the instructor's
points); results.json has Gradescope's shape.
Usage: tests/grading/check_grade_submission.py [work-dir]
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

COURSE = pathlib.Path(__file__).resolve().parent.parent.parent


def make_submission(root):
    shutil.copytree(COURSE / "chapters", root / "chapters")
    for solution in sorted((COURSE / "solutions").glob("*/*")):
        starter = root / "chapters" / solution.parent.name / solution.name
        if starter.exists():  # a starter file: the reference's own version of it
            shutil.copyfile(solution, starter)
    tests = root / "tests/11-deploy-multi-gpu"
    tests.mkdir(parents=True)
    (tests / "deploy_test.cpp").write_text("#include <gtest/gtest.h>\nTEST(Tampered, AlwaysPasses) {}\n")
    (root / "CMakeLists.txt").write_text('message(FATAL_ERROR "a submission cannot replace the build")\n')
    (root / "CMakePresets.json").write_text("{}\n")
    (root / "grading").mkdir()
    (root / "grading/points.json").write_text('{"default": {"correctness": 1000}}\n')


# Gradescope's autograder output (results.json): the keys it reads, and the values it accepts.
TOP_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
            "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
             "visibility", "extra_data"}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def check_gradescope_shape(results):
    problems = []
    if not isinstance(results, dict):
        return ["results.json is not an object"]
    problems += [f"unknown top-level key {k!r}" for k in set(results) - TOP_KEYS]
    if not isinstance(results.get("score"), (int, float)):
        problems.append("score is not a number")
    for key in ("visibility", "stdout_visibility"):
        if key in results and results[key] not in VISIBILITY:
            problems.append(f"{key} {results[key]!r}")
    if not isinstance(results.get("tests"), list) or not results["tests"]:
        problems.append("tests is not a non-empty list")
    for test in results.get("tests", []):
        problems += [f"test {test.get('name')}: unknown key {k!r}" for k in set(test) - TEST_KEYS]
        for key, kind in (("name", str), ("score", (int, float)), ("max_score", (int, float)), ("output", str)):
            if not isinstance(test.get(key), kind):
                problems.append(f"test {test.get('name')}: {key} is not {kind}")
        if test.get("status") not in ("passed", "failed"):
            problems.append(f"test {test.get('name')}: status {test.get('status')!r}")
        if "tags" in test and not all(isinstance(t, str) for t in test["tags"]):
            problems.append(f"test {test.get('name')}: tags are not strings")
        if test.get("visibility", "visible") not in VISIBILITY:
            problems.append(f"test {test.get('name')}: visibility {test.get('visibility')!r}")
        if isinstance(test.get("score"), (int, float)) and isinstance(test.get("max_score"), (int, float)) \
                and test["score"] > test["max_score"]:  # a stretch test's too: its max_score is its bonus
            problems.append(f"test {test.get('name')}: score above max_score")
    if isinstance(results.get("score"), (int, float)) and results.get("tests"):
        if abs(results["score"] - sum(t.get("score", 0) for t in results["tests"])) > 1e-9:
            problems.append("score is not the sum of the tests' scores")
        # Gradescope shows the score against the sum of max_score: the total against its maximum.
        if results["score"] > sum(t.get("max_score", 0) for t in results["tests"]) + 1e-9:
            problems.append("score is above the sum of the tests' max_score")
    return problems


def grade(submission, outdir, *options):
    env = dict(os.environ, COURSE_PERF_SCALE="0.01")  # the student's wish; the instructor's run ignores it
    result = subprocess.run([str(COURSE / "tools/grade-submission"), str(submission), "-o", str(outdir), *options],
                            env=env, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stdout[-3000:], result.stderr[-3000:])
        raise SystemExit(f"grade-submission failed on {submission}")
    return json.loads((outdir / "results.json").read_text())


def main():
    if len(sys.argv) > 1 and sys.argv[1].startswith("-"):  # -h, --help (not a work folder)
        print(__doc__)
        return 0 if sys.argv[1] in ("-h", "--help") else 2
    work = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="grading-check-"))
    root = work / "submission" / "cuda-course"
    if root.exists():
        shutil.rmtree(root)
    make_submission(root)
    with tarfile.open(work / "submission.tar.gz", "w:gz") as archive:
        archive.add(root, arcname="cuda-course")
    with zipfile.ZipFile(work / "submission.zip", "w") as archive:
        for path in root.rglob("*"):
            archive.write(path, path.relative_to(root.parent))

    scores, problems = {}, []
    for form, path in (("folder", root), ("tar.gz", work / "submission.tar.gz"), ("zip", work / "submission.zip")):
        # The whole course once; the other forms only the chapter the submission answers, the zip
        # every case in its own process from the start (the same verdicts as with batches).
        options = [] if form == "folder" else ["--chapters", "11-deploy-multi-gpu"]
        options += ["--one-by-one"] if form == "zip" else []
        results = grade(path, work / f"out-{form.replace('.', '-')}", *options)
        # Chapter 11's points, which every form grades (the folder grades the whole course).
        scores[form] = sum(t["score"] for t in results["tests"] if t["name"].startswith("11-deploy-multi-gpu."))
        problems += [f"{form}: {p}" for p in check_gradescope_shape(results)]
        names = {t["name"] for t in results["tests"]}
        if any("Tampered" in n for n in names):
            problems.append(f"{form}: the submission's own test file was compiled")
        for name in ("11-deploy-multi-gpu.FatBinary.CompiledForComputeCapabilities80And90",
                     "11-deploy-multi-gpu.FatBinary.EmbedsSassFor80And90AndPtxFor90"):
            test = next((t for t in results["tests"] if t["name"] == name), None)
            if test is None or test["status"] != "passed" or test["max_score"] != 1:
                problems.append(f"{form}: {name} not graded from the course's tests with the course's points: {test}")
        if any(t["max_score"] >= 1000 for t in results["tests"]):
            problems.append(f"{form}: the submission's points file was used")
        for test in results["tests"]:
            if test["status"] != "passed" and not test["output"].startswith("NOT GRADED"):
                problems.append(f"{form}: the reference fails {test['name']}: {test['output'][:300]}")
    if len(set(scores.values())) != 1:
        problems.append(f"the three forms scored differently: {scores}")
    for problem in problems:
        print("FAIL:", problem)
    if problems:
        return 1
    print(f"check-grade-submission: the references as a submission pass every test that ran here; folder, tar.gz and "
          f"zip all scored {scores['folder']} in chapter 11; edited tests, CMake files, presets, points and COURSE_PERF_SCALE had no "
          f"effect; results.json has Gradescope's shape")
    return 0


if __name__ == "__main__":
    sys.exit(main())

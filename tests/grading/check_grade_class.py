#!/usr/bin/env python3
"""Grades the class fixtures (tools/fixtures/class) and checks every verdict.

    tests/grading/check_grade_class.py [--work DIR] [--slurm] [--all] [--timeouts 15,30] [--references N]

Grades a class with tools/grade-class on this machine (one worker per GPU, or without a GPU),
and with --slurm once more through Slurm (sbatch must work here: tests/grading/start-slurm.sh
starts a single-node cluster), and checks that the two class.csv files are the same. Without a
GPU the class holds the submissions marked "ci" in expected.json (their verdicts need no GPU);
with one, or with --all, every submission. Then checks each submission's expected verdicts, that
no file was written outside the grading folders, and that the sandbox is what stops the two
that try: graded unconfined, one reads the reference solution and the other leaves files behind.
Exit status 0 when every verdict is the expected one.
"""
import argparse
import csv
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

COURSE = pathlib.Path(__file__).resolve().parent.parent.parent
FIXTURES = COURSE / "tools" / "fixtures" / "class"
ESCAPES = [pathlib.Path(p) for p in ("/tmp/course-grading-escape.txt", "/var/tmp/course-grading-escape.txt",
                                     "/root/course-grading-escape.txt")]


def has_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def escapes_under(*roots):
    found = [p for p in ESCAPES if p.exists()]
    for root in roots:
        found += list(pathlib.Path(root).rglob("course-grading-escape-*.txt"))
    return found


def remove_escapes(*roots):
    for path in escapes_under(*roots):
        path.unlink()


def judge(student, results, expectations, gpu):
    problems = []
    tests = results["tests"]
    for rule in expectations:
        pattern = re.compile(rule["tests"])
        matched = [t for t in tests if pattern.search(t["name"])]
        if rule["status"] == "absent":
            if matched:
                problems.append(f"{student}: {rule['tests']} should not be there, found {matched[0]['name']}")
            continue
        if not matched:
            problems.append(f"{student}: no test matches {rule['tests']}")
            continue
        for test in matched:
            not_graded = test["output"].startswith("NOT GRADED")
            if rule.get("needs") == "gpu" and not gpu:
                if not not_graded:
                    problems.append(f"{student}: {test['name']} should be NOT GRADED without a GPU: {test['output'][:200]}")
                continue
            status = "not graded" if not_graded else test["status"]
            if status != rule["status"]:
                problems.append(f"{student}: {test['name']} {status}, expected {rule['status']}: {test['output'][:300]}")
            elif rule.get("output") and not re.search(rule["output"], test["output"]):
                problems.append(f"{student}: {test['name']} says {test['output'][:300]!r}, expected /{rule['output']}/")
    return problems


def grade_class(class_dir, outdir, options, slurm=False):
    command = [str(COURSE / "tools" / "grade-class"), str(class_dir), "-o", str(outdir), *options]
    if slurm:
        command += ["--slurm", "--wait", "--gres", "gpu:1", "--cpus-per-task", "1"]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    print(done.stdout, end="")
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
    return done.returncode, time.monotonic() - started


def differing_tests(here_file, alone_file):
    """The tests whose verdict or points differ between two results.json (Gradescope's format), as
    'name: status score/max here, status score/max alone', so that a grade that depends on its
    neighbours names the tests it depends on."""
    def tests(path):
        try:
            return {t["name"]: (t.get("status", "?"), t.get("score"), t.get("max_score"), (t.get("output") or "")[:160])
                    for t in json.loads(pathlib.Path(path).read_text()).get("tests", [])}
        except (OSError, ValueError):
            return {}
    here, alone = tests(here_file), tests(alone_file)
    lines = []
    for name in sorted(set(here) | set(alone)):
        a, b = here.get(name), alone.get(name)
        if (a and a[:3]) != (b and b[:3]):
            show = lambda v: "absent" if v is None else f"{v[0]} {v[1]}/{v[2]} ({v[3]!r})"  # noqa: E731
            lines.append(f"{name}: {show(a)} in the class, {show(b)} alone")
    return "; ".join(lines) or "none (only the totals)"


def split_tests(graded):
    """The tests that some gradings of a class graded and others did not (tools/grade-class's
    class-maxima.json), with their votes and whether they count towards the maximum."""
    try:
        split = json.loads((pathlib.Path(graded) / "class-maxima.json").read_text())["split tests"]
    except (OSError, ValueError, KeyError):
        return "unknown (no class-maxima.json)"
    return "; ".join(f"{name}: {v}" for name, v in split.items()) or "none"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work")
    parser.add_argument("--slurm", action="store_true")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--timeouts", default="15,30")
    parser.add_argument("--only", help="comma-separated submissions to grade (default: as above)")
    parser.add_argument("--time-criterion", action="store_true",
                        help="grade the right answers (zoe-*) alone first, and check that the whole class took at "
                             "most 1.25 x their time plus the faulty ones' own time limits (each test past its limit "
                             "counts the larger of --timeouts)")
    parser.add_argument("--references", type=int, default=0,
                        help="add N copies of zoe-correct (zoe-2, zoe-3, ...) with its expectations: more right "
                             "answers beside the faulty ones, each of which must keep its full marks")
    parser.add_argument("--test-uids", type=int, metavar="BASE",
                        help="grade-class --test-uids: each worker's test programs under a user of their own; as "
                             "root, every grading's timing.json must then say so (a fallback to the grader's user fails "
                             "the check)")
    args = parser.parse_args()
    work = pathlib.Path(args.work or tempfile.mkdtemp(prefix="class-check-")).resolve()
    if work.exists():
        sys.path.insert(0, str(COURSE / "tools"))
        from course_grading import grading  # (remove_tree: an earlier check's scratch folders are mounted)
        grading.remove_tree(work)
    work.mkdir(parents=True)
    gpu = has_gpu()
    # The grader takes the committed course (submission.clean_copy: git archive HEAD): a change not
    # committed is not what gets checked (a GPU machine's copy of .git can be older than its files).
    changed = subprocess.run(["git", "-C", str(COURSE), "status", "--porcelain", "--untracked-files=no", "--", "tools",
                              "tests", "cmake", "chapters", "CMakeLists.txt"], capture_output=True, text=True)
    if changed.returncode == 0 and changed.stdout.strip():
        print("check-grade-class: WARNING: the class is graded from the course's HEAD, and these files differ from it "
              "(commit them, or check a copy without .git):\n" + changed.stdout.rstrip())
    expected = {k: v for k, v in json.loads((FIXTURES / "expected.json").read_text()).items() if not k.startswith("_")}
    chosen = sorted(s for s, e in expected.items() if gpu or args.all or e.get("ci"))
    if args.only:
        chosen = sorted(s for s in args.only.split(",") if s in expected)
    for copy in range(2, 2 + args.references):
        expected[f"zoe-{copy}"] = expected["zoe-correct"]
        chosen.append(f"zoe-{copy}")
    chosen.sort()
    class_dir = work / "class"
    class_dir.mkdir()
    for student in chosen:
        # A link stays a link: mia-links-to-solutions must reach the grader as it was handed in.
        source = "zoe-correct" if student.startswith("zoe-") and student != "zoe-correct" else student
        shutil.copytree(FIXTURES / "submissions" / source, class_dir / student, symlinks=True)
    options = ["--points", str(FIXTURES / "points.json"), "--timeouts", args.timeouts]
    if not gpu:
        options += ["--gpus", "none", "--workers", "2"]
    if args.test_uids is not None:
        options += ["--test-uids", str(args.test_uids)]
        os.chmod(work, 0o755)  # (mkdtemp's 0700: the test users must reach their workspaces' builds)
    remove_escapes(work)

    problems = []
    alone_seconds = None
    if args.time_criterion:
        references = work / "references"
        references.mkdir()
        for student in [s for s in chosen if s.startswith("zoe")]:
            shutil.copytree(class_dir / student, references / student, symlinks=True)
        status, alone_seconds = grade_class(references, work / "graded-references", options)
        if status != 0:
            problems.append(f"grade-class exited with {status} on the right answers alone")
        print(f"check-grade-class: the {len(list(references.iterdir()))} right answers alone in {alone_seconds:.0f} s")
    status, seconds = grade_class(class_dir, work / "graded", options)
    if status != 0:
        problems.append(f"grade-class exited with {status}")
    print(f"check-grade-class: {len(chosen)} submissions graded in {seconds:.0f} s "
          f"({'with' if gpu else 'without'} a GPU)")
    if args.slurm:
        status, seconds = grade_class(class_dir, work / "graded-slurm", options, slurm=True)
        if status != 0:
            problems.append(f"grade-class --slurm exited with {status}")
        print(f"check-grade-class: the same class through Slurm in {seconds:.0f} s")
        here = (work / "graded" / "class.csv").read_text() if (work / "graded" / "class.csv").exists() else "?"
        there = (work / "graded-slurm" / "class.csv").read_text() if (work / "graded-slurm" / "class.csv").exists() else "-"
        if here != there:
            problems.append(f"class.csv differs between this machine and Slurm:\n{here}\n---\n{there}")
        if args.test_uids is not None and os.geteuid() == 0:
            # Every task as a test user of its own (grade-submission --test-uid-pool: the tasks of a
            # node take the first free of a pool), as on this machine.
            for timing in sorted((work / "graded-slurm").glob("*/timing.json")):
                said = json.loads(timing.read_text()).get("test_user", "")
                if not said.endswith("(its own)"):
                    problems.append(f"{timing.parent.name} (Slurm): the test programs did not run as a user of "
                                    f"their own: {said!r}")

    rows = list(csv.DictReader(open(work / "graded" / "class.csv"))) if (work / "graded" / "class.csv").exists() else []
    if [r["student"] for r in rows] != chosen:
        problems.append(f"class.csv rows {[r['student'] for r in rows]} are not the class {chosen}")
    statuses = {r["student"]: r.get("status", "") for r in rows}
    alone_csv = work / "graded-references" / "class.csv"
    alone_rows = {r["student"]: r for r in csv.DictReader(open(alone_csv))} if alone_csv.exists() else {}
    for student in chosen:
        results_file = work / "graded" / student / "results.json"
        if "refused" in expected[student]:
            if results_file.exists():
                problems.append(f"{student}: graded, but it should have been refused")
            if not re.search(expected[student]["refused"], statuses.get(student, "")):
                problems.append(f"{student}: class.csv says {statuses.get(student)!r}, expected a refusal "
                                f"/{expected[student]['refused']}/")
            continue
        if not results_file.exists():
            problems.append(f"{student}: no results.json")
            continue
        problems += judge(student, json.loads(results_file.read_text()), expected[student]["expect"], gpu)
        if args.test_uids is not None and os.geteuid() == 0:
            timing = results_file.parent / "timing.json"
            said = json.loads(timing.read_text()).get("test_user", "") if timing.exists() else ""
            if not said.endswith("(its own)"):
                problems.append(f"{student}: the test programs did not run as a user of their own: {said!r}")
        row = next((r for r in rows if r["student"] == student), {})
        for chapter, points in (expected[student].get("gpu_scores", {}) if gpu else {}).items():
            if points == "max":  # every point of the chapter that this grading could score (timing.json)
                timing = results_file.parent / "timing.json"
                points = json.loads(timing.read_text()).get("chapter_max", {}).get(chapter) if timing.exists() else None
            if str(row.get(chapter)) != str(points):
                problems.append(f"{student}: {chapter} scored {row.get(chapter)!r} in class.csv, expected {points}")
        if student in alone_rows:  # (--time-criterion) a right answer's grade is the one it gets alone
            own = {k: v for k, v in alone_rows[student].items() if k not in ("faults", "status")}
            here = {k: v for k, v in row.items() if k not in ("faults", "status")}
            if own != here:
                problems.append(f"{student}: {here} in the class, {own} graded alone; the tests that differ: "
                                f"{differing_tests(results_file, work / 'graded-references' / student / 'results.json')}"
                                f"; the tests the class's gradings disagreed on: {split_tests(work / 'graded')}")
        if gpu and "faults" in expected[student] and not re.search(expected[student]["faults"], row.get("faults", "")):
            problems.append(f"{student}: faults {row.get('faults')!r} in class.csv, expected /{expected[student]['faults']}/")
        for chapter, points in expected[student].get("scores", {}).items():
            if str(row.get(chapter)) != str(points):
                problems.append(f"{student}: {chapter} scored {row.get(chapter)!r} in class.csv, expected {points}")
    if alone_seconds is not None:
        # The longest a faulty grading takes is its own tests' time limits; the bound below takes
        # every such limit one after another, the loosest reading (the closing note gives both).
        limit = max(int(v) for v in args.timeouts.split(","))
        timeouts = sum(int(n) for r in rows if not r["student"].startswith("zoe")
                       for n in re.findall(r"\btimeout x(\d+)", r.get("faults", "")))
        bound = 1.25 * alone_seconds + timeouts * limit
        print(f"check-grade-class: the class took {seconds:.0f} s; the right answers alone {alone_seconds:.0f} s, the "
              f"faulty ones' {timeouts} tests past their limits {timeouts * limit} s: at most {bound:.0f} s allowed")
        if seconds > bound:
            problems.append(f"the class took {seconds:.0f} s, more than 1.25 x {alone_seconds:.0f} s + {timeouts} x "
                            f"{limit} s = {bound:.0f} s")
    left = escapes_under(work)
    if left:
        problems.append(f"files written outside the grading folders: {', '.join(map(str, left))}")

    # The checks above can fail: without the sandbox, the same submissions read the reference
    # solution and leave files behind.
    for student in [s for s in chosen if expected[s].get("unconfined") or expected[s].get("no_escape")]:
        outdir = work / "unconfined" / student
        subprocess.run([str(COURSE / "tools" / "grade-submission"), str(class_dir / student), "-o", str(outdir),
                        "--no-sandbox", "--chapters", "06-transpose", "--timeouts", args.timeouts,
                        "--work", str(work / "unconfined-work" / student)], capture_output=True)
        if expected[student].get("unconfined"):
            results = json.loads((outdir / "results.json").read_text()) if (outdir / "results.json").exists() else {"tests": []}
            found = judge(student + " (unconfined)", results, expected[student]["unconfined"], gpu)
            if found:
                problems.append(f"{student}: graded without the sandbox it should get caught, but: {'; '.join(found)}")
        if expected[student].get("no_escape"):
            if not escapes_under(work):
                problems.append(f"{student}: graded without the sandbox it should leave files behind, and left none")
            remove_escapes(work)

    for problem in problems:
        print("FAIL:", problem)
    if problems:
        return 1
    print(f"check-grade-class: every verdict as expected for {', '.join(chosen)}; nothing written outside the grading "
          f"folders; without the sandbox the same code reads the reference and escapes")
    print((work / "graded" / "class.csv").read_text(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

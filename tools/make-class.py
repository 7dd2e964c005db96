#!/usr/bin/env python3
"""A class of whole-course submissions made from this course, and a check of its grades: for
measuring tools/grade-class and checking that its verdicts are those of the references, the
untouched starters and the fixtures.

    tools/make-class.py make OUT [--references N] [--starters N] [--fixtures CH/NAME,...]
    tools/make-class.py check GRADED OUT

make: OUT/<name>/chapters/<chapter>/<starter files>, one folder per submission, as a student
hands it in (only the files a student may edit; each .cu file ends with a comment naming its
submission unless --same-files, so that no two submissions share a build):
    ref-K      the reference solutions, every chapter
    starter-K  the files as handed out
    fix-CH-NAME  the reference solutions, with one fixture's files (tools/fixtures/CH/NAME) in
               chapter CH
OUT/class.json says what each submission is.

check: reads GRADED/<name>/results.json (tools/grade-class -o GRADED) and checks that
    a reference passed every test;
    a starter failed at least one test in every chapter, each failure with its message;
    a fixture got its fixture.txt verdicts in its chapter (every expect-fail test failed with its
    text, every other test of its filter passed; may-fail tests either), and passed every test
    of the other chapters.
Tests that were not graded (no GPU) are left unchecked, and counted. Exit status 1 on any
difference.
"""
import argparse
import fnmatch
import json
import pathlib
import re
import shutil
import sys

TOP = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tools"))
from course_grading import submission as S  # noqa: E402


def fixture_spec(chapter, name):
    """(filter, [(pattern, text)] expected failures, [(pattern, text)] possible failures)."""
    spec = {"filter": "*", "expect": [], "may": []}
    for line in (TOP / "tools" / "fixtures" / chapter / name / "fixture.txt").read_text().splitlines():
        if line.startswith("filter:"):
            spec["filter"] = line.split(":", 1)[1].strip()
        for key, word in (("expect", "expect-fail:"), ("may", "may-fail:")):
            if line.startswith(word):
                pattern, _, text = line.split(":", 1)[1].partition("::")
                spec[key].append((re.compile(pattern.strip()), text.strip()))
    return spec


def in_filter(case, gtest_filter):
    """GoogleTest's filter (positive patterns, then -negative ones) on Suite.Case; the code
    policy's tests belong to every fixture."""
    if case.startswith("CodePolicy.") or case.startswith("Build."):
        return True
    positive, _, negative = gtest_filter.partition("-")
    matches = any(fnmatch.fnmatchcase(case, p) for p in positive.split(":") if p)
    return matches and not any(fnmatch.fnmatchcase(case, p) for p in negative.split(":") if p)


def copy_starters(source_root, into, chapters=None):
    for relative in S.starter_files(TOP):
        chapter = relative.parts[1]
        if chapters is not None and chapter not in chapters:
            continue
        source = source_root / relative
        if source_root == TOP / "solutions":
            source = TOP / "solutions" / chapter / relative.name
        if source.exists():
            (into / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, into / relative)


def inlined(file):
    """A fixture's file with the reference it includes ("../../../../solutions/...") put in its
    place: a submission has only its own files."""
    lines = []
    for line in file.read_text().splitlines(keepends=True):
        found = re.match(r'\s*#include\s+"((?:\.\./)+solutions/[^"]+)"', line)
        lines.append((file.parent / found.group(1)).resolve().read_text() if found else line)
    return "".join(lines)


def make(out, references, starters, fixtures, distinct=True):
    out.mkdir(parents=True, exist_ok=True)
    kinds = {}
    for k in range(1, references + 1):
        copy_starters(TOP / "solutions", out / f"ref-{k}")
        kinds[f"ref-{k}"] = {"kind": "reference"}
    for k in range(1, starters + 1):
        copy_starters(TOP, out / f"starter-{k}")
        kinds[f"starter-{k}"] = {"kind": "starter"}
    for item in fixtures:
        chapter, name = item.split("/")
        folder = TOP / "tools" / "fixtures" / chapter / name
        if not (folder / "fixture.txt").exists():
            raise SystemExit(f"make-class: no fixture {item}")
        target = out / f"fix-{chapter}-{name}"
        copy_starters(TOP / "solutions", target)
        for file in folder.iterdir():
            if file.name != "fixture.txt":
                (target / "chapters" / chapter / file.name).write_text(inlined(file))
        kinds[target.name] = {"kind": "fixture", "chapter": chapter, "fixture": name}
    if distinct:
        # No two students hand in the same file: each .cu ends with a comment naming its
        # submission, so that every grading compiles every file, as a real class's does.
        for name in kinds:
            for file in sorted((out / name).rglob("*.cu")):
                text = file.read_text()
                file.write_text(text + ("" if text.endswith("\n") else "\n") + f"// submission {name}\n")
    (out / "class.json").write_text(json.dumps(kinds, indent=2) + "\n")
    print(f"make-class: {len(kinds)} submissions in {out}")


def check(graded, out):
    kinds = json.loads((out / "class.json").read_text())
    problems, unchecked, checked = [], 0, 0
    for student, what in sorted(kinds.items()):
        results = graded / student / "results.json"
        if not results.exists():
            problems.append(f"{student}: not graded (no results.json)")
            continue
        tests = json.loads(results.read_text())["tests"]
        spec = fixture_spec(what["chapter"], what["fixture"]) if what["kind"] == "fixture" else None
        failed_chapters = set()
        for test in tests:
            if "not graded" in test.get("tags", []):
                unchecked += 1
                continue
            checked += 1
            chapter, _, case = test["name"].partition(".")
            failed = test["status"] == "failed"
            failed_chapters.update([chapter] if failed else [])
            if what["kind"] == "reference" or (spec and chapter != what["chapter"]):
                if failed:
                    problems.append(f"{student}: {test['name']} failed: {test['output'][:300]!r}")
            elif what["kind"] == "starter":
                if failed and not test["output"].strip():
                    problems.append(f"{student}: {test['name']} failed without a message")
            else:
                expected = [t for p, t in spec["expect"] if p.search(case)]
                possible = [t for p, t in spec["may"] if p.search(case)]
                if expected:
                    if not failed:
                        problems.append(f"{student}: {test['name']} passed; expected to fail with {expected[0]!r}")
                    elif not any(t in test["output"] for t in expected):
                        problems.append(f"{student}: {test['name']} failed without {expected[0]!r}: "
                                        f"{test['output'][:300]!r}")
                elif possible:
                    if failed and not any(t in test["output"] for t in possible):
                        problems.append(f"{student}: {test['name']} failed without {possible[0]!r}")
                elif in_filter(case, spec["filter"]) and failed:
                    problems.append(f"{student}: {test['name']} failed: {test['output'][:300]!r}")
        if what["kind"] == "starter":
            # Only where every test ran: without a GPU a starter may fail none of the CPU tests.
            chapters = {t["name"].partition(".")[0] for t in tests}
            chapters -= {t["name"].partition(".")[0] for t in tests if "not graded" in t.get("tags", [])}
            for chapter in sorted(chapters - failed_chapters):
                problems.append(f"{student}: the untouched starter of {chapter} failed no test")
    for line in problems:
        print("  " + line)
    print(f"make-class check: {len(kinds)} submissions, {checked} verdicts checked, {unchecked} not graded, "
          f"{len(problems)} differences")
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    maker = sub.add_parser("make")
    maker.add_argument("out")
    maker.add_argument("--references", type=int, default=1)
    maker.add_argument("--starters", type=int, default=1)
    maker.add_argument("--fixtures", default="", help="CH/NAME,... (tools/fixtures)")
    maker.add_argument("--same-files", action="store_true",
                       help="submissions of one kind hand in the very same files (by default each .cu file ends "
                            "with a comment naming its submission, so that every grading compiles all of them)")
    checker = sub.add_parser("check")
    checker.add_argument("graded")
    checker.add_argument("out")
    args = parser.parse_args()
    if args.command == "make":
        make(pathlib.Path(args.out), args.references, args.starters, [f for f in args.fixtures.split(",") if f],
             distinct=not args.same_files)
        return 0
    return check(pathlib.Path(args.graded), pathlib.Path(args.out))


if __name__ == "__main__":
    sys.exit(main())

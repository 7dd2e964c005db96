#!/usr/bin/env python3
"""Checks every chapter's diagnosis rules (tests/<chapter>/diagnosis.txt, course/diagnosis.h):
each exercise is a function its chapter's contract declares, each metric has Nsight Compute's
form (unit__counter.rollup[.submetric]), and each TODO(N) a sentence names is a marker of the
chapter's starter files, so that a student told "pad the tile (TODO(1))" finds TODO(1) there.
The C++ parser's own test (unit_support_tests, Diagnosis.*) checks that the files parse and
that every rule names only its exercise's metrics and the tests' inputs.

Usage: tools/check-diagnosis-rules.py  (exit 1 with the mistakes listed)"""
import pathlib
import re
import sys

TOP = pathlib.Path(__file__).resolve().parent.parent
METRIC = re.compile(r"^[a-z0-9]+__[a-z0-9_]+\.(sum|avg|max|min)(\.[a-z0-9_]+)?$")


def main():
    mistakes, files = [], sorted((TOP / "tests").glob("*/diagnosis.txt"))
    for rules in files:
        chapter = rules.parent.name
        folder = TOP / "chapters" / chapter
        if not folder.is_dir():
            mistakes.append(f"{rules.relative_to(TOP)}: no chapter folder chapters/{chapter}")
            continue
        contract = "\n".join(h.read_text() for h in sorted(folder.glob("*.h")))
        starters = "\n".join(c.read_text() for c in sorted(folder.glob("*.cu")))
        todos = set(re.findall(r"TODO\((\d+)\)", starters))
        for number, line in enumerate(rules.read_text().splitlines(), 1):
            where = f"{rules.relative_to(TOP)}:{number}"
            word, _, rest = line.strip().partition(" ")
            if word == "exercise" and not re.search(rf"\b{re.escape(rest.strip())}\s*\(", contract):
                mistakes.append(f"{where}: exercise {rest.strip()} is no function of chapters/{chapter}/*.h")
            elif word == "metric" and not METRIC.match(rest.strip()):
                mistakes.append(f"{where}: '{rest.strip()}' is not a metric name (unit__counter.rollup)")
            elif word == "say":
                for todo in re.findall(r"TODO\((\d+)\)", rest):
                    if todo not in todos:
                        mistakes.append(f"{where}: TODO({todo}) is no marker of chapters/{chapter}/*.cu")
                if re.search(r"TODO\s+\d", rest):
                    mistakes.append(f"{where}: write a TODO as the starters do, TODO(N)")
    for mistake in mistakes:
        print(mistake)
    print(f"check-diagnosis-rules: {len(files)} chapters' rules, {len(mistakes)} mistakes")
    return 1 if mistakes or not files else 0


if __name__ == "__main__":
    sys.exit(main())

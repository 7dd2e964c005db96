#!/usr/bin/env python3
"""Every rule of every contract names the test that checks it, and that test exists.

A contract header (chapters/<chapter>/*.h) states its rules either as bullets under a
"**Rules**" line, or as a paragraph that starts with "Rules" or "Rule" next to a function. Each
rule must name, in parentheses, at least one test: a suite (TransposeTiledTechnique) or a case
(HostTimer.LeavesEarlierWorkOut) of the chapter's tests (tests/<chapter>/*_test.cpp), or
CodePolicy. CamelCase words in parentheses are read as test names, and each must exist.

    tools/check-contract-rules.py [--table]     exit status 1 when a rule names no test or a missing one
"""
import argparse
import pathlib
import re
import sys

TOP = pathlib.Path(__file__).resolve().parent.parent
TEST_NAME = re.compile(r"^[A-Z][a-z0-9]{2,}[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9_]*)?$")
EVERY_CHAPTER = {"CodePolicy": {"CallsOnlyWhatTheCourseAllows", "DefinesOnlyTheContractGlobally",
                                "RunsNothingOutsideTheContractCalls"}}


def tests_of(chapter):
    """{suite: {case, ...}} of a chapter's GoogleTest sources, with the code policy's tests."""
    found = {k: set(v) for k, v in EVERY_CHAPTER.items()}
    aliases = {}
    for source in sorted((TOP / "tests" / chapter).glob("*_test.c*")):
        text = source.read_text()
        for alias, fixture in re.findall(r"using\s+(\w+)\s*=\s*(\w+)\s*;", text):
            aliases[alias] = fixture
        for suite, case in re.findall(r"\bTEST(?:_P|_F)?\(\s*(\w+)\s*,\s*(\w+)\s*\)", text):
            found.setdefault(suite, set()).add(case)
    return found


def rules_of(header):
    """[(first line, text)] of the rules in a contract header."""
    lines = header.read_text().splitlines()
    rules, i = [], 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"^///\s*\*\*Rules\*\*", line):
            i += 1
            while i < len(lines) and lines[i].startswith("///") and lines[i].strip() != "///":
                if re.match(r"^///\s*-\s", lines[i]):
                    start, text = i + 1, [lines[i]]
                    i += 1
                    while i < len(lines) and re.match(r"^///\s{2,}\S", lines[i]):
                        text.append(lines[i])
                        i += 1
                    rules.append((start, " ".join(t.lstrip("/ -") for t in text)))
                else:
                    i += 1
            continue
        if re.match(r"^///.*\bRules?\b[ ,(]", line) and "**Rules**" not in line:
            start, text = i + 1, [line[line.find("Rule"):]]
            i += 1
            while i < len(lines) and lines[i].startswith("///") and lines[i].strip() != "///" \
                    and not re.match(r"^///\s*(Exercise|Given)", lines[i]):
                text.append(lines[i])
                i += 1
            rules.append((start, " ".join(t.lstrip("/ ") for t in text)))
            continue
        i += 1
    return rules


def named_tests(text):
    names = []
    for group in re.findall(r"\(([^()]*)\)", text):
        for token in re.split(r"[\s,;:]+", group):
            token = token.strip("`.")
            if TEST_NAME.match(token):
                names.append(token)
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", action="store_true", help="print every rule with its tests (Markdown)")
    args = parser.parse_args()
    problems, rows = [], []
    for chapter_dir in sorted(p for p in (TOP / "chapters").iterdir() if p.is_dir()):
        tests = tests_of(chapter_dir.name)
        for header in sorted(chapter_dir.glob("*.h")):
            for line, text in rules_of(header):
                where = f"{header.relative_to(TOP)}:{line}"
                names = named_tests(text)
                if not names:
                    problems.append(f"{where}: the rule names no test: {text[:120]}")
                for name in names:
                    suite, _, case = name.partition(".")
                    if suite not in tests or (case and case not in tests[suite]):
                        problems.append(f"{where}: the rule names {name}, which {chapter_dir.name}'s tests do not have")
                rows.append((chapter_dir.name, text, names))
    if args.table:
        print("| chapter | rule | checked by |\n| --- | --- | --- |")
        for chapter, text, names in rows:
            rule = re.sub(r"\s*\([^()]*\)", "", text).replace("|", "/")
            print(f"| {chapter} | {rule} | {', '.join(names)} |")
    for problem in problems:
        print("FAIL:", problem)
    if problems:
        return 1
    print(f"check-contract-rules: {len(rows)} rules in {len({r[0] for r in rows})} chapters, each naming tests that exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())

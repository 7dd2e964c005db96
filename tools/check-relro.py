#!/usr/bin/env python3
"""Checks that every course test program (the programs of the student, solution and fixture tests,
which link a submission's code) is linked with full RELRO: a GNU_RELRO program header and
BIND_NOW (DT_FLAGS BIND_NOW or DT_FLAGS_1 NOW). With lazy binding the GOT entries of the judge's
library calls (cudaEventElapsedTime, ...) stay writable while student code runs; with full RELRO
the dynamic linker binds them all when the program starts and makes them read-only before main.
cmake/CourseChapter.cmake (course_link_test_program) links them so; this says if one is not.

Reads the programs with binutils' `readelf`; a program that is not built (its code did not
compile) is listed apart and is no failure: it runs no test.
Usage: tools/check-relro.py [build-dir]   (default: build)
"""
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from course_grading import results as R  # noqa: E402


def test_programs(build):
    """The ELF programs that the student, solution and fixture tests run, and the missing ones."""
    found, missing = set(), set()
    for test in R._listed_tests(build):
        if test["name"].split(".")[0] not in ("student", "solution", "fixture"):
            continue
        for argument in test.get("command", []):
            path = pathlib.Path(str(argument))
            if not path.is_absolute() or not str(path).startswith(str(build)):
                continue
            if path.is_file():
                with open(path, "rb") as handle:
                    if handle.read(4) == b"\x7fELF":
                        found.add(path)
            elif path.name.endswith("_tests"):
                missing.add(path)
    return sorted(found), sorted(missing)


def problems_of(program):
    headers = subprocess.run(["readelf", "-lW", str(program)], capture_output=True, text=True).stdout
    dynamic = subprocess.run(["readelf", "-dW", str(program)], capture_output=True, text=True).stdout
    found = []
    if not re.search(r"^\s*GNU_RELRO\s", headers, re.M):
        found.append("no GNU_RELRO program header")
    if not re.search(r"\(FLAGS\)\s.*\bBIND_NOW\b|\(FLAGS_1\)\s.*\bNOW\b", dynamic):
        found.append("lazy binding (no BIND_NOW in DT_FLAGS, no NOW in DT_FLAGS_1)")
    return found


def main(argv):
    build = pathlib.Path(argv[1] if len(argv) > 1 else "build").resolve()
    programs, missing = test_programs(build)
    bad = 0
    for program in programs:
        for problem in problems_of(program):
            print(f"check-relro: {program.relative_to(build)}: {problem}: link it with -Wl,-z,relro,-z,now",
                  file=sys.stderr)
            bad += 1
    print(f"check-relro: {len(programs)} test programs, {bad} problem(s)"
          + (f"; {len(missing)} not built: {', '.join(p.name for p in missing)}" if missing else ""))
    if not programs:
        print("check-relro: no test program found (is the build tree built?)", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

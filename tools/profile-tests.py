#!/usr/bin/env python3
"""Where the tests' time goes: sums the phases that test programs print with COURSE_PROFILE=1.

    COURSE_PROFILE=1 ctest --preset student          # or any ctest run of the course's tests
    tools/profile-tests.py build/Testing/Temporary/LastTest.log [--top 15]

Reads ctest's log of the last run (every test's output and time) and prints, for the tests that
run alone (RUN_SERIAL: perf, device-wide, timer and counted tests; their time is the GPU's own)
and for the others, where the seconds went: outside main() (process start and exit, the CUDA
context's teardown), the first CUDA call (the context), and each phase the support library
times (course/profile.h), with the slowest tests. A diagnostic for instructors and maintainers:
no verdict depends on it.
"""
import argparse
import collections
import re
import sys

SERIAL = re.compile(r"Perf|DeviceWide|Timer|Counted|Batch\.[a-z]+-alone")  # (a grader's batches too)
TEST_START = re.compile(r"^\d+/\d+ Test: (\S+)$")
TEST_TIME = re.compile(r"^Test time =\s+([\d.]+) sec")
PROCESS = re.compile(r"^\[ PROFILE  \] process ([\d.-]+) ms \(main ([\d.]+) ms\)")
PHASE = re.compile(r"^\[ PROFILE  \] (.+) ([\d.]+) ms x(\d+)$")


def parse(lines):
    """Yields (name, seconds, main_ms or None, {phase: ms}) per test in a ctest log."""
    name, main_ms, phases = None, None, {}
    for line in lines:
        line = line.rstrip("\n")
        m = TEST_START.match(line)
        if m:
            name, main_ms, phases = m.group(1), None, {}
            continue
        if name is None:
            continue
        m = PROCESS.match(line)
        if m:
            main_ms = float(m.group(2))
            continue
        m = PHASE.match(line)
        if m:
            phases[m.group(1)] = phases.get(m.group(1), 0.0) + float(m.group(2))
            continue
        m = TEST_TIME.match(line)
        if m:
            yield name, float(m.group(1)), main_ms, phases
            name = None


def summarize(tests, top):
    groups = collections.OrderedDict([("run alone (serial)", []), ("run side by side", [])])
    for test in tests:
        short = test[0].split(".", 2)[-1]
        groups["run alone (serial)" if SERIAL.search(short) else "run side by side"].append(test)
    out = []
    for title, members in groups.items():
        if not members:
            continue
        total = sum(t[1] for t in members)
        profiled = [t for t in members if t[2] is not None]
        outside = sum(t[1] - t[2] / 1e3 for t in profiled)
        phases = collections.Counter()
        for t in profiled:
            phases.update({k: v / 1e3 for k, v in t[3].items()})
        out.append(f"{title}: {len(members)} tests, {total:.1f} s in all ({len(profiled)} profiled)")
        out.append(f"  {'outside main() (process start, exit, context teardown)':58} {outside:8.1f} s")
        for phase, seconds in phases.most_common():
            out.append(f"  {phase:58} {seconds:8.1f} s")
        out.append(f"  slowest:")
        for t in sorted(members, key=lambda t: -t[1])[:top]:
            out.append(f"    {t[1]:6.2f} s  {t[0]}")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log", help="ctest's log, e.g. build/Testing/Temporary/LastTest.log")
    parser.add_argument("--top", type=int, default=10, help="slowest tests listed per group")
    args = parser.parse_args(argv)
    with open(args.log, errors="replace") as f:
        tests = list(parse(f))
    if not tests:
        print(f"no tests found in {args.log}", file=sys.stderr)
        return 1
    print(summarize(tests, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())

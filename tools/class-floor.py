#!/usr/bin/env python3
"""How fast a class on one GPU can go: the GPU's serial work per submission, from its profiles.

    tools/grade-class CLASS/ -o graded/ --profile ...
    tools/class-floor.py graded/            # or a .tgz of its */profile.txt (gpu-run-class-scaling.sh)
    tools/class-floor.py graded/ --seconds 520 --graded 20 --top 10

A class's programs take turns on their GPU (course/gpu_turn.h): each makes its CUDA context and
tears it down in the context turn, one program at a time, and each measurement holds the
exclusive turn, in which no context is made. So, per submission, the contexts' making, their
teardown and the measurements' exclusive turns run one after another, whatever the cores or the
gradings at a time: their sum is the floor of the seconds per submission on one GPU with one
context slot (a class of 24 references on the H100, 2026-11-28: 7.3 + 6.0 + 10.8 = 24 s against
about 21-26 s measured). With --seconds and --graded (the class's wall time and how many it
graded) it says how close the class came; --top lists the tests whose exclusive turns weigh most
per submission, the place to shorten a measurement. A diagnostic: no verdict depends on it.
"""
import argparse
import collections
import pathlib
import re
import sys
import tarfile

LINE = re.compile(r"^  (\S.*?)\s+([\d.]+) s$")
CONTEXT = "context"
OUTSIDE_MAIN = "outside main() (process start, exit, context teardown)"
EXCLUSIVE = "GPU turn: exclusive, held"
EXCLUSIVE_BY = "GPU turn: exclusive, held by "
RUN = re.compile(r"^run (.+?): (\d+) tests?, [\d.]+ s in all \((\d+) profiled\)")


def read_profile(text):
    """{phase: seconds} of one grading's profile.txt (tools/profile-tests.py's summary: each
    group's phases, added up over the groups), and how many programs printed a profile."""
    phases = collections.Counter()
    programs = 0
    in_slowest = False
    for line in text.splitlines():
        run = RUN.match(line)
        if run:
            programs += int(run.group(3))
            in_slowest = False
            continue
        if line.strip() == "slowest:":
            in_slowest = True
            continue
        m = LINE.match(line)
        if m and not in_slowest:
            phases[m.group(1)] += float(m.group(2))
    return phases, programs


def profiles(source):
    """{grading: profile.txt's text} of a graded class folder or of a .tgz of */profile.txt."""
    path = pathlib.Path(source)
    found = {}
    if path.is_dir():
        for profile in sorted(path.glob("*/profile.txt")):
            found[profile.parent.name] = profile.read_text(errors="replace")
    else:
        with tarfile.open(path) as archive:
            for member in archive.getmembers():
                if member.isfile() and member.name.endswith("/profile.txt"):
                    found[pathlib.Path(member.name).parent.name] = archive.extractfile(member).read().decode(errors="replace")
    return found


def floor(found):
    """The mean per submission of each serial part, their sum, and the mean exclusive seconds by test."""
    if not found:
        return None
    parts = collections.Counter()
    by_test = collections.Counter()
    programs = 0
    for text in found.values():
        phases, count = read_profile(text)
        programs += count
        for name in (CONTEXT, OUTSIDE_MAIN, EXCLUSIVE):
            parts[name] += phases.get(name, 0.0)
        for name, seconds in phases.items():
            if name.startswith(EXCLUSIVE_BY):
                by_test[name[len(EXCLUSIVE_BY):]] += seconds
    n = len(found)
    mean = {name: parts[name] / n for name in (CONTEXT, OUTSIDE_MAIN, EXCLUSIVE)}
    return {"gradings": n, "programs": programs / n, "context": mean[CONTEXT], "outside_main": mean[OUTSIDE_MAIN],
            "exclusive": mean[EXCLUSIVE], "floor": sum(mean.values()),
            "exclusive_by_test": {test: seconds / n for test, seconds in by_test.items()}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", help="a graded class folder, or a .tgz of its */profile.txt")
    parser.add_argument("--seconds", type=float, help="the class's wall time")
    parser.add_argument("--graded", type=int, help="how many submissions it graded in that time")
    parser.add_argument("--top", type=int, default=10, help="tests listed by their exclusive turns (default 10)")
    args = parser.parse_args(argv)
    result = floor(profiles(args.source))
    if result is None:
        print(f"class-floor: no */profile.txt in {args.source} (grade the class with --profile)", file=sys.stderr)
        return 1
    print(f"{result['gradings']} gradings profiled, {result['programs']:.0f} profiled programs each; per submission:")
    print(f"  contexts made one at a time      {result['context']:6.1f} s")
    print(f"  outside main (start, teardown)   {result['outside_main']:6.1f} s")
    print(f"  measurements' exclusive turns    {result['exclusive']:6.1f} s")
    print(f"  floor on one GPU, one slot       {result['floor']:6.1f} s per submission "
          f"({200 * result['floor'] / 60:.0f} minutes for 200)")
    if args.seconds and args.graded:
        per = args.seconds / args.graded
        print(f"  measured                         {per:6.1f} s per submission ({result['floor'] / per:.2f} of it the floor)")
    if result["exclusive_by_test"] and args.top > 0:
        print(f"exclusive turns per submission, the {args.top} longest:")
        for test, seconds in sorted(result["exclusive_by_test"].items(), key=lambda kv: -kv[1])[:args.top]:
            print(f"  {seconds:6.2f} s  {test}")
    elif args.top > 0:
        print("(no exclusive turns by test: profiles from before 2026-11-28)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks that every fixture submission of tools/fixtures gets the verdict its fixture.txt expects.

A fixture is a submission built from the reference solution with some files replaced: wrong,
cheating, too slow, not compiling, or legitimately different. Its fixture.txt says:

    class: wrong | cheating | threshold | technique | build | legitimate
    filter: <GoogleTest filter of the tests it runs>
    expect-fail: <regular expression on Suite.Case> :: <text the failure output must contain>
    may-fail: <regular expression on Suite.Case> :: <text the failure output must contain>
    diagnosis: <regular expression on Suite.Case> :: <text the judge's diagnosis must contain>

Every test that matches an expect-fail line must fail with that text; every other test must
pass (a fixture with no expect-fail line must pass everything). A may-fail line names a test
that a wrong submission passes only by chance (a processor-time clock is right while the driver
spins, not while it sleeps): it may pass, and if it fails, it fails with that text. A diagnosis
line is checked with --diagnose only (the tests run with COURSE_DIAGNOSE=1, course/diagnosis.h):
the perf test's `[ DIAGNOSIS]` line must contain that text, whatever its verdict. A test skipped
here (no GPU) leaves its expectation unchecked, and says so.

Usage: tools/check-fixtures.py [--build DIR] [--junit FILE] [--report FILE.md] [--chapters A,B]
                               [--fixtures NAME,CHAPTER/NAME] [--seeds N] [--diagnose] [--gpus all|0,1,...]
  --chapters: only the fixtures of these chapter folders (e.g. 04-coalescing,10-l2-persistence).
  --fixtures: only these fixtures (a name, or chapter/name where names repeat).
  --seeds N:  run the tests N times, each with a fresh seed (COURSE_SEED, printed): a fixture
              keeps its verdict only if it has it on every seed.
  --gpus:     one ctest per GPU side by side (CUDA_VISIBLE_DEVICES, nvidia-smi's numbers), the
              fixtures dealt over them; chapter 11's (every GPU) after them, with all visible. The
              fixtures' tests on one H200 ran past 330 s (3,925 of them, 2026-11-28).
  --diagnose: run them with COURSE_DIAGNOSE=1 (the default under ctest), keeping the passed tests' output, and check the fixtures' diagnosis lines too.
  Configures nothing: run `cmake --preset default -DCOURSE_FIXTURES=ON` and build first.
  Without --junit it runs `ctest -L fixture` itself (perf tests stay RUN_SERIAL).
"""
import argparse
import os
import pathlib
import random
import re
import subprocess
import sys
import threading
import time
TOP = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tools"))
from course_grading import results as R  # noqa: E402


def read_fixtures():
    fixtures = {}
    for spec in sorted((TOP / "tools" / "fixtures").glob("*/*/fixture.txt")):
        chapter, name = spec.parent.parent.name, spec.parent.name
        entry = {"chapter": chapter, "name": name, "class": "?", "expect": [], "may": [], "diagnosis": [],
                 "about": ""}
        for line in spec.read_text().splitlines():
            if line.startswith("#") and not entry["about"]:
                entry["about"] = line.lstrip("# ").strip()
            elif line.startswith("class:"):
                entry["class"] = line.split(":", 1)[1].strip()
            elif line.startswith("expect-fail:"):
                pattern, _, text = line.split(":", 1)[1].partition("::")
                entry["expect"].append((re.compile(pattern.strip()), text.strip()))
            elif line.startswith("may-fail:"):
                pattern, _, text = line.split(":", 1)[1].partition("::")
                entry["may"].append((re.compile(pattern.strip()), text.strip()))
            elif line.startswith("diagnosis:"):
                pattern, _, text = line.split(":", 1)[1].partition("::")
                entry["diagnosis"].append((re.compile(pattern.strip()), text.strip()))
        fixtures[(name, chapter)] = entry
    return fixtures


def read_results(junits, reports):
    """{test: (outcome, output)}: ctest's verdict checked against each program's own record of
    the case (a fixture that forges its exit status fails here as it does in a grade), from
    each of `junits` (one JUnit file, or several: --gpus)."""
    results = {}
    for r in (r for junit in ([junits] if isinstance(junits, str) else junits)
              for r in R.read_junit(junit, reports=reports)):
        if r.name.startswith("fixture."):
            output = r.output if r.outcome != "failed" or r.reason in r.output else f"{r.reason}\n{r.output}"
            results[r.name] = (r.outcome, output)
    return results


def first_problem_line(output):
    """The most telling line of a failure's output, for the table."""
    for line in output.splitlines():
        line = line.strip()
        if any(key in line for key in ("Tampered", "not on the course's list", "process control", "the environment",
                                       "another GPU library", " defines ", "when the program starts", "data, not code",
                                       "when the program ends", "did not compile", "wrote ", "timed call",
                                       "outside the stream", "more than this GPU", "% is needed",
                                       "bytes of shared memory", "no LDGSTS", "library kernels", "only the CUDA runtime",
                                       "copy read",
                                       "another stream", "should be exactly", "should carry", "without cudaMemcpy",
                                       "differ", "not page-locked", "expected one", "each thread should")):
            return line[:160]
    return ""


def verdicts(fixtures, results, diagnose=False, gpu_run=False):
    """[(fixture, class, expected, got, verdict, message, problems)] for each fixture (with
    `diagnose`, its diagnosis lines checked too). With `gpu_run` (--gpus), a test that skipped is a
    mismatch: on the GPUs it was given, every test of a fixture runs (a fixture whose tests all
    skipped counted as passing: an adversarial review, 2026-11-28)."""
    rows = []
    for (name, chapter), fixture in fixtures.items():
        prefix = f"fixture.{name}.{chapter}."
        mine = {test[len(prefix):]: result for test, result in results.items() if test.startswith(prefix)}
        problems, got, messages, skipped_expectations = [], [], [], 0
        if not mine:
            problems.append("no test of this fixture ran (is the build configured with -DCOURSE_FIXTURES=ON?)")
        for test, (outcome, output) in sorted(mine.items()):
            if gpu_run and outcome == "skipped":
                problems.append(f"{test} skipped on a GPU run: {output.strip().splitlines()[-1][:200] if output.strip() else ''}")
            expectation = next(((p, t) for p, t in fixture["expect"] if p.search(test)), None)
            if outcome == "failed":
                got.append(test)
                line = first_problem_line(output)
                if line:
                    messages.append(line)
            if expectation is None:
                allowed = next(((p, t) for p, t in fixture["may"] if p.search(test)), None)
                if outcome == "failed" and allowed is None:
                    problems.append(f"{test} failed, but should pass")
                elif outcome == "failed" and allowed[1] not in output:
                    problems.append(f"{test} failed without '{allowed[1]}' in its output (it may fail only with it)")
                continue
            if outcome == "skipped":
                skipped_expectations += 1
            elif outcome == "passed":
                problems.append(f"{test} passed, but should fail with '{expectation[1]}'")
            elif expectation[1] not in output:
                problems.append(f"{test} failed without '{expectation[1]}' in its output")
        for pattern, text in fixture["expect"]:
            if not any(pattern.search(test) for test in mine):
                problems.append(f"no test matches the expectation '{pattern.pattern}'")
        for pattern, text in fixture["diagnosis"] if diagnose else []:
            tests = [test for test in mine if pattern.search(test)]
            if not tests:
                problems.append(f"no test matches the diagnosis expectation '{pattern.pattern}'")
            for test in tests:
                outcome, output = mine[test]
                if outcome == "skipped":
                    skipped_expectations += 1
                elif text not in R.diagnosis_line(output):
                    said = R.diagnosis_line(output) or "no diagnosis"
                    problems.append(f"{test}'s diagnosis lacks '{text}' (it said: {said[:200]})")
        expected = "pass" if not fixture["expect"] else f"fail {len(fixture['expect'])} rule(s)"
        if problems:
            verdict = "MISMATCH"
        elif skipped_expectations:
            verdict = f"ok ({skipped_expectations} expectation(s) unchecked: skipped here)"
        else:
            verdict = "ok"
        outcome = "passed all" if not got else f"failed {len(got)}: " + ", ".join(got[:3]) + (" ..." if len(got) > 3 else "")
        rows.append((f"{chapter}/{name}", fixture["class"], expected, outcome, verdict,
                     messages[0] if messages else "", problems))
    return rows


def fixture_selection(fixtures):
    """ctest's -R selecting the tests of these fixtures."""
    names = sorted({re.escape(name) + r"\." + re.escape(chapter) for name, chapter in fixtures})
    return r"^fixture\.(" + "|".join(names) + r")\."


def ctest_command(build, fixtures, junit, diagnose):
    keep = ["--test-output-size-passed", str(1 << 20), "--test-output-size-failed", str(1 << 20)] if diagnose else []
    return ["ctest", "--test-dir", build, "-L", "^fixture$", "-R", fixture_selection(fixtures), "-j", "4",
            "--output-junit", junit, *keep]


def fixture_environment(seed, diagnose):
    env = dict(os.environ)
    if seed is not None:
        env["COURSE_SEED"] = str(seed)
    if diagnose:
        env["COURSE_DIAGNOSE"] = "1"
    return env


# Chapters whose tests use every visible GPU (peer copies, work split over devices): with
# --gpus they run last, with every GPU of the list visible, while nothing else runs.
EVERY_GPU_CHAPTERS = {"11-deploy-multi-gpu"}


def split_over_gpus(fixtures, gpus):
    """[[(visible devices, [fixtures' keys])]]: phases run one after the other, each a list of
    queues that run side by side. First one queue per GPU, each seeing that GPU alone, which
    takes the one-GPU chapters' fixtures one at a time from a list they share (so the GPUs stay
    busy however long each fixture takes); then the chapters that use every GPU, with all of
    them visible. (Returned as the shared list, once per GPU: the queues pop from it.)"""
    single = sorted((key for key in fixtures if key[1] not in EVERY_GPU_CHAPTERS), key=lambda key: (key[1], key[0]))
    every = sorted(key for key in fixtures if key[1] in EVERY_GPU_CHAPTERS)
    phases = []
    if single:
        phases.append([(gpu, single) for gpu in gpus])
    if every:
        phases.append([(",".join(gpus), every)])
    return phases


def run_ctest(build, fixtures, junit, seed=None, diagnose=False, gpus=None, deadline=None):
    """Runs the selected fixtures' tests (all four jobs at a time; perf tests stay RUN_SERIAL);
    with `diagnose`, with COURSE_DIAGNOSE=1 and the passed tests' whole output kept. With `gpus`
    (a list of device numbers), one ctest per fixture, one at a time on each GPU (which it sees
    alone: a perf test stays alone on its GPU), the GPUs side by side, then the every-GPU
    chapters' with all of them visible; no fixture starts after `deadline` (time.monotonic()).
    Returns the JUnit files written (`junit` alone without `gpus`) and the fixtures not run."""
    R.clear_reports(R.report_dir(build))
    env = fixture_environment(seed, diagnose)
    if not gpus:
        subprocess.run(ctest_command(build, fixtures, junit, diagnose),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        return [junit], []
    stem = junit[:-4] if junit.endswith(".xml") else junit
    written, not_run, lock = [], [], threading.Lock()

    def drain(visible, pending):
        while True:
            with lock:
                if not pending:
                    return
                key = pending.pop(0)
                if deadline is not None and time.monotonic() > deadline:
                    not_run.append(key)
                    continue
                part = f"{stem}-{key[1]}-{key[0]}.xml"
                written.append(part)
            # Once more where ctest wrote no report: of the first four ctests started at once in one
            # build folder, one wrote none (4 x H200, 2026-11-28); what it said is printed.
            for attempt in (1, 2):
                pathlib.Path(part).unlink(missing_ok=True)  # (an earlier run's is no result)
                done = subprocess.run(ctest_command(build, {key: fixtures[key]}, part, diagnose),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace",
                                      env={**env, "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": visible})
                if pathlib.Path(part).exists():
                    break
                print(f"check-fixtures: ctest wrote no report for {key[1]}/{key[0]} (exit {done.returncode}, try "
                      f"{attempt} of 2): {done.stderr.strip()[-500:] or 'nothing on its errors'}", flush=True)

    for queues in split_over_gpus(fixtures, gpus):
        threads = [threading.Thread(target=drain, args=queue) for queue in queues]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return [part for part in written if pathlib.Path(part).exists()], not_run


def gpu_list(spec):
    """The devices of --gpus: a list as given, or with 'all' every one nvidia-smi lists (none
    without a GPU)."""
    if spec != "all":
        return [gpu.strip() for gpu in spec.split(",") if gpu.strip()]
    try:
        listed = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                                text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in listed.stdout.splitlines() if line.strip()] if listed.returncode == 0 else []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(TOP / "build"))
    parser.add_argument("--junit")
    parser.add_argument("--report")
    parser.add_argument("--chapters", help="comma-separated chapter folders (default: all)")
    parser.add_argument("--fixtures", help="comma-separated fixture names, or chapter/name (default: all)")
    parser.add_argument("--seeds", type=int, default=1, help="runs, each with a fresh seed (default 1: the tests' own)")
    parser.add_argument("--diagnose", action="store_true", help="with COURSE_DIAGNOSE=1, checking the diagnosis lines")
    parser.add_argument("--gpus", help="comma-separated devices (or 'all', every GPU nvidia-smi lists): the fixtures "
                        "one at a time on each GPU, which each sees alone, the GPUs side by side, then chapter 11's "
                        "with all of them")
    parser.add_argument("--deadline", type=float, metavar="SECONDS",
                        help="with --gpus: start no fixture after this many seconds; those not run are listed as "
                             "such (for a machine lent for a limited time)")
    args = parser.parse_args()
    gpus = gpu_list(args.gpus) if args.gpus else None
    if args.gpus and not gpus:
        print(f"check-fixtures: --gpus {args.gpus}: no GPU", file=sys.stderr)
        return 2
    # A device that is not there makes CUDA see none: its queue would skip every GPU test, and take
    # most fixtures, being the fastest (an adversarial review, 2026-11-28).
    unknown = sorted(set(gpus or []) - set(gpu_list("all"))) if gpus else []
    if unknown:
        print(f"check-fixtures: --gpus {args.gpus}: no GPU {', '.join(unknown)} here (nvidia-smi lists "
              f"{', '.join(gpu_list('all')) or 'none'})", file=sys.stderr)
        return 2
    chapters = set(args.chapters.split(",")) if args.chapters else None
    wanted = set(args.fixtures.split(",")) if args.fixtures else None
    fixtures = {key: f for key, f in read_fixtures().items()
                if (chapters is None or key[1] in chapters)
                and (wanted is None or key[0] in wanted or f"{key[1]}/{key[0]}" in wanted)}
    if wanted is not None:
        unknown = wanted - {n for n, _ in fixtures} - {f"{c}/{n}" for n, c in fixtures}
        if unknown:
            print(f"check-fixtures: no fixture named {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
    if args.junit and args.seeds != 1:
        print("check-fixtures: --seeds runs the tests, so it does not take --junit", file=sys.stderr)
        return 2
    build = str(pathlib.Path(args.build).resolve())

    if args.deadline is not None and not gpus:
        print("check-fixtures: --deadline goes with --gpus", file=sys.stderr)
        return 2
    deadline = time.monotonic() + args.deadline if args.deadline is not None else None
    runs = []  # (seed or None, rows)
    not_run = []
    for run in range(args.seeds):
        seed = random.SystemRandom().randrange(1, 2**31) if args.seeds > 1 else None
        junits = args.junit
        if not junits:
            junits, not_run = run_ctest(build, fixtures, str(pathlib.Path(build) / "fixtures-report.xml"), seed,
                                        args.diagnose, gpus, deadline)
        rows = verdicts({key: f for key, f in fixtures.items() if key not in not_run},
                        read_results(junits, R.report_dir(build)), args.diagnose, gpu_run=bool(gpus))
        if args.seeds > 1:
            bad = sum(1 for row in rows if row[4] == "MISMATCH")
            print(f"check-fixtures: seed {seed} (run {run + 1}/{args.seeds}): {bad} of {len(rows)} mismatched")
        runs.append((seed, rows))

    # A fixture's row is its first mismatching run's, else its last run's; problems say the seed.
    final = {}
    for seed, rows in runs:
        for row in rows:
            if row[0] not in final or (row[4] == "MISMATCH" and final[row[0]][4] != "MISMATCH"):
                problems = [f"{p} (seed {seed})" for p in row[6]] if seed is not None else row[6]
                final[row[0]] = (*row[:6], problems)
    rows = [final[key] for key in sorted(final)]
    mismatches = sum(1 for row in rows if row[4] == "MISMATCH")
    unchecked = sum(1 for row in rows if row[4].startswith("ok ("))

    lines = ["| fixture | class | expected | got | verdict | message |", "| --- | --- | --- | --- | --- | --- |"]
    for fixture, klass, expected, outcome, verdict, message, _ in rows:
        lines.append(f"| {fixture} | {klass} | {expected} | {outcome} | {verdict} | {message.replace('|', '/')} |")
    report = "\n".join(lines)
    print(report)
    for fixture, *_, problems in rows:
        for problem in problems:
            print(f"MISMATCH {fixture}: {problem}")
    seeds = f" on each of {args.seeds} seeds ({', '.join(str(seed) for seed, _ in runs)})" if args.seeds > 1 else ""
    for name, chapter in sorted(not_run, key=lambda key: (key[1], key[0])):
        print(f"NOT RUN {chapter}/{name}: the deadline (--deadline {args.deadline:g} s) came first")
    print(f"\ncheck-fixtures: {len(rows)} fixtures{seeds}, {mismatches} mismatched, {unchecked} with expectations "
          f"unchecked here (their tests need a GPU)" + (f"; {len(not_run)} not run (the deadline)" if not_run else ""))
    if args.report:
        pathlib.Path(args.report).write_text(report + "\n")
    return 1 if mismatches or not_run else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks how every course test is registered with ctest, from `ctest --show-only=json-v1`.

Every student, solution and fixture test must carry: its role label, its chapter label (the
second part of its name), exactly one of correctness/perf, a numeric TIMEOUT, RUN_SERIAL (or an
exclusive GPU turn) and the label `alone` exactly when it is a perf test, measures something
device-wide, times against a clock or counts the instructions that ran, and
`stretch` exactly when its name says Stretch, and, for a run of a test program, its hardware
queues (CUDA_DEVICE_MAX_CONNECTIONS set to 1, or unset for CUDA's default, which every perf and
timer test keeps). Every chapter folder must have student tests (and solution tests where
solutions/ exists). The graders' batches (COURSE_TEST_BATCHES=1) must hold every case of a test
program, but those that use several GPUs and those of the ...Repeated and ...Calls suites (a case
of their own), exactly once, with the case's own properties; those
of a class's turns (COURSE_TEST_BATCHES=queues-one-gpu) every case, the multi-GPU ones too, but
the extra runs, with its environment, labels and a time limit that cover it, and CUDA's default
queues exactly when one of its cases that do not time has them.
Usage: tools/check-test-properties.py [build-dir]   (default: build)
"""
import os
import json
import re
import pathlib
import subprocess
import sys


ONE_QUEUE = ("CUDA_DEVICE_MAX_CONNECTIONS=set:1",)
DEFAULT_QUEUES = ("CUDA_DEVICE_MAX_CONNECTIONS=unset:",)


def properties(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def problems_of(test):
    name = test["name"]
    parts = name.split(".")
    role = parts[0]
    if role not in ("student", "solution", "fixture") or len(parts) < 4:
        return []
    chapter = parts[1] if role != "fixture" else parts[2]
    props = properties(test)
    labels = set(props.get("LABELS", []))
    found = []
    if role not in labels:
        found.append(f"no role label '{role}'")
    if chapter not in labels:
        found.append(f"no chapter label '{chapter}'")
    kinds = labels & {"correctness", "perf"}
    if len(kinds) != 1:
        found.append(f"needs exactly one of correctness/perf, has {sorted(kinds) or 'none'}")
    timeout = props.get("TIMEOUT")
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        found.append(f"TIMEOUT is {timeout!r}, not a positive number")
    # Alone: RUN_SERIAL, or (a grader's COURSE_GPU_LOCK at ctest time) turns on the GPU, which
    # give the program the GPU alone while it measures (course/gpu_turn.h).
    serial = props.get("RUN_SERIAL") is True or any(
        str(a).startswith("--course_gpu_lock=") for a in test.get("command", []))
    needs_alone = "perf" in labels or any(word in name for word in ("DeviceWide", "Timer", "Counted"))
    if "perf" in labels and not serial:
        found.append("a perf test without RUN_SERIAL")
    if any(word in name for word in ("DeviceWide", "Timer", "Counted")) and not serial:
        found.append("a device-wide measurement, a timer test or a counted test without RUN_SERIAL")
    if needs_alone != ("alone" in labels):
        found.append("the alone label does not match what the test measures (perf, device-wide, timer, counted)")
    if ("Stretch" in name) != ("stretch" in labels):
        found.append("the stretch label does not match the name")
    suite = parts[3] if role == "fixture" else parts[2]
    # Hardware queues (cmake/CourseTestList.cmake): one, or CUDA's default where a test times or
    # its streams must run side by side (a timer test; the suites a chapter names, which this
    # listing cannot tell); for every run of a test program (not the code policy, nor a build's
    # stand-in).
    queues = tuple(m for m in props.get("ENVIRONMENT_MODIFICATION", []) if m.startswith("CUDA_DEVICE_MAX_CONNECTIONS="))
    if any(str(a).startswith("--gtest_filter=") for a in test.get("command", [])):
        if queues not in (ONE_QUEUE, DEFAULT_QUEUES):
            found.append(f"its hardware queues are {list(queues) or 'not set'}, not {ONE_QUEUE[0]} or "
                         f"{DEFAULT_QUEUES[0]}")
        elif ("perf" in labels or "Timer" in suite) and queues != DEFAULT_QUEUES:
            found.append("a perf or timer test with one hardware queue: it must time with CUDA's default ones")
    # A test that uses several GPUs, or picks its own with CUDA_VISIBLE_DEVICES, must say so:
    # grade-submission runs it apart from the tests it pins to one GPU.
    environment = " ".join(props.get("ENVIRONMENT", []))
    wants_gpus = any(word in suite for word in ("MultiGpu", "PeerAccess")) or "CUDA_VISIBLE_DEVICES" in environment
    if wants_gpus != ("multi-gpu" in labels):
        found.append("the multi-gpu label does not match what the test uses (its suite or CUDA_VISIBLE_DEVICES)")
    return found


def batch_problems(tests, batches, by_queues=False):
    """What is wrong with the batches (cmake/CourseTestList.cmake) of the one-case tests `tests`:
    COURSE_TEST_BATCHES=1's, or with `by_queues` =queues-one-gpu's (grouped by hardware queues
    alone, the multi-GPU cases too: a batch then has every label of its cases and the longest
    time limit)."""
    found = []

    def shared(test):  # what a batch and each of its cases must have alike
        props = properties(test)
        labels = set(props.get("LABELS", [])) - {"stretch", "batch"}
        if by_queues:
            return props.get("ENVIRONMENT", [])
        return (sorted(labels), props.get("TIMEOUT"), props.get("RUN_SERIAL") is True,
                props.get("ENVIRONMENT", []), props.get("ENVIRONMENT_MODIFICATION", []))

    def covers(batch, case):  # a batch by queues: its labels and time limit cover the case's
        batch_props, case_props = properties(batch), properties(case)
        return (set(case_props.get("LABELS", [])) - {"stretch"} <= set(batch_props.get("LABELS", [])) and
                float(case_props.get("TIMEOUT", 0)) <= float(batch_props.get("TIMEOUT", 0)))

    def selected(test):
        return next((str(a).split("=", 1)[1] for a in test.get("command", []) if str(a).startswith("--gtest_filter=")), None)

    by_name = {t["name"]: t for t in tests}
    batched = {}
    for batch in batches:
        parts = batch["name"].split(".")
        if "Batch" not in parts:
            continue
        prefix = batch["name"].split(".Batch.")[0]
        if "--gtest_fail_fast" not in batch.get("command", []):
            found.append(f"{batch['name']}: no --gtest_fail_fast")
        if by_queues:
            # CUDA's default queues when a case that does not time has them (its streams must run
            # side by side), else one; a perf case's own queues say nothing (a perf case keeps
            # the default for the presets, and in such a batch runs with one unless its streams
            # must run side by side, which this listing cannot tell).
            cases = [by_name[f"{prefix}.{c}"] for c in (selected(batch) or "").split(":") if f"{prefix}.{c}" in by_name]
            def queues_of(test):
                return tuple(properties(test).get("ENVIRONMENT_MODIFICATION", []))
            streams = any(queues_of(c) == DEFAULT_QUEUES for c in cases if "perf" not in properties(c).get("LABELS", []))
            timed = any(queues_of(c) == DEFAULT_QUEUES for c in cases)
            wanted = {DEFAULT_QUEUES} if streams else ({DEFAULT_QUEUES, ONE_QUEUE} if timed else {ONE_QUEUE})
            if queues_of(batch) not in wanted:
                found.append(f"{batch['name']}: its hardware queues are not {' or '.join(q[0] for q in wanted)}")
        for case in (selected(batch) or "").split(":"):
            name = f"{prefix}.{case}"
            batched[name] = batched.get(name, 0) + 1
            if name not in by_name:
                found.append(f"{batch['name']}: runs {case}, which is no test")
            elif shared(by_name[name]) != shared(batch) or (by_queues and not covers(batch, by_name[name])):
                found.append(f"{batch['name']}: {case} has other properties than its batch")
    listed = {b["name"] for b in batches}
    for test in tests:
        labels = properties(test).get("LABELS", [])
        extra_run = not test["name"].endswith(f".{selected(test)}")  # e.g. ...UsesOnlyVisibleDevices.CUDA_VISIBLE_DEVICES_1
        if selected(test) is None or ("multi-gpu" in labels and (not by_queues or extra_run)) or \
                test["name"].split(".")[0] == "unit":
            continue
        if own_program(test["name"]):
            # A later call in one program is its lesson: a case of its own, in no batch.
            if batched.get(test["name"], 0) or test["name"] not in listed:
                found.append(f"{test['name']}: should run in a program of its own, not in a batch")
            continue
        if batched.get(test["name"], 0) != 1:
            found.append(f"{test['name']}: in {batched.get(test['name'], 0)} batches, not 1")
    return found


def own_program(name):
    """Whether a case runs in a program of its own even in the graders' batches: the suites whose
    lesson is a later call in one program, ...Repeated and ...Calls (cmake/CourseTestList.cmake)."""
    parts = name.split(".")  # role.chapter.Suite.Case, or fixture.name.chapter.Suite.Case
    at = next((i for i, part in enumerate(parts) if re.match(r"\d\d-", part)), None)
    return at is not None and at + 1 < len(parts) and \
        re.search(r"(Repeated|Calls)$", parts[at + 1].rsplit("/", 1)[-1]) is not None


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build")
    top = pathlib.Path(__file__).resolve().parent.parent

    def listing(**extra):
        return json.loads(subprocess.run(["ctest", "--test-dir", str(build), "--show-only=json-v1"], check=True,
                                         capture_output=True, text=True, env=dict(os.environ, **extra)).stdout)["tests"]
    tests = listing()
    failures = batch_problems(tests, listing(COURSE_TEST_BATCHES="1"))
    failures += batch_problems(tests, listing(COURSE_TEST_BATCHES="queues-one-gpu"), by_queues=True)
    # (a class on several GPUs: the multi-GPU cases in a batch of their own, Batch.every-gpu)
    failures += batch_problems(tests, listing(COURSE_TEST_BATCHES="queues"), by_queues=True)
    roles_by_chapter = {}
    for test in tests:
        parts = test["name"].split(".")
        if parts[0] in ("student", "solution"):
            roles_by_chapter.setdefault(parts[1], set()).add(parts[0])
        for problem in problems_of(test):
            failures.append(f"{test['name']}: {problem}")
    for chapter_dir in sorted((top / "chapters").iterdir()):
        if not chapter_dir.is_dir():
            continue
        wanted = {"student"} | ({"solution"} if (top / "solutions" / chapter_dir.name).is_dir() else set())
        missing = wanted - roles_by_chapter.get(chapter_dir.name, set())
        for role in sorted(missing):
            failures.append(f"chapter {chapter_dir.name}: no {role} tests registered")
    checked = sum(1 for t in tests if t["name"].split(".")[0] in ("student", "solution", "fixture"))
    if failures:
        print(f"check-test-properties: {len(failures)} problem(s) in {checked} tests:")
        for line in failures:
            print("  " + line)
        return 1
    print(f"check-test-properties: {checked} course tests, all with role, chapter, kind, timeout, "
          f"serial, stretch and hardware-queue properties as required, and each case in one batch")
    return 0


if __name__ == "__main__":
    sys.exit(main())

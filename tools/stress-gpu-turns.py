#!/usr/bin/env python3
"""Stresses the GPU turn's yielding (tests/support/include/course/gpu_turn.h) on a GPU machine.

The references' test programs of a build run eight at a time with a turn file whose queue is
held shared throughout, as if a measurement always waited: every program yields its shared
turn as often as it can (every few milliseconds), so that a yield that can hang (a wait for the
program's GPU work that needs a lock a held call has) shows within a minute or two. A program
that runs past --limit seconds is a hang: its threads' wait channels (and stacks, with gdb) are
written to the log folder, and the exit status is 1. On the H100 (2026-11-25) the former yield,
which waited through the runtime from the program's start, hung 8 of 72 programs in 100 s; the
present one none of 163 (and, with contexts made one at a time, none of 362; one of those
failed, 2026-11-25, its log not kept: a failed program's last lines are now printed here).

With --gpus 0,1 (a machine of several GPUs), the programs take turns as a class on those GPUs
does (tools/course_grading): each GPU has its turn file, a program of one GPU sees that GPU and
takes turns through its file, and one of every GPU (chapter 11's tests among them) sees them all
and takes turns through every file (course/gpu_turn.h: several files, in one order), so that a
turn on several files that can wait for ever shows too.

Usage: tools/stress-gpu-turns.py [--build build] [--seconds 100] [--logs DIR] [--gpus 0,1] [-- FLAG...]"""
import argparse
import collections
import fcntl
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

# Programs and cases with many CUDA calls, threads, timers and host-side timing.
JOBS = [("solution_ch01_measuring_tests", "-BandwidthFormula.*"),
        ("solution_ch09_instructions_tests", "*Perf*"),
        ("solution_ch08_execution_config_tests", "RunTasks*:Chase*"),
        ("solution_ch02_transfers_tests", "*Pinned*:*Upload*"),
        ("solution_ch01_measuring_tests", "BandwidthPerf.*")]
# Programs that use every GPU (with --gpus). Not PeerAccessPerf after PeerAccess in one program:
# its copy without peer access then has it (2 x H100, 2026-11-26: 10 of 10 failed so, the other
# cases of those programs passed and none hung).
EVERY_GPU_JOBS = [("solution_ch11_deploy_multi_gpu_tests", "MultiGpu*:PeerAccess*:ComputeOnDevices*:-PeerAccessPerf.*")]
SKIPPED = 77  # a program whose tests all skipped (no GPU; tests/support/src/gtest_main.cpp)


def describe_hang(process, log):
    with open(log, "w") as out:
        for task in sorted(pathlib.Path(f"/proc/{process.pid}/task").glob("*")):
            def read(name):
                try:
                    return (task / name).read_text().strip()
                except OSError as error:
                    return str(error)
            out.write(f"thread {task.name} {read('comm')} wchan={read('wchan')} syscall={read('syscall').split(' ')[0]}\n")
        if shutil.which("gdb"):
            out.write(subprocess.run(["gdb", "-p", str(process.pid), "-batch", "-ex", "thread apply all bt 25"],
                                     capture_output=True, text=True, timeout=60).stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--seconds", type=float, default=100)
    parser.add_argument("--limit", type=float, default=90, help="seconds after which a program is a hang")
    parser.add_argument("--at-once", type=int, default=8)
    parser.add_argument("--logs", default=None)
    parser.add_argument("--gpus", default=None, help="comma-separated GPUs, each with its turn file (default: one file)")
    parser.add_argument("flags", nargs="*", help="more flags for every program")
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    logs = pathlib.Path(args.logs or tempfile.mkdtemp(prefix="stress-gpu-turns-"))
    logs.mkdir(parents=True, exist_ok=True)
    gpus = args.gpus.split(",") if args.gpus else [None]
    jobs = JOBS + (EVERY_GPU_JOBS if len(gpus) > 1 else [])
    missing = [exe for exe, _ in jobs if not (build / exe).exists()]
    if missing:
        print(f"stress-gpu-turns: not built in {build}: {', '.join(sorted(set(missing)))}", file=sys.stderr)
        return 2
    turns = [logs / (f"gpu-{gpu}.turn" if gpu is not None else "gpu.turn") for gpu in gpus]
    queues = []
    for turn in turns:
        for end in ("", ".gate", ".queue", ".context"):
            pathlib.Path(str(turn) + end).touch()
        queues.append(open(str(turn) + ".queue"))
        fcntl.flock(queues[-1], fcntl.LOCK_SH)  # a measurement always waits: every program yields
    # (program, cases, the GPUs it sees, its turn files): each program of one GPU on each GPU in
    # turn, then those of every GPU.
    plans = [(exe, cases, gpu, str(turn)) for exe, cases in JOBS for gpu, turn in zip(gpus, turns)]
    plans += [(exe, cases, ",".join(gpus), ",".join(str(t) for t in turns)) for exe, cases in jobs[len(JOBS):]]
    running, outcomes, durations, started = [], collections.Counter(), collections.defaultdict(list), 0
    failures = []  # (run number, program, cases, exit status) of the programs that failed
    end = time.monotonic() + args.seconds
    while time.monotonic() < end or running:
        while time.monotonic() < end and len(running) < args.at_once:
            exe, cases, visible, turn = plans[started % len(plans)]
            started += 1
            output = open(logs / f"run-{started}.txt", "w")
            env = dict(os.environ, **({"CUDA_VISIBLE_DEVICES": visible} if visible is not None else {}))
            process = subprocess.Popen([str(build / exe), f"--gtest_filter={cases}", f"--course_gpu_lock={turn}",
                                        *args.flags], stdout=output, stderr=subprocess.STDOUT, cwd=build, env=env)
            running.append((process, exe, cases, time.monotonic(), started))
        time.sleep(0.05)
        for item in list(running):
            process, exe, cases, since, number = item
            status = process.poll()
            if status is None and time.monotonic() - since > args.limit:
                describe_hang(process, logs / f"hang-{number}.txt")
                process.kill()
                process.wait()
                status = "hang"
            if status is None:
                continue
            running.remove(item)
            durations[f"{exe} {cases}"].append(time.monotonic() - since)
            outcomes[(exe, cases, status)] += 1
            if status == 0:
                (logs / f"run-{number}.txt").unlink(missing_ok=True)
            elif status not in ("hang", SKIPPED):
                failures.append((number, exe, cases, status))
    print(f"stress-gpu-turns: {started} programs in {args.seconds:.0f} s, {args.at_once} at a time; logs in {logs}")
    for (exe, cases, status), count in sorted(outcomes.items(), key=str):
        print(f"  {count:4d} x {'exit ' + str(status) if status != 'hang' else 'HANG'}  {exe} {cases}")
    for name, times in sorted(durations.items()):
        times.sort()
        print(f"  {name}: median {times[len(times) // 2]:.1f} s, longest {times[-1]:.1f} s")
    # What a failed program said, here: its log may not come back from the machine it ran on.
    for number, exe, cases, status in failures[:3]:
        lines = [line for line in (logs / f"run-{number}.txt").read_text(errors="replace").splitlines()
                 if not line.startswith("[ PROFILE")]
        print(f"  run {number} ({exe} {cases}) exited {status}; its last lines:")
        for line in lines[-15:]:
            print(f"    {line}")
    if all(status == SKIPPED for _, _, status in outcomes):
        print("stress-gpu-turns: every program skipped its tests (no GPU here): nothing was stressed", file=sys.stderr)
        return 2
    hangs = sum(count for (_, _, status), count in outcomes.items() if status == "hang")
    failed = sum(count for (_, _, status), count in outcomes.items() if status not in (0, "hang"))
    return 1 if hangs or failed else 0


if __name__ == "__main__":
    sys.exit(main())

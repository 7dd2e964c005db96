#!/usr/bin/env python3
"""What a class's test programs hold and wait for, now: the GPU turn files (course/gpu_turn.h) in
grade-class's lock folder (OUTDIR/.locks), read from the kernel's table of locks (/proc/locks).

For each turn file: the programs that hold it (exclusive: which ones; shared: how many) and how
many wait for it, exclusive and shared. A class whose GPUs idle while its programs stay alive
waits on one of these files: this says which, and for whom (a measurement that waits for a
context in the making, programs of every GPU that wait for two gates at once, ...).

Usage: tools/class-locks.py LOCKDIR [--every SECONDS] [--for SECONDS] [--out FILE]
  once by default; with --every, a snapshot every SECONDS (for --for SECONDS, default until
  killed), appended to FILE or printed. Needs no GPU; reads /proc only.
"""
import argparse
import collections
import os
import pathlib
import sys
import time


def lock_files(folder):
    """{inode: name} of the turn files in `folder` (gpu-N.turn and the files beside it)."""
    files = {}
    for path in pathlib.Path(folder).glob("gpu-*"):
        try:
            if path.is_file():
                files[path.stat().st_ino] = path.name
        except OSError:
            pass
    return files


def program(pid, cache):
    """A short name for process `pid`: its program and the test or batch it runs."""
    if pid in cache:
        return cache[pid]
    try:
        words = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        name = os.path.basename(words[0].decode(errors="replace")) if words and words[0] else "?"
        case = next((w.decode(errors="replace").split("=", 1)[1] for w in words if w.startswith(b"--gtest_filter=")), "")
        described = f"{pid} {name}" + (f" {case[:80]}" if case else "")
    except OSError:
        described = f"{pid} (gone)"
    cache[pid] = described
    return described


def snapshot(folder, locks_text=None):
    """The lines of one snapshot: per turn file, its holders and its waiters."""
    files = lock_files(folder)
    held = collections.defaultdict(list)  # name -> [(kind, pid)]
    waiting = collections.defaultdict(collections.Counter)  # name -> {kind: count}
    waiters = collections.defaultdict(list)  # name -> [pid]
    text = locks_text if locks_text is not None else pathlib.Path("/proc/locks").read_text()
    for line in text.splitlines():
        fields = line.split()
        blocked = "->" in fields
        if blocked:
            fields.remove("->")
        # "N: FLOCK ADVISORY WRITE|READ PID MAJ:MIN:INODE START END"
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue
        try:
            inode = int(fields[5].rsplit(":", 1)[1])
            pid = int(fields[4])
        except (ValueError, IndexError):
            continue
        name = files.get(inode)
        if name is None:
            continue
        kind = "exclusive" if fields[3] == "WRITE" else "shared"
        if blocked:
            waiting[name][kind] += 1
            waiters[name].append(pid)
        else:
            held[name].append((kind, pid))
    cache, lines = {}, []
    for name in sorted(set(files.values())):
        holders, waits = held.get(name, []), waiting.get(name, {})
        if not holders and not waits:
            continue
        exclusive = [program(pid, cache) for kind, pid in holders if kind == "exclusive"]
        shared = sum(1 for kind, _ in holders if kind == "shared")
        parts = []
        if exclusive:
            parts.append("held exclusive by " + "; ".join(exclusive))
        if shared:
            parts.append(f"held shared by {shared}")
        if waits:
            parts.append("waited for by " + ", ".join(f"{count} {kind}" for kind, count in sorted(waits.items())))
        lines.append(f"  {name}: " + ", ".join(parts))
        if waits:
            # Who waits, by program and first case (a class on 2 x H200, 2026-11-28, idled its GPUs
            # while some 60 programs waited for one context turn: which ones, the counts alone did
            # not say).
            kinds = collections.Counter(program(pid, cache).split(" ", 1)[-1] for pid in waiters[name])
            lines.append("    waiting: " + "; ".join(f"{count} x {what[:70]}" for what, count in kinds.most_common(4))
                         + (f"; {len(kinds) - 4} more kinds" if len(kinds) > 4 else ""))
    return lines or ["  (no turn file held or waited for)"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lock_dir")
    parser.add_argument("--every", type=float, default=0)
    parser.add_argument("--for", dest="duration", type=float, default=0)
    parser.add_argument("--out")
    args = parser.parse_args()
    start = time.monotonic()
    while True:
        block = [f"{time.monotonic() - start:.0f} s"] + snapshot(args.lock_dir)
        if args.out:
            with open(args.out, "a") as out:
                out.write("\n".join(block) + "\n")
        else:
            print("\n".join(block), flush=True)
        if not args.every or (args.duration and time.monotonic() - start + args.every > args.duration):
            return 0
        time.sleep(args.every)


if __name__ == "__main__":
    sys.exit(main())

"""The stages of grading one submission, shared by tools/grade-submission and tools/grade-class:

    prepare   a clean copy of the course (no solutions), the sandbox launcher, a configured build;
              a workspace can be reused for the next submission (tools/grade-class does, one per
              worker), and with the class's judge compiled once (prebuild) a submission compiles
              only its own files and links
    take      the submission's starter files, as plain bytes, into the copy
    build     the graded chapters, in a sandbox that may write only the build tree
    test      ctest, unconfined, running every test program in a sandbox that may write only a
              scratch folder: the course copy, the build tree, ctest's own reports and the
              other gradings stay out of reach of the code under test
    report    the verdicts, from ctest's report and each program's own record of its case

A Workspace is one grading's folder:

    course/         the clean copy of the course; course/build/ its build tree
    pristine/       the handed-out starter files (put back before each submission)
    bin/            course-sandbox (tools/course_grading/sandbox.c, compiled here)
    sandbox.args    the test sandbox's options (written by the grader, read by course-sandbox)
    tmp/, home/     the build's temporary and home folders
    scratch/        all that test programs may write: tmp, home, CUDA's cache, records/; a
                    file system of its own where the grader may mount one (cap_scratch: its
                    size is the most a submission's programs can write, COURSE_SCRATCH_GIB)
"""
import collections
import contextlib
import fcntl
import grp
import json
import os
import pathlib
import pwd
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from . import gpu_memory as M
from . import results as R
from . import sandbox as py_sandbox
from . import submission as S


@dataclass
class Workspace:
    root: pathlib.Path
    sandbox: bool = True
    hidden: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    rejudged: list = field(default_factory=list)  # tests judged again alone (judge_shared_faults_alone)
    gpu_memory: object = None  # what the GPU memory watch saw while the tests ran (gpu_memory.GpuMemoryWatch)
    # The test programs' system calls (course-sandbox -s): "enforce" refuses those outside its
    # list, "learn" lets them run and logs them, "off" installs no filter. Either way the log is
    # written by the sandbox's supervisor, a process the test program cannot reach.
    syscalls: str = "enforce"
    # How the scratch folder is bounded (cap_scratch): "2 GiB (a tmpfs of its own)", or why not.
    scratch_cap: str = ""
    # How many cases test() ran one by one after their batches (a program each, a context each),
    # of this GPU's and of every GPU (timing.json's cases_run_alone): a few are the batches' first
    # failures; most of a grading's cases there is a batch that stands in nothing anywhere (the
    # class of 2026-11-28 whose programs could write no record ran all 420 so, and graded none).
    run_alone: int = 0
    run_alone_every_gpu: int = 0
    # The user and group the test programs run as (course-sandbox -u; grade-submission --test-uid),
    # or None: the grader's own. Set by choose_test_user, dropped by confirm_test_user where that
    # user cannot reach the build.
    test_user: object = None
    # Who the test programs ran as, and why (timing.json's test_user).
    test_user_note: str = ""
    # What the test programs' /proc shows (course-sandbox's own_proc, seen by check_test_sandbox):
    # their own processes and no file lock where the sandbox could mount one for them, else the node's.
    proc_note: str = ""
    # The descriptor whose lock keeps the test user this grading's alone (hold_test_user), or None,
    # and that user's number (release_test_user).
    test_user_lock: object = None
    test_user_held: int = 0

    @property
    def course(self):
        return self.root / "course"

    @property
    def build(self):
        return self.course / "build"

    @property
    def scratch(self):
        return self.root / "scratch"

    @property
    def records(self):
        return self.scratch / "records"

    @property
    def pristine(self):
        return self.root / "pristine"

    @property
    def launcher(self):
        return self.root / "bin" / "course-sandbox"

    @property
    def syscall_log(self):
        return self.root / "syscalls.log"

    @property
    def sandbox_args(self):
        return self.root / "sandbox.args"


def _compile_launcher(source, target):
    """Builds course-sandbox with the C compiler: the course's own code, compiled unconfined."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for compiler in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if compiler and shutil.which(compiler):
            done = subprocess.run([compiler, "-O2", "-std=gnu11", "-o", str(target), str(source)],
                                  capture_output=True, text=True)
            if done.returncode == 0:
                return
            raise OSError(f"course-sandbox did not compile: {done.stderr[-500:]}")
    raise OSError("no C compiler (cc, gcc or clang) to build course-sandbox")


def prepare(course_root, root, hidden=(), sandbox=True, require_sandbox=False, test_uid=None, test_uid_count=1):
    """A workspace with a clean copy of the course and the sandbox launcher. `hidden`: folders the
    code under test may not read (the instructor's checkout, the class, the reports). `test_uid`:
    the user (and group, the same number) the test programs run as, or the first of a pool of
    `test_uid_count` that is free (choose_test_user)."""
    ws = Workspace(pathlib.Path(root).resolve(), sandbox=sandbox,
                   hidden=[pathlib.Path(h).resolve() for h in hidden])
    ws.root.mkdir(parents=True, exist_ok=True)
    os.chmod(ws.root, 0o700)  # other users' gradings on a shared node cannot look in
    if not ws.course.exists():
        S.clean_copy(pathlib.Path(course_root), ws.course)
        # The handed-out starter files, put back before each submission of a reused workspace.
        for relative in S.starter_files(ws.course):
            (ws.pristine / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ws.course / relative, ws.pristine / relative)
    for folder in ("tmp", "home", "scratch"):
        (ws.root / folder).mkdir(exist_ok=True)
    if sandbox:
        if not py_sandbox.abi_version():
            if require_sandbox:
                raise ValueError("Landlock is not available here, and --require-sandbox was given")
            ws.sandbox = False
            ws.notes.append("Student code ran unconfined: this kernel has no Landlock sandbox.")
        else:
            _compile_launcher(ws.course / "tools" / "course_grading" / "sandbox.c", ws.launcher)
    # (once the sandbox is known: without it there is no test user)
    choose_test_user(ws, test_uid, test_uid_count)
    if ws.test_user:  # its group may enter (the course copy, the build), no other grading's test user
        os.chown(ws.root, 0, ws.test_user[1])
        os.chmod(ws.root, 0o750)
    return ws


def choose_test_user(ws, uid, count=1):
    """Sets ws.test_user to (uid, uid) where the test programs can be given a user of their own: the
    grader runs as root and the sandbox runs them (course-sandbox -u). Such a program owns nothing
    of the node but its scratch folder: root's files are closed to it by the kernel's permissions
    (the threat model's row "read what the node keeps for root"), and so are the other gradings'
    workspaces and scratch folders (mode 0750 and 0700, each its own user's), which Landlock hides
    from opens but not from stat and readlink (the row "learn about hidden files"). Otherwise
    ws.test_user stays None and ws.test_user_note says why. With `count` > 1, a pool: the first of
    uid .. uid + count - 1 that no other grading holds now (Slurm's tasks that share a node, which
    no one numbers among themselves); ValueError where every one is taken."""
    if uid is None:
        ws.test_user_note = "the grader's (no --test-uid)"
        return
    uid, count = int(uid), int(count)
    if count < 1 or not 0 < uid or uid + count - 1 >= 2**32 - 1:
        raise ValueError(f"a test user is a number from 1 to {2**32 - 2}: not {uid}"
                         + (f" to {uid + count - 1}" if count != 1 else ""))
    accounts = [(u, name) for u in range(uid, uid + count) if (name := account_of(u))]
    if accounts:
        # An account's files (its home, its mail) would be the test programs' own.
        raise ValueError(f"uid {accounts[0][0]} is {accounts[0][1]} on this machine: give the test users numbers that "
                         "no account or group uses")
    if os.geteuid() != 0:
        ws.test_user_note = f"the grader's: running the test programs as uid {uid} needs a grader running as root"
    elif not ws.sandbox:
        ws.test_user_note = "the grader's: without the sandbox there is no test user"
    else:
        # A pool first looks for a user that is free now, then waits for one's leftovers to end: a
        # grading that waited on the first user while a later one took the second was left with
        # none (an adversarial review, 2026-11-28).
        tries = [(candidate, 0) for candidate in range(uid, uid + count)] if count > 1 else []
        tries += [(candidate, LEFTOVER_SECONDS) for candidate in range(uid, uid + count)]
        for at, (candidate, wait) in enumerate(tries):
            try:
                hold_test_user(ws, candidate, wait)
                break
            except ValueError as taken:
                if at == len(tries) - 1:
                    raise (ValueError(f"every test user of uid {uid} to {candidate} is another grading's, or still "
                                      f"runs processes: give the pool more numbers (the last: {taken})")
                           if count > 1 else taken) from None
        ws.test_user = (candidate, candidate)
        ws.test_user_note = f"uid {candidate}, gid {candidate} (its own)"


def _test_user_locks():
    """The folder of the test users' locks, the node's (root's, mode 0700)."""
    return pathlib.Path("/run/course-test-uids" if os.access("/run", os.W_OK) else "/tmp/course-test-uids")


def _status(status_file):
    """{field: value} of a /proc status file ({} where it is gone)."""
    try:
        lines = status_file.read_text().splitlines()
    except OSError:
        return {}
    return {name: value.split() for name, _, value in (line.partition(":") for line in lines)}


def _state(status):
    """The State letter of a _status, "X" (dead) where it has none."""
    return (status.get("State") or ["X"])[0]


def processes_of(uid):
    """The pids of the live processes whose real or effective user is `uid`: not zombies, but a
    process whose first thread ended while another runs is live (its status shows the first
    thread's Z: an adversarial review, 2026-11-28)."""
    found = []
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    for pid in pids:  # (not a glob of /proc: it raises when a process ends as it reads)
        status = _status(pathlib.Path("/proc", pid, "status"))
        if str(uid) not in status.get("Uid", [])[:2]:  # (real or effective)
            continue
        if _state(status) in ("Z", "X"):  # (its other threads, if any still run)
            tasks = pathlib.Path("/proc", pid, "task")
            try:
                threads = [name for name in os.listdir(tasks) if name.isdigit()]
            except OSError:
                threads = []
            if not any(_state(_status(tasks / name / "status")) not in ("Z", "X") for name in threads):
                continue
        found.append(int(pid))
    return found


def stop_every_process_of(uid, seconds):
    """Kills every process of `uid` until none is left, for up to `seconds`; whether none is. As that
    user (kill(-1) signals every process of its own at once, where one by one from a list misses a
    process that forks anew faster than the list is read: an adversarial review, 2026-11-28, left a
    fork-hopper of a test program graded with --syscalls off), and from the list too."""
    until = time.monotonic() + seconds
    while True:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(["kill", "-KILL", "-1"], user=uid, group=uid, extra_groups=[], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=10)
        for pid in processes_of(uid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if _none_left(uid, 0.2):
            return True
        if time.monotonic() > until:
            return False


def _none_left(uid, seconds):
    """Whether no process of `uid` is left within `seconds` (one killed a moment ago still exits)."""
    until = time.monotonic() + seconds
    while processes_of(uid):
        if time.monotonic() > until:
            return False
        time.sleep(0.05)
    return True


def release_test_user(ws):
    """At a grading's end: every process its test user still runs is stopped (a test program whose
    supervisor ctest killed at a time limit exits a moment later; the class check of 2026-11-28 had
    the worker's next grading find one), then its lock let go of."""
    if ws.test_user_lock is None:
        return
    uid = ws.test_user_held  # (also where the tests fell back to the grader's user)
    if not stop_every_process_of(uid, LEFTOVER_SECONDS):  # (the next grading's hold_test_user refuses it then)
        print(f"grading: uid {uid} still runs processes ({', '.join(map(str, processes_of(uid)[:5]))}) after "
              f"{LEFTOVER_SECONDS} s of killing them", file=sys.stderr)
    # The workspace closed to the user, whose next grading may be someone else's: a kept workspace
    # (--keep-work) stayed open to its group, and the next grading given that user read the last
    # one's solution through it (an adversarial review, 2026-11-28). prepare() opens it again to
    # the next grading's user where the workspace is reused.
    if ws.root.is_dir() and not ws.root.is_symlink():
        os.chown(ws.root, os.geteuid(), os.getegid())
        os.chmod(ws.root, 0o700)
        take_back_scratch(ws)
    os.close(ws.test_user_lock)
    ws.test_user_lock = None


LEFTOVER_SECONDS = 10  # how long a grading waits for a test user's leftover processes to end


def hold_test_user(ws, uid, wait=LEFTOVER_SECONDS):
    """Takes `uid` for this grading alone, for as long as this process lives (ws.test_user_lock): an
    exclusive lock on its file in _test_user_locks(), and no process of that user left running.
    Two gradings sharing a test user could look into each other's folders (an adversarial review,
    2026-11-28: two classes with one --test-uids, or a grade-submission beside a class). Raises
    ValueError where it is taken, or still runs a process after `wait` seconds."""
    folder = _test_user_locks()
    folder.mkdir(mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise ValueError(f"{folder} is not a folder of root's that only root may write: the test users' locks "
                         "cannot be kept there")
    fd = os.open(folder / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ValueError(f"uid {uid} is another grading's test user now: give each grading a test user of its "
                         "own") from None
    running = [] if _none_left(uid, wait) else processes_of(uid)
    if running:
        os.close(fd)
        raise ValueError(f"uid {uid} still runs processes ({', '.join(map(str, running[:5]))}): a test user must own none")
    ws.test_user_lock, ws.test_user_held = fd, uid


def account_of(number):
    """The user or group of this machine with this number ("user NAME", "group NAME"), or ""."""
    try:
        return f"user {pwd.getpwuid(number).pw_name}"
    except KeyError:
        pass
    try:
        return f"group {grp.getgrgid(number).gr_name}"
    except KeyError:
        return ""


def give_to_test_user(ws, folder, mode=0o700):
    """Makes `folder` (the scratch folder, its tmp, home and cache) the test user's, where there is one."""
    if ws.test_user:
        os.chown(folder, *ws.test_user)
        os.chmod(folder, mode)


def driver_device_files(dev=pathlib.Path("/dev")):
    """The GPU driver's device files that a test program opens, as KIND:PATH for confirm_test_user:
    /dev/nvidia* read and written (d:); of the MIG capabilities (/dev/nvidia-caps), read (f:), those
    the driver lets a group or everyone read. The others are the administrator's: on a GPU without
    MIG the driver makes nvidia-cap1 (configuring MIG) root's alone, 0400, and CUDA never opens it
    (2 x H200, 2026-11-28: checking it made every grading fall back to the grader's user)."""
    files = [f"d:{d}" for d in sorted(dev.glob("nvidia*")) if d.is_char_device()]
    for cap in sorted(dev.glob("nvidia-caps/*")):
        try:
            info = cap.stat()
        except OSError:
            continue
        if stat.S_ISCHR(info.st_mode) and info.st_mode & 0o044:
            files.append(f"f:{cap}")
    return files


# In sh (this Python may lie where the test user cannot reach it): for each KIND:PATH (r: read and
# enter or run, w: write and enter, d: read and write, f: read), the first folder on the way that
# the user may not enter, or the path itself, that it may not use.
_REACH_CHECK = r"""
for item in "$@"; do
  kind=${item%%:*}; path=${item#*:}
  case $kind in
    f) [ -r "$path" ] && continue ;;
    r) [ -r "$path" ] && [ -x "$path" ] && continue ;;
    w) [ -w "$path" ] && [ -x "$path" ] && continue ;;
    d) [ -r "$path" ] && [ -w "$path" ] && continue ;;
  esac
  rest=${path#/}; step=
  while [ -n "$rest" ]; do
    step=$step/${rest%%/*}
    case $rest in */*) rest=${rest#*/} ;; *) rest= ;; esac
    if [ -n "$rest" ] && [ ! -x "$step" ]; then echo "$step"; exit 1; fi
  done
  echo "$path"; exit 1
done"""


def unreachable_for(uid, gid, items):
    """The first path of `items` (KIND:PATH, as _REACH_CHECK takes them) that uid:gid cannot use, or
    the first folder on its way that it may not enter; "" where it can use them all."""
    try:
        done = subprocess.run(["/bin/sh", "-c", _REACH_CHECK, "sh", *items],
                              user=uid, group=gid, extra_groups=[], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return str(error)
    if done.returncode == 0:
        return ""
    return done.stdout.strip() or done.stderr.strip()[-200:] or f"(exit status {done.returncode})"


def confirm_test_user(ws, devices=None):
    """Before the tests: whether the test user can run the built test programs, write its scratch
    folder and open the GPU driver's device files (a folder on the way that only root may enter, a
    build of mode 0700, an umask of 077, devices of a group). Where it cannot, the test programs
    run as the grader (ws.test_user None), ws.test_user_note names the first path it could not
    use, and the scratch folder and its folders are the grader's again (take_back_scratch)."""
    if not ws.test_user:
        return
    uid, gid = ws.test_user
    programs = sorted(ws.build.glob("student_*_tests"))[:2]
    # The GPU driver's device files (a driver that makes them 0660 for a group would fail every GPU
    # test as the test user: an adversarial review, 2026-11-28), as the driver opens them.
    if devices is None:  # (a test gives its own)
        devices = driver_device_files()
    items = [f"r:{ws.build}", *[f"r:{p}" for p in programs], f"w:{ws.scratch / 'tmp'}",
             *[d if re.match(r"[rwdf]:", d) else f"d:{d}" for d in devices]]
    where = unreachable_for(uid, gid, items)
    if where:
        ws.test_user = None
        ws.test_user_note = f"the grader's: uid {uid} cannot reach {where} (the folders on the way must let others enter)"
        take_back_scratch(ws)


def take_back_scratch(ws):
    """The scratch folder and the folders made in it for the test user (tmp, home, CUDA's cache,
    records) become the grader's again, where the tests fall back to the grader's user: a test
    program runs in the sandbox without any capability, root's CAP_DAC_OVERRIDE too, so it can
    write only what its user owns. Found on 2 x H200 (2026-11-28): a class whose work folder was
    under a folder of mode 0700 fell back, and its programs, as root, could write no record, no
    temporary file: every batch stood in nothing and every case ran alone and crashed (0 of 83 on
    the CPU, 0 graded in 355 s on the GPUs). Nothing ran in them yet: only these folders change."""
    owner = (os.geteuid(), os.getegid())
    for folder in (ws.scratch, *(ws.scratch / name for name in ("tmp", "home", "cuda-cache", "records"))):
        if folder.is_dir() and not folder.is_symlink():
            os.chown(folder, *owner, follow_symlinks=False)


def confined(ws, *, write=(), read=()):
    """The command prefix that runs a command in the sandbox (empty when unconfined)."""
    if not ws.sandbox:
        return []
    command = [str(ws.launcher), "-r"]
    for path in read:
        command += ["-R", str(path)]
    for path in write:
        command += ["-w", str(path)]
    for path in ws.hidden:
        command += ["-h", str(path)]
    return command + ["--"]


def write_test_sandbox_args(ws, turn_files=()):
    """The options every test program's sandbox reads (-f sandbox.args): read the course copy,
    write the scratch folder, read the files `turn_files` (a class's GPU turn: the programs open
    them read-only and flock them, course/gpu_turn.h; writable, they would let two gradings'
    programs pass data through them), nothing of what is hidden."""
    # The test users' locks hidden too: a program as root (a grading without a test user) flocked
    # one and stalled a class that had them (an adversarial review, 2026-11-28).
    lines = ["-r", f"-R {ws.course}", f"-w {ws.scratch}", *[f"-R {t}" for t in turn_files],
             *[f"-h {h}" for h in ws.hidden], f"-h {_test_user_locks()}"]
    if ws.test_user:
        lines.append(f"-u {ws.test_user[0]}:{ws.test_user[1]}")
    if os.environ.get("COURSE_SANDBOX_NODE_PROC") == "1":  # (a way back, should a driver need the node's /proc)
        lines.append("-p")
    ws.syscall_log.unlink(missing_ok=True)
    if ws.syscalls in ("enforce", "learn"):
        lines.append(f"-s {ws.syscalls}:{ws.syscall_log}")
    ws.sandbox_args.write_text("\n".join(lines) + "\n")


def check_test_sandbox(ws):
    """Before the first test program: a shell started as they are (the same sandbox, user and
    folders; no system-call log) writes a file into each folder they write (records, tmp, home,
    CUDA's cache). Where it cannot, the grading stops with OSError, not graded: a grader's
    mistake must not be a student's zero. (2026-11-28: test programs that could write none of them
    crashed in every case, and a reference scored 0 of 83.)"""
    if not ws.sandbox:
        return
    folders = [ws.records, *(ws.scratch / name for name in ("tmp", "home", "cuda-cache"))]
    options = ws.root / "sandbox-check.args"
    options.write_text("".join(f"{line}\n" for line in ws.sandbox_args.read_text().splitlines()
                               if not line.startswith("-s ")))
    # (true, not ":": a special built-in's failed redirection ends the shell before the echo)
    script = ('for d in "$@"; do true 2>/dev/null >"$d/.sandbox-check" || { echo "$d"; exit 1; }; done; '
              'while read -r line; do case "$line" in *" /proc "*) last=$line;; esac; done </proc/self/mountinfo; '
              'case "$last" in *hidepid*) echo hidepid;; esac; [ -c /proc/locks ] && echo no-locks; true')
    try:
        done = subprocess.run([str(ws.launcher), "-f", str(options), "--", "/bin/sh", "-c", script, "sh",
                               *map(str, folders)], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=60)
        failed = done.returncode != 0
        why = (done.stdout.strip() or done.stderr.strip())[-300:]
        # (the last mount on /proc is the one the programs see: course-sandbox's, where it made one)
        said = done.stdout.split()
        ws.proc_note = ("the node's" if "hidepid" not in said or "no-locks" not in said
                        else "its own: no process of another user, no file lock of the node" if ws.test_user
                        else "its own, no file lock of the node, but the processes of the grader's user, whom the "
                             "programs run as")
    except (OSError, subprocess.SubprocessError) as error:
        failed, why = True, str(error)
    finally:
        for folder in folders:
            with contextlib.suppress(OSError):
                os.unlink(folder / ".sandbox-check")
    if failed:
        runs_as = f"uid {ws.test_user[0]}" if ws.test_user else "the grader's user"
        raise OSError(f"the test programs' sandbox ({runs_as}) cannot write {why or 'its folders'}: nothing was "
                      "graded (the grader's fault, not the submission's)")


def _syscall_names():
    """{number: name} of this machine's x86-64 system calls, from the kernel headers ({} without them)."""
    for header in ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"):
        try:
            text = pathlib.Path(header).read_text()
        except OSError:
            continue
        return {int(number): name for name, number in re.findall(r"#define __NR_(\w+)\s+(\d+)", text)}
    return {}


# The supervisor's lines of a refused act on a path, and what the report calls each.
_REFUSED_LINES = {
    "refused-write": "open for writing ",  # under /proc or /dev, refused by Landlock
    "refused-metadata": "change the metadata of ",  # fchmod or utimensat of a file outside the -w folders
    "refused-setid": "make a set-user-ID file ",  # an open that would have made a set-user-ID or set-group-ID file
}


def syscalls_outside(ws):
    """The system calls outside the sandbox's list that the test programs made (refused with
    enforce, let run with learn): ({name: count}, {name: [programs]}), from the supervisor's log."""
    try:
        # split("\n"), not splitlines(): that one splits at U+2028 and the like too, which a path in
        # the log may hold, a forged line after it (an adversarial review, 2026-11-28)
        lines = ws.syscall_log.read_text(errors="replace").split("\n")
    except OSError:
        return {}, {}
    names = _syscall_names()
    counts, programs = {}, {}
    for line in lines:  # "<number> <times> <command>" (course-sandbox's supervisor)
        kind, _, rest = line.partition(" ")
        if kind in _REFUSED_LINES:  # "<kind> <path> <command>"
            name = _REFUSED_LINES[kind] + rest.split(" ")[0]
            counts[name] = counts.get(name, 0) + 1
            continue
        number, _, rest = line.partition(" ")
        times, _, command = rest.partition(" ")
        if not number.isdigit() or not times.isdigit():
            continue
        name = names.get(int(number), f"syscall {number}")
        counts[name] = counts.get(name, 0) + int(times)
        program = pathlib.Path(command.split(" ", 1)[0]).name
        if program and program not in programs.setdefault(name, []):
            programs[name].append(program)
    return dict(sorted(counts.items(), key=lambda kv: -kv[1])), programs


def environment(ws, base=None):
    """The instructor's environment, without COURSE_* and CUDA_VISIBLE_DEVICES, with private
    temporary, home and cache folders in the scratch folder."""
    env = {k: v for k, v in (base or os.environ).items() if not k.startswith("COURSE_") and k != "CUDA_VISIBLE_DEVICES"}
    for name, folder in (("TMPDIR", "tmp"), ("HOME", "home"), ("CUDA_CACHE_PATH", "cuda-cache")):
        (ws.scratch / folder).mkdir(parents=True, exist_ok=True)
        give_to_test_user(ws, ws.scratch / folder)
        env[name] = str(ws.scratch / folder)
    return env


# What of the instructor's environment the test programs see (the build sees all of it): the
# names below, and those with these prefixes. The rest (tokens, cloud keys, a password) stays out
# of reach: a program read GH_TOKEN and AWS_SECRET_ACCESS_KEY from /proc/self/environ and could
# have printed them into its report (an adversarial review, 2026-11-28).
TEST_ENVIRONMENT = {"PATH", "LD_LIBRARY_PATH", "HOME", "TMPDIR", "TMP", "TEMP", "LANG", "LANGUAGE", "TZ", "TERM", "USER",
                    "LOGNAME", "SHELL", "PYTHONPATH", "PYTHONHOME"}
TEST_ENVIRONMENT_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "COURSE_", "CTEST_", "GTEST_")


def test_environment(env):
    """`env` (environment(), with the grader's COURSE_* settings) less what the test programs need not see."""
    return {k: v for k, v in env.items() if k in TEST_ENVIRONMENT or k.startswith(TEST_ENVIRONMENT_PREFIXES)}


# The scratch folder's cap (cap_scratch), in GiB: COURSE_SCRATCH_GIB in the grader's environment;
# 0 leaves it uncapped. Two by default: the references write a few megabytes (records, CUDA's
# cache), and a tmpfs holds what is written in memory, so a class of 8 at a time that all fill
# theirs takes 16 GiB at most.
DEFAULT_SCRATCH_GIB = 2
# Its files and folders at most (the references make a few dozen).
SCRATCH_INODES = 16384


def scratch_limit_bytes():
    """The scratch folder's cap in bytes (COURSE_SCRATCH_GIB), 0 for none."""
    text = os.environ.get("COURSE_SCRATCH_GIB", "").strip() or str(DEFAULT_SCRATCH_GIB)
    try:
        gib = float(text)
    except ValueError:
        raise ValueError(f"COURSE_SCRATCH_GIB={text!r}: a size in GiB (0: no cap)") from None
    return int(gib * 2**30) if gib > 0 else 0


def cap_scratch(ws):
    """Bounds what the test programs can write by construction: a file system of its own, a tmpfs
    of COURSE_SCRATCH_GIB (nosuid, nodev), mounted on the (new, empty) scratch folder. Found by an
    adversarial review (2026-11-28): fallocate in the scratch folder filled the disk that holds
    every grading's folder, and a classmate's passing program then left an empty record (judged
    Tampered). With its own file system a grading that fills it fails only its own tests. Needs
    the right to mount (root, as on the GPU machines); without it the folder stays on the disk,
    and ws.scratch_cap says why. Returns ws.scratch_cap."""
    limit = scratch_limit_bytes()
    if not limit:
        ws.scratch_cap = "not capped (COURSE_SCRATCH_GIB=0)"
    elif os.geteuid() != 0:
        ws.scratch_cap = "not capped: mounting a file system of its own needs root"
    else:
        # nr_inodes too: size bounds the data only, and empty files cost the node's memory (an
        # adversarial review, 2026-11-28: 300,000 empty files in a 1 MiB tmpfs took 383 MB of kernel
        # memory; the default allows some 16 million on a 128 GiB host).
        owner = f"uid={ws.test_user[0]},gid={ws.test_user[1]},mode=0700" if ws.test_user else "mode=0755"
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={limit},nr_inodes={SCRATCH_INODES},{owner},nosuid,nodev",
                               "course-scratch",
                               str(ws.scratch)], stdin=subprocess.DEVNULL, capture_output=True, text=True)
        ws.scratch_cap = (f"{limit / 2**30:g} GiB, {SCRATCH_INODES} files (a tmpfs of its own)" if done.returncode == 0 else
                          f"not capped: mount: {(done.stderr or done.stdout).strip()[:200]}")
    give_to_test_user(ws, ws.scratch)  # (a tmpfs made so already; a folder on the disk where none was mounted)
    return ws.scratch_cap


def _mount_points_under(folder):
    """The mount points at or under `folder` (this process's mount namespace), deepest first."""
    root = os.path.realpath(folder)
    points = []
    try:
        lines = pathlib.Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4:  # (mountinfo escapes a space, tab, newline and backslash in octal)
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point == root or point.startswith(root.rstrip("/") + "/"):
                points.append(point)
    return sorted(set(points), key=len, reverse=True)


def unmount_under(folder):
    """Detaches every file system mounted at or under `folder` (a grading's capped scratch folder),
    deepest first, and again while any is left (two stacked on one path); those it may not detach
    stay."""
    for _ in range(8):
        points = _mount_points_under(folder)
        if not points:
            return
        for point in points:
            subprocess.run(["umount", "-l", point], stdin=subprocess.DEVNULL, capture_output=True)


def remove_tree(folder):
    """Removes `folder` and all in it, however deep: a test program can make a tree of thousands of
    nested folders in its scratch folder in a second, on which shutil.rmtree raises RecursionError,
    ignore_errors or not (an adversarial review, 2026-11-28: the worker's next grading would fail).
    A file system mounted in it (cap_scratch) is detached first."""
    folder = pathlib.Path(folder)
    unmount_under(folder)
    try:
        shutil.rmtree(folder, ignore_errors=True)
    except RecursionError:
        pass
    if os.path.lexists(folder):
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(folder)], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def take(ws, submission, chapters):
    """Unpacks the submission and puts its starter files into the course copy (the handed-out
    ones first, for a reused workspace; a file whose content is already there keeps its build).
    Returns (taken, missing) of the graded chapters. Raises submission.Refused."""
    unpacked = ws.root / "submission"
    # Nothing of an earlier submission is left for this one to read.
    for folder in (unpacked, ws.scratch, ws.root / "tmp", ws.root / "home"):
        remove_tree(folder)
        folder.mkdir()
    cap_scratch(ws)  # a file system of its own, new for each submission
    # Nor its ctest logs and reports: a phase that does not run for this one (no case left to run
    # one by one) would otherwise leave the earlier submission's log in this one's ctest.log.
    # (ctest-every-gpu is a folder: the multi-GPU tests' own ctest on several GPUs, run_every_gpu.)
    for earlier in ws.root.glob("ctest-*"):
        if earlier.is_dir() and not earlier.is_symlink():
            remove_tree(earlier)
        else:
            earlier.unlink()
    git_sandbox = confined(ws, write=[unpacked], read=[pathlib.Path(submission).resolve()])
    # The starter files as the earlier submission left them: a file that this one hands in with
    # the same content keeps its time, so that its build stays valid (tools/mutate.py's class:
    # the chapter's other files do not compile again for each mutant).
    earlier = {}
    for relative in S.starter_files(ws.pristine):
        with contextlib.suppress(OSError):
            earlier[relative] = ((ws.course / relative).read_bytes(), (ws.course / relative).stat().st_mtime_ns)
    S.restore_starters(ws.pristine, ws.course)
    try:
        source = S.course_root_in(S.unpack(submission, unpacked, confine=git_sandbox))
        taken, missing = S.take_starters(ws.course, source, ws.course)
        for relative, (content, mtime_ns) in earlier.items():
            with contextlib.suppress(OSError):
                if (ws.course / relative).read_bytes() == content:
                    os.utime(ws.course / relative, ns=(mtime_ns, mtime_ns))
    except S.Refused as refusal:  # said relative to the submission, wherever it was unpacked
        text = str(refusal)
        for root in (str(unpacked / "repo"), str(unpacked), str(pathlib.Path(submission).absolute())):
            text = text.replace(root + "/", "").replace(root, pathlib.Path(submission).name)
        raise S.Refused(text) from None
    shutil.rmtree(unpacked, ignore_errors=True)  # student code reads only the clean copy
    return [t for t in taken if t.parts[1] in chapters], [m for m in missing if m.parts[1] in chapters]


def _take_one_of(paths, poll_seconds=0.5):
    """Waits until one of the lock files `paths` is free and takes it (a semaphore of
    len(paths)); returns its open file, which holds the lock until it is closed, and its index."""
    while True:
        for index, path in enumerate(paths):
            handle = open(path, "a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return handle, index
            except BlockingIOError:
                handle.close()
        time.sleep(poll_seconds)


# In a judge's build tree while it compiles (prebuild with `configured`): a grading that links it
# compiles its own files meanwhile and waits for this file to go before it links.
JUDGE_PENDING = "course-prebuilt.pending"
JUDGE_FAILED = "course-prebuilt.failed"


def prebuild(course_root, root, chapters, log_path, jobs, configured=None):
    """The judge compiled once for a class (cmake/CoursePrebuilt.cmake): the support library, the
    GoogleTest main and the graded chapters' tests, in a clean copy of the course (the course's own
    code only: unconfined). Returns its build tree, for build(prebuilt=...), and the seconds it took.
    With `configured` (a threading.Event), set once the tree is configured: from then until it has
    compiled, the tree holds JUDGE_PENDING, and gradings may build against it (build() waits for
    the judge before it links; JUDGE_FAILED if it did not compile)."""
    started = time.monotonic()
    ws = prepare(course_root, root, sandbox=False)
    ws.build.mkdir(exist_ok=True)
    pending, failed = ws.build / JUDGE_PENDING, ws.build / JUDGE_FAILED
    with open(log_path, "a") as out:
        def run(command):
            return subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=ws.course).returncode == 0
        try:
            if not run(["cmake", "--preset", "default", f"-DCOURSE_GRADED_CHAPTERS={';'.join(chapters)}"]):
                raise OSError(f"the class's judge did not configure (see {log_path})")
            if configured is not None:
                pending.touch()
                configured.set()
            if not run(["cmake", "--build", str(ws.build), "--target", "course_prebuilt", "-j", str(jobs)]):
                failed.touch()
                raise OSError(f"the class's judge did not build (see {log_path})")
        finally:
            pending.unlink(missing_ok=True)
            if configured is not None:
                configured.set()
    return ws.build, time.monotonic() - started


def _wait_for_the_judge(prebuilt, poll_seconds=0.2):
    """Waits while the judge `prebuilt` compiles (prebuild); returns whether it compiled."""
    while (prebuilt / JUDGE_PENDING).exists():
        time.sleep(poll_seconds)
    return not (prebuilt / JUDGE_FAILED).exists()


def build(ws, chapters, log_path, jobs, timeouts=None, env=None, build_locks=(), prebuilt=None):
    """Configures (once) and builds the graded chapters in a sandbox that may write only the build
    tree and the build's temporary folders. With `build_locks` (files), it first waits until it
    holds one of them: tools/grade-class builds at most two submissions per GPU at a time, so
    that a GPU's three gradings fall out of step and one builds while the others test. With
    `prebuilt` (a build tree of prebuild), the judge is linked from there, not compiled: the
    submission's own files compile while the judge may still compile, and the programs link once
    it has (the seconds waiting for it count as waiting to build).
    A build that holds the lock of index k runs at niceness 4 + 4k: the builds that start together
    finish one after another (the first one's tests start sooner, with every core it can use), and
    the tests, at niceness 0, have the CPU before any build (their host work can hold the GPU).
    (At 10 + 3k a class of 12 on the H100 was no faster, 2026-11-25: 243 and 246 s, against 234
    and 248 s at 4 + 4k.)
    Returns (built, seconds building, chapters that did not build, seconds waiting to build)."""
    env = dict(env or os.environ)
    env.update(TMPDIR=str(ws.root / "tmp"), HOME=str(ws.root / "home"))
    ws.build.mkdir(exist_ok=True)
    prefix = confined(ws, write=[ws.build, ws.root / "tmp", ws.root / "home"],
                      read=[ws.course, *([prebuilt] if prebuilt else [])])
    launcher = f"{ws.launcher};-f;{ws.sandbox_args};--" if ws.sandbox else ""
    options = [f"-DCOURSE_TEST_LAUNCHER={launcher}", f"-DCOURSE_TEST_REPORT_DIR={ws.records}",
               f"-DCOURSE_PREBUILT_DIR={prebuilt or ''}"]
    if timeouts:
        options += [f"-DCOURSE_CORRECTNESS_TIMEOUT={timeouts[0]}", f"-DCOURSE_PERF_TIMEOUT={timeouts[1]}"]
    waiting_since = time.monotonic()
    lock, index = _take_one_of(build_locks) if build_locks else (contextlib.nullcontext(), None)
    with lock:  # closing the file releases it
        waited = time.monotonic() - waiting_since
        started = time.monotonic()
        if index is not None:
            prefix = ["nice", "-n", str(4 + 4 * index), *prefix]
        built, judge_wait = _configure_and_build(ws, chapters, log_path, jobs, prefix, options, env, prebuilt)
        seconds = time.monotonic() - started - judge_wait
        waited += judge_wait
    failed = sorted({p.parent.name.split("-", 1)[1] for p in (ws.build / "course-build-status").glob("student-*/*.log")})
    return built, seconds, [c for c in failed if c in chapters], waited


def _configure_and_build(ws, chapters, log_path, jobs, prefix, options, env, prebuilt=None):
    """Returns (built, seconds waiting for the judge)."""
    with open(log_path, "a") as out:
        def run(command):
            return subprocess.run(prefix + command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ws.course)
        # One target for all the graded chapters (course_graded), so that make builds them side
        # by side: targets named one by one would be built one after another.
        graded = f"-DCOURSE_GRADED_CHAPTERS={';'.join(chapters)}"
        if run(["cmake", "--preset", "default", *options, graded]).returncode != 0:
            return False, 0.0
        judge_wait = 0.0
        if prebuilt is not None:
            if (pathlib.Path(prebuilt) / JUDGE_PENDING).exists():
                # The submission's files first (course_graded_objects), while the judge compiles.
                run(["cmake", "--build", str(ws.build), "--target", "course_graded_objects", "-j", str(jobs)])
            waiting_since = time.monotonic()
            judge_built = _wait_for_the_judge(pathlib.Path(prebuilt))
            judge_wait = time.monotonic() - waiting_since
            if not judge_built:
                out.write("grade-submission: the class's judge did not build (its judge-build.log says why)\n")
                return False, judge_wait
        built = run(["cmake", "--build", str(ws.build), "--target", "course_graded", "-j", str(jobs)]).returncode == 0
        return built, judge_wait


def _lock(path, mode, blocking=True):
    """Takes one GPU's lock in `mode` (fcntl.LOCK_SH or LOCK_EX) through its turnstile: an
    exclusive lock that waits holds the turnstile, so later shared ones queue behind it. Returns
    the open lock file, or None when `blocking` is false and the lock is busy."""
    turnstile = open(f"{path}.turnstile", "a")
    handle = open(path, "a")
    try:
        flags = 0 if blocking else fcntl.LOCK_NB
        fcntl.flock(turnstile, fcntl.LOCK_EX | flags)
        fcntl.flock(handle, mode | flags)
        return handle
    except BlockingIOError:
        handle.close()
        return None
    finally:
        turnstile.close()  # releases the turnstile


def check_lock_folder(folder):
    """Raises ValueError unless flock can lock a read-only file of `folder` exclusively. The test
    programs open the class's turn files there read-only (course/gpu_turn.h: a program holds none
    open for writing, so two gradings cannot pass data through them) and lock them exclusively
    to measure; on NFS flock is emulated with fcntl locks, and an exclusive one on a read-only
    descriptor fails (EBADF). One probe file, made, locked and removed."""
    probe = pathlib.Path(folder) / f"flock-probe-{os.getpid()}"
    probe.touch()
    try:
        with open(probe, "rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                raise ValueError(
                    f"the lock folder {folder} is on a file system where flock cannot lock a read-only file "
                    f"exclusively ({error.strerror or error}; NFS emulates flock with fcntl locks): the GPU turn "
                    f"files must be on a local file system; put the output folder (-o, which holds .locks) on a "
                    f"local disk") from None
    finally:
        probe.unlink(missing_ok=True)


@contextlib.contextmanager
def gpu_locks(lock_dir, gpus, shared=False):
    """Holds the locks of `gpus`: shared (tests that may run beside other gradings' shared tests)
    or exclusive (tests judged again alone: nothing else runs on those GPUs meanwhile). Several
    are taken all at once or not at all: holding one GPU idle while waiting for another would
    stall every grading that wants the first."""
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    paths = [pathlib.Path(lock_dir) / f"gpu-{gpu}.lock" for gpu in sorted(set(gpus), key=int)]
    held = []
    try:
        while not held:
            for path in paths:
                handle = _lock(path, mode, blocking=len(paths) == 1)
                if handle is None:
                    for taken in held:
                        taken.close()
                    held = []
                    _lock(path, mode).close()  # wait until the busy GPU is free, then try all again
                    break
                held.append(handle)
            else:
                break
        yield
    finally:
        for handle in held:
            handle.close()  # closing releases the lock


def test(ws, chapters, env, gpu=None, all_gpus=None, lock_dir=None, jobs=4, batches=True, batch_rounds=6,
         fail_fast=False, gpu_memory_budget_mib=None):
    """_test (below), with the GPU memory of this grading's programs watched from here (ws.gpu_memory,
    gpu_memory.GpuMemoryWatch): the most one held, and, with a budget (a class on a shared GPU),
    each program over it stopped."""
    env = test_environment(env)
    with M.GpuMemoryWatch(gpu_memory_budget_mib) as watch:  # this grader's programs (it runs one grading)
        outcome = _test(ws, chapters, env, gpu, all_gpus, lock_dir, jobs, batches, batch_rounds, fail_fast)
    ws.gpu_memory = watch
    return outcome


def _test(ws, chapters, env, gpu=None, all_gpus=None, lock_dir=None, jobs=4, batches=True, batch_rounds=6,
          fail_fast=False):
    """Runs the graded chapters' student tests: ctest unconfined (its reports out of reach of the
    tests), every test program in the sandbox (cmake/CourseTestList.cmake puts course-sandbox in
    front of it). Two phases on one GPU: first the tests that may run side by side (`jobs` at a
    time; with a lock folder, beside other gradings' such tests, holding the GPU's lock shared),
    then those labelled `alone` (they time, count or measure the whole device), four at a time.
    These take turns through a lock file (COURSE_GPU_LOCK, course/gpu_turn.h): each program holds
    it shared from its start and exclusively only while it measures, so that one program's start,
    inputs, correctness checks and exit overlap another's measurement. With `gpu` and a lock
    folder (tools/grade-class), that file is the GPU's, in the lock folder: every program of every
    grading on that GPU takes its turns with it, the side-by-side ones too, so that a measurement
    has the GPU to itself while the other gradings' tests run between measurements; the two
    phases are then one (`jobs` + 2 at a time, holding the GPU's lock shared), so that this
    grading's measurements need not wait for its side-by-side tests to end. Without them, the
    file is this grading's and the second phase holds the GPU's lock exclusively. With `gpu`, the
    tests see that GPU alone; the multi-GPU tests see every GPU of `all_gpus` (this grading's
    first). With the class's turn files they take turns through every GPU's (course/gpu_turn.h: a
    turn on several files), holding every GPU's lock shared, beside this grading's other tests
    from the start and beside the other gradings' tests: exclusive locks on every GPU made each
    grading wait for a moment when no other grading ran anything, and drained the class (2 x H100,
    2026-11-26: 16 of a class of 25 graded after 553 s, where one H100 graded 24 in 556 s). With
    batches, their cases run in one program (Batch.every-gpu, run_every_gpu), the cases that did
    not stand then one by one. With
    one GPU in all, they are part of the one phase, taking turns like the others. Without the
    class's turn files, they run last, holding every GPU's lock exclusively.

    With `batches` (the default), each phase runs rounds of batches, then one pass one by one. The
    first round runs each program once per group of cases that share their properties
    (COURSE_TEST_BATCHES, a batch), which saves the GPU a CUDA context per case; of a batch only the passes up to its first case that did not
    pass stand (results.judge_batch). Up to `batch_rounds` rounds of batches run (the cases the
    rounds before left, as new batches; a batch's cases go on to another round unless it settled
    fewer than two cases, judged or sent to run alone, in each of the last two rounds: one by one
    then costs no more programs). The last pass runs every other case on its own, one process each
    (COURSE_TEST_ONLY), exactly as without batches: those that did not stand where they failed.
    With `fail_fast` (tools/mutate.py: a mutant needs one failed test to be killed, not a grade),
    the tests that may run side by side run before those labelled `alone` also with the class's
    turn file, and nothing more runs once a failure stands (one that a neighbour could not have
    caused: results.shared_fault); the cases left are not graded. Not for grades.
    Returns (results, seconds testing, seconds waiting for the GPU, {phase: seconds})."""
    class_turns = lock_dir is not None and gpu is not None
    turns = pathlib.Path(lock_dir) / f"gpu-{gpu}.turn" if class_turns else ws.scratch / "gpu-turn.lock"
    every_gpu = [g for g in (all_gpus or gpu).split(",") if g] if gpu is not None else []
    # Every GPU's turn file, in the GPUs' order (every program takes them in the same order): the
    # multi-GPU tests take turns through all of them.
    every_turn = [pathlib.Path(lock_dir) / f"gpu-{g}.turn" for g in sorted(set(every_gpu), key=int)] if class_turns else []
    # The context turn's slots (course/gpu_turn.h: that many programs make or end their contexts at
    # once): COURSE_CONTEXT_SLOTS=2 or 3 in the grader's environment makes the others (a program never
    # does). One by default: three were not faster on the GPU yet (2026-11-27).
    slots_text = os.environ.get("COURSE_CONTEXT_SLOTS", "1").strip() or "1"
    if not slots_text.isdigit():
        raise ValueError(f"COURSE_CONTEXT_SLOTS={slots_text!r}: a number of context slots is 1, 2 or 3")
    slots = max(1, min(3, int(slots_text)))
    ends = (".gate", ".queue", ".context", *(f".context-{n}" for n in range(1, slots)))
    turn_files = [file for base in (every_turn or [turns]) for file in (base, *(base.with_name(base.name + end) for end in ends))]
    # The context turn of the programs of several GPUs (course/gpu_turn.h: they make their first
    # contexts one at a time among themselves, not in every GPU's context turn at once, where they
    # starved: a class of 16 on 2 x H200, 2026-11-28, idled both GPUs for minutes while some 60
    # programs waited, and the CPU model ends none of 12 programs of both GPUs in 30 s without it).
    # The pair gate (their priority for turns) only with COURSE_GPU_TURN_PRIORITY=1 in the grader's
    # environment: without it those programs take their turns on every GPU at once only. Off by
    # default: on 2 x H100 (2026-11-27) a class of 12 references took 414 s with the priority
    # against 354 s without (stop 54), and an adversarial review found that a program holding the
    # pair gate held back every GPU's measurements.
    if len(every_turn) > 1:
        turn_files.append(pathlib.Path(lock_dir) / "gpu-pair.context")
        if os.environ.get("COURSE_GPU_TURN_PRIORITY", "0") == "1":
            turn_files.append(pathlib.Path(lock_dir) / "gpu-pair.gate")
    if class_turns:  # made here, so that the sandbox need only let the programs read these (course/gpu_turn.h:
        # they open every turn file read-only and make none in a class)
        if any("," in str(base) for base in every_turn):
            raise ValueError(f"the lock folder {lock_dir} has a comma in its path: a turn on several GPUs names them with commas")
        for path in turn_files:
            path.touch()
        for base in every_turn:  # slots left by a class graded with more, in this folder: none now
            for n in range(slots, 3):
                base.with_name(f"{base.name}.context-{n}").unlink(missing_ok=True)
        if len(every_turn) > 1 and os.environ.get("COURSE_GPU_TURN_PRIORITY", "0") != "1":
            # A folder where the pair gate would be: no program can open one as its gate, in a
            # sandbox or out of one (a program of several GPUs would otherwise make it).
            try:
                (pathlib.Path(lock_dir) / "gpu-pair.gate").mkdir(exist_ok=True)
            except FileExistsError:  # a file: a class graded with the priority before, in this folder
                pass
    if ws.sandbox:
        write_test_sandbox_args(ws, turn_files if class_turns else [])
    R.clear_reports(ws.records)
    give_to_test_user(ws, ws.records)  # (made by the grader: the test programs write their records there)
    check_test_sandbox(ws)
    started = time.monotonic()
    only = "^student\\.(" + "|".join(c.replace("-", "\\-") for c in chapters) + ")\\."
    properties = R.test_properties(ws.build, env=env, cwd=ws.course)
    selected = re.compile(only)
    turns = str(turns)
    locks = [gpu] if gpu is not None else []
    # On a machine of one GPU the multi-GPU tests see only this grading's GPU: with the class's
    # turn file they take turns like the others (holding the GPU's lock exclusively instead would
    # wait for every other grading's phase to end, and hold up their next ones).
    one_gpu = class_turns and every_gpu == [str(gpu)]
    graded, waited, seconds = [], 0.0, {}

    def run(phase, selection, visible, phase_locks, shared, phase_jobs, turn_lock=None, pass_env=None, tests=only,
            test_dir=None, beside_others=False):
        """One ctest run, holding the GPU locks; returns its results (none when ctest wrote no report).
        `test_dir` (default: the build) is where ctest starts and keeps its logs: one that runs beside
        another has its own (a CTestTestfile.cmake that takes the build's tests), and its wait for the
        GPU locks (`beside_others`) is not this grading's: the other phases go on meanwhile."""
        test_dir = test_dir or ws.build
        nonlocal waited
        junit = ws.root / f"ctest-{phase.replace(' ', '-')}.xml"
        junit.unlink(missing_ok=True)
        (ws.root / f"ctest-{phase.replace(' ', '-')}.log").unlink(missing_ok=True)
        phase_env = dict(env, **(pass_env or {}))
        if visible is not None:
            phase_env["CUDA_VISIBLE_DEVICES"] = visible
        if turn_lock:
            phase_env["COURSE_GPU_LOCK"] = turn_lock
        lock = gpu_locks(lock_dir, phase_locks, shared) if (lock_dir and phase_locks) else contextlib.nullcontext()
        waiting_since = time.monotonic()
        with lock:
            if not beside_others:
                waited += time.monotonic() - waiting_since
            phase_started = time.monotonic()
            # A batch's output is that of all its cases; each passed case's part goes into the report.
            subprocess.run(["ctest", "--test-dir", str(test_dir), *selection, "-R", tests, "-j", str(phase_jobs),
                            "--output-junit", str(junit), "--test-output-size-passed", str(1 << 22),
                            # A flood of output keeps its head and its end (GoogleTest's verdict).
                            "--test-output-size-failed", str(1 << 22), "--test-output-truncation", "middle"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=phase_env,
                           cwd=ws.course,  # (no terminal of the grader's reaches a test program)
                           preexec_fn=R.dies_with_the_grader)
            seconds[phase] = round(time.monotonic() - phase_started, 1)
        # ctest's log of the phase (every program's output; tools/profile-tests.py reads it).
        with contextlib.suppress(OSError):
            shutil.copyfile(pathlib.Path(test_dir) / "Testing" / "Temporary" / "LastTest.log",
                            ws.root / f"ctest-{phase.replace(' ', '-')}.log")
        if not junit.exists():
            if phase.startswith("side-by-side"):
                raise OSError("ctest wrote no report")
            return []
        return R.read_junit(junit, properties, reports=ws.records)

    # With the class's turn file every program takes turns through it, those labelled `alone`
    # too (exclusive only while they measure): one phase runs them all, so that the measurements
    # need not wait for the side-by-side tests to end. Otherwise two phases, as above. Each phase:
    # (name, ctest selection, GPU lock shared, jobs, turn file, whether it runs the `alone` tests
    # of the second pass: None for both kinds).
    # On a machine of one GPU, the multi-GPU tests join that phase.
    if class_turns and fail_fast:  # the cheap tests first, each phase in the class's turns
        phases = [("side-by-side", ["-L", "^student$", "-LE", "^alone$" if one_gpu else "^(alone|multi-gpu)$"], True,
                   max(4, jobs) + 2, turns, False),
                  ("alone", ["-L", "^student$", "-L", "^alone$", *([] if one_gpu else ["-LE", "^multi-gpu$"])], True,
                   max(4, jobs) + 2, turns, True)]
    elif class_turns:
        phases = [("side-by-side and alone", ["-L", "^student$", *([] if one_gpu else ["-LE", "^multi-gpu$"])], True,
                   max(4, jobs) + 2, turns, None)]
    else:
        side_by_side = ["-L", "^student$", "-LE", "^(alone|multi-gpu)$" if gpu is not None else "^alone$"]
        alone = ["-L", "^student$", "-L", "^alone$", *(["-LE", "^multi-gpu$"] if gpu is not None else [])]
        phases = [("side-by-side", side_by_side, True, max(4, jobs), None, False),
                  ("alone", alone, False, 4, turns, True)]
    considered = set()  # the suspects judge_shared_faults_alone has seen (judged again, or left standing)

    several_gpus = gpu is not None and not one_gpu
    # The tests that use every GPU see this grading's first (a test of one device runs there).
    every_visible = ",".join([str(gpu), *[g for g in every_gpu if g != str(gpu)]]) if gpu is not None else None
    every = EveryGpu(every_visible, every_gpu, ",".join(str(t) for t in every_turn),
                     lambda name: "multi-gpu" in properties.get(name, ([], 0))[0])
    # With the class's turn file, a batch holds every case of a program that runs with the same
    # hardware queues (the multi-GPU ones too on a machine of one GPU; on several, they make a
    # batch of their own, run_every_gpu's): each measures in its own exclusive turn, whatever it
    # runs beside (cmake/CourseTestList.cmake, COURSE_TEST_BATCHES).
    batch_mode = ("queues-one-gpu" if one_gpu else "queues") if class_turns else "1"
    multi_gpu_selection = ["-L", "^student$", "-L", "^multi-gpu$"]

    def run_every_gpu(phase_jobs, test_dir=None, beside_others=False):
        """The tests that use every GPU, with the class's turn files on several GPUs: with batches,
        their cases in one program (Batch.every-gpu: one context on each GPU for them all), whose
        verdicts stand as any batch's (results.judge_batch), and the cases that did not stand then
        one by one; without, one program each."""
        if not batches:
            return run("multi-gpu", multi_gpu_selection, every.visible, every.gpus, True, phase_jobs, every.turns,
                       test_dir=test_dir, beside_others=beside_others)
        batch_env = {"COURSE_TEST_BATCHES": batch_mode}
        batch_queues = {}
        in_batch = {b: cases for b, cases in R.batch_cases(ws.build, env=dict(env, **batch_env), cwd=ws.course,
                                                          queues=batch_queues).items()
                    if selected.match(b) and b.endswith(EVERY_GPU_BATCH)}
        for name in in_batch:  # (no record of an earlier grading's may stand)
            R.remove_report(ws.records, name)
        results, one_by_one = [], []
        for result in run("multi-gpu batch", multi_gpu_selection, every.visible, every.gpus, True, phase_jobs,
                          every.turns, batch_env, test_dir=test_dir, beside_others=beside_others):
            if result.name in in_batch:
                stood, again, alone = R.judge_batch(result, in_batch[result.name], properties, ws.records,
                                                    batch_queues.get(result.name))
                results += stood
                one_by_one += [*again, *alone]
            else:  # never batched: the extra runs (another CUDA_VISIBLE_DEVICES), a case of its own
                results.append(result)
        ws.run_alone_every_gpu = len(one_by_one)
        if one_by_one:
            listing = ws.root / "every-gpu-one-by-one.txt"  # (not one-by-one.txt: this may run beside)
            listing.write_text("".join(f"{case}\n" for case in one_by_one))
            wanted = set(one_by_one)
            results += [r for r in run("multi-gpu one by one", [*multi_gpu_selection, "-E", "\\.CodePolicy\\."],
                                       every.visible, every.gpus, True, phase_jobs, every.turns,
                                       {"COURSE_TEST_ONLY": str(listing)}, test_dir=test_dir,
                                       beside_others=beside_others)
                        if r.name in wanted]
        return results

    # With the class's turn files on several GPUs, the tests that use every GPU run beside this
    # grading's other tests, from the start: they wait for turns on every GPU (a measurement on
    # either one makes them yield), and run after the others they added 42-139 s to each grading
    # of a class of 25 on 2 H100s (2026-11-26). Their ctest has a folder of its own for its logs.
    beside = {"results": [], "error": None}
    multi_gpu_thread = None
    if several_gpus and class_turns and not fail_fast:
        every_dir = ws.root / "ctest-every-gpu"
        every_dir.mkdir(exist_ok=True)
        (every_dir / "CTestTestfile.cmake").write_text(f"subdirs({json.dumps(str(ws.build))})\n")

        def run_multi_gpu():
            try:
                beside["results"] = run_every_gpu(max(4, jobs), test_dir=every_dir, beside_others=True)
            except BaseException as error:  # raised again where the thread is joined
                beside["error"] = error
        multi_gpu_thread = threading.Thread(target=run_multi_gpu, name="multi-gpu tests")
        multi_gpu_thread.start()

    def failure_stands():
        """With fail_fast: whether a verdict so far is a failure that stands: one that no neighbour
        could have caused, or one such (a time limit: a kernel that never ends) judged again with
        the GPU to itself, then and there, that failed again. Each phase's new suspects are judged
        again: once was not enough (a class of mutants on 2 H100s, 2026-11-27: the controls, the
        unchanged references, lost a perf test and a counted one in the phase after the first
        judging again, and a mutant would have been killed so by its neighbours)."""
        nonlocal graded
        if not fail_fast:
            return False
        if class_turns and any(r.outcome == "failed" and R.shared_fault(r) and r.name not in considered
                               for r in graded):
            graded = judge_shared_faults_alone(ws, graded, run, gpu, locks, turns, considered=considered)
        return any(r.outcome == "failed" and (not R.shared_fault(r) or not class_turns or r.name in considered)
                   for r in graded)

    def runs_in(is_alone, cases):
        """Whether a phase (that runs the tests labelled `alone`, or not, or both: None) runs any of `cases`."""
        return any(is_alone is None or ("alone" in properties.get(c, ([], 0))[0]) == is_alone for c in cases)

    if batches:
        judged, at_once, first_cases = set(), set(), []
        few_before = set()  # the batches (by group) that settled fewer than two cases last round
        left_out = ws.root / "left-out.txt"
        # Rounds of batches: each runs again, as new batches, the cases of the rounds before
        # that did not run (a batch's cases after its first failure), but a case that failed
        # after others or under other hardware queues than its own, and every case of a batch
        # that crashed, hung or disagreed with its record (nothing of it stood): these, and what
        # the last round left, run one by one (results.judge_batch).
        for round_number in range(1, max(1, batch_rounds) + 1):
            again = round_number > 1
            batch_env = {"COURSE_TEST_BATCHES": batch_mode}
            if again:
                left_out.write_text("".join(f"{case}\n" for case in sorted(judged | at_once)))
                batch_env["COURSE_TEST_LEAVE_OUT"] = str(left_out)
            batch_queues = {}
            in_batches = {b: cases for b, cases in R.batch_cases(ws.build, env=dict(env, **batch_env), cwd=ws.course,
                                                                queues=batch_queues).items()
                          if selected.match(b) and not b.endswith(EVERY_GPU_BATCH)}  # (run_every_gpu's)
            if not again:
                first_cases = [case for cases in in_batches.values() for case in cases]
            elif not in_batches:
                break
            # (A first round without batches still runs: the tests that are never batched, such as
            # Build.ListsItsTests of a program that could not list its cases.)
            # The rounds after the first share their batches' names: no record of an earlier
            # round may stand for a program that left none.
            for name in in_batches:
                R.remove_report(ws.records, name)
            settled = {}  # {batch: the cases it settled this round, judged or sent to run alone}
            label = {1: "batches", 2: "batches again"}.get(round_number, f"batches round {round_number}")
            # A later round runs its batches alone (the other tests ran in the first), in the
            # phases they belong to.
            for phase, selection, shared, phase_jobs, turn_lock, is_alone in phases:
                if again and not runs_in(is_alone, [c for cases in in_batches.values() for c in cases]):
                    continue
                if failure_stands():
                    break
                for result in run(f"{phase} {label}", selection, gpu, locks, shared,
                                  phase_jobs, turn_lock, batch_env, only + "Batch\\." if again else only):
                    if result.name in in_batches:
                        stood, _, alone = R.judge_batch(result, in_batches[result.name], properties, ws.records,
                                                        batch_queues.get(result.name))
                        stood = [r for r in stood if r.name not in judged]  # (each case judged once)
                        graded += stood
                        judged.update(r.name for r in stood)
                        at_once.update(alone)
                        settled[result.name] = len(stood) + len(alone)
                    elif not again:  # a test that is never batched (Build.*, CodePolicy, several GPUs)
                        graded.append(result)
            if all(case in judged or case in at_once for case in first_cases) or failure_stands():
                break
            # A batch that settled fewer than two cases in each of two rounds in a row (a first
            # case that failed, and nothing after it) has the rest of its cases run one by one:
            # another round would most likely cost as many programs, one round at a time. One
            # such round alone does not stop it (a perf case that failed first under other
            # queues, then the correctness cases after it: one more batch judges them all).
            few = {b.removesuffix("-rest") for b in in_batches if settled.get(b, 0) < 2}
            for batch, cases in in_batches.items():
                if batch.removesuffix("-rest") in few & few_before:
                    at_once.update(c for c in cases if c not in judged)
            few_before = few
        one_by_one = [] if failure_stands() else [case for case in first_cases if case not in judged]
        listing = ws.root / "one-by-one.txt"
        listing.write_text("".join(f"{case}\n" for case in one_by_one))
        ws.run_alone = len(one_by_one)
        if one_by_one:
            for phase, selection, shared, phase_jobs, turn_lock, is_alone in phases:
                if runs_in(is_alone, one_by_one) and not failure_stands():
                    # (The code policy's tests are listed whatever COURSE_TEST_ONLY says: they ran.)
                    wanted = set(one_by_one)
                    graded += [r for r in run(f"{phase} one by one", [*selection, "-E", "\\.CodePolicy\\."], gpu,
                                              locks, shared, phase_jobs, turn_lock, {"COURSE_TEST_ONLY": str(listing)})
                               if r.name in wanted]
    else:
        for phase, selection, shared, phase_jobs, turn_lock, _ in phases:
            if not failure_stands():
                graded += run(phase, selection, gpu, locks, shared, phase_jobs, turn_lock)
    if multi_gpu_thread is not None:
        multi_gpu_thread.join()
        if beside["error"] is not None:
            raise beside["error"]
        graded += beside["results"]
    elif several_gpus and class_turns and not failure_stands():
        graded += run_every_gpu(max(4, jobs) + 2)
    if class_turns:
        graded = judge_shared_faults_alone(ws, graded, run, gpu, locks, turns, every if several_gpus else None,
                                           considered=considered)
    if several_gpus and not class_turns and not failure_stands():
        graded += run("multi-gpu", multi_gpu_selection, ",".join(every_gpu), every_gpu, False, 4)
    return graded, time.monotonic() - started - waited, waited, seconds


# The batch of a class on several GPUs that holds the tests that use every GPU
# (cmake/CourseTestList.cmake, COURSE_TEST_BATCHES=queues): run_every_gpu's, not the rounds'.
EVERY_GPU_BATCH = ".Batch.every-gpu"

# The tests that use every GPU (label multi-gpu) and how they run: the GPUs they see, the GPU
# locks they hold and the turn files they take turns through (comma-separated, course/gpu_turn.h).
EveryGpu = collections.namedtuple("EveryGpu", "visible gpus turns is_multi")


REJUDGE_AT_MOST = 4


def judge_shared_faults_alone(ws, graded, run, gpu, locks, turns, every=None, considered=None):
    """A test that failed in a way a neighbour could have caused (results.shared_fault: its time
    limit, a stop for holding a measurement up, out of memory, a failed launch) while other
    gradings shared the GPU is run once more, on its own, holding the GPU's lock exclusively: no
    other grading's program runs on that GPU meanwhile (their phases hold it shared), so what it
    gets then is its own verdict, and that one counts. The names go to ws.rejudged (the report says
    which tests were judged again).
    At first at most REJUDGE_AT_MOST of them, spread over the list, side by side. When there are
    more and any of those failed so again alone, the submission caused them itself (an endless
    kernel, a loop on the host), and judging the rest again would hold the GPU from the class for
    their time limits. When none did, a neighbour caused them (a class beside an endless kernel,
    2026-11-26: an untouched starter's 29 quick failures became time limits), and the rest are
    judged alone too. With `every` (EveryGpu: a class on several GPUs), the tests that use every
    GPU are judged again holding every GPU's lock exclusively. With `considered` (a set, kept by
    the caller across calls), only the suspects not in it are looked at, and they join it: a
    grading that judges again after each phase judges each test again at most once, and
    ws.rejudged gathers them all. A test skipped for want of free device memory (results.MEMORY_SKIP)
    is judged again alone too, always: other gradings' programs held that memory."""
    suspects = [r.name for r in graded if R.shared_fault(r) and (considered is None or r.name not in considered)]
    if considered is None:
        ws.rejudged = []
    else:
        considered.update(suspects)
    if not suspects:
        return graded
    # Skips for want of free memory are no fault of the submission's: each is judged again, and
    # none counts in the sample below.
    skipped = {r.name for r in graded if r.outcome == "skipped"}
    again = {}
    if any(name in skipped for name in suspects):
        again.update(_judge_alone(ws, [name for name in suspects if name in skipped], run, gpu, locks, turns, every))
    faults = [name for name in suspects if name not in skipped]
    # With COURSE_REJUDGE_PERF=turn in the grader's environment and the class's turn files, a perf
    # shortfall (and nothing worse) is judged again holding the GPU's turn exclusively from its
    # program's start to its end, beside the other gradings' phases, rather than after they have
    # all ended: each such judging drained the GPU of the whole class (2 x H100, 2026-11-27: 31-46 s
    # of waiting per reference for a 3 s test). Off by default until an A/B on the GPU.
    at_turn = set()
    if os.environ.get("COURSE_REJUDGE_PERF", "") == "turn" and gpu is not None and turns is not None:
        at_turn = {r.name for r in graded if r.name in faults and R.perf_shortfall_only(r)}
    if faults:
        step = max(1, len(faults) // REJUDGE_AT_MOST)
        sample = faults[::step][:REJUDGE_AT_MOST]
        sampled = _judge_alone(ws, sample, run, gpu, locks, turns, every, at_turn)
        again.update(sampled)
        rest = [name for name in faults if name not in sampled]
        if rest and len(sampled) == len(sample) and not any(R.shared_fault(r) for r in sampled.values()):
            again.update(_judge_alone(ws, rest, run, gpu, locks, turns, every, at_turn))
    ws.rejudged = sorted(set(ws.rejudged) | set(again))
    return [again.get(r.name, r) for r in graded]


def _judge_alone(ws, names, run, gpu, locks, turns, every=None, at_turn=frozenset()):
    """{name: result} of `names` run again, side by side, holding the GPU's lock exclusively (those
    that use every GPU, with `every`, holding every GPU's); those in `at_turn` instead holding it
    shared, beside the other gradings, each program in the GPU's exclusive turn from its start to
    its end (COURSE_GPU_ALONE=1: course/settings.h, gpu_alone)."""
    listing = ws.root / "alone-again.txt"
    on_every_gpu = [name for name in names if every is not None and every.is_multi(name)]
    groups = [("again at the turn", [n for n in names if n in at_turn and n not in on_every_gpu], gpu, locks, turns, True),
              ("again alone", [n for n in names if n not in at_turn and n not in on_every_gpu], gpu, locks, turns, False)]
    if on_every_gpu:
        groups.append(("again alone on every GPU", on_every_gpu, every.visible, every.gpus, every.turns, False))
    again = {}
    for phase, group, visible, group_locks, group_turns, beside in groups:
        if not group:
            continue
        listing.write_text("".join(f"{name}\n" for name in group))
        wanted = set(group)
        phase_env = {"COURSE_TEST_ONLY": str(listing), **({"COURSE_GPU_ALONE": "1"} if beside else {})}
        again.update({r.name: r for r in run(phase, ["-L", "^student$", "-E", "\\.CodePolicy\\."], visible, group_locks,
                                             beside, min(len(group), 8), group_turns, phase_env)
                      if r.name in wanted})
    return again

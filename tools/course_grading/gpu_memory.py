"""How much GPU memory a grading's test programs hold, watched from outside them, and a budget.

While a grading's tests run, GpuMemoryWatch reads the driver's list of processes on the GPUs
(`nvidia-smi --query-compute-apps`, twice a second) and keeps, for the programs of this grading
(the descendants of the grader's own process, which runs one grading: a test program can
rewrite its command line, not its parent), the most memory one of them held. With a budget (a
class on a shared GPU: tools/grade-class), a program over it is stopped (SIGKILL) then and there:
the memory it took is given back to the other gradings on that GPU within a sample, its test
fails as a crash, and the grading's report names the stop. The watch runs in the grader, which
runs no submission code: nothing a test program does can change what it saw.
"""
import os
import signal
import subprocess
import threading
import time

MIB_PER_GIB = 1024


def parse_sample_line(line):
    """(pid, MiB) of a line of `nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits`,
    or None for anything else (a blank line, "[N/A]" where the driver does not say)."""
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return int(parts[0]), int(parts[1])


def command_line(pid):
    """A process's command line as one string ("" when it is gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def parent_of(pid):
    """A process's parent's pid (None when it is gone or unreadable). The command's name in
    /proc/PID/stat is in parentheses and may hold anything, ")" too: the fields after the last
    ")" are the kernel's."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


def descends_from(pid, root):
    """Whether `root` is among pid's ancestors (a process is not its own descendant)."""
    seen = set()
    while pid and pid not in seen and pid != 1:
        seen.add(pid)
        pid = parent_of(pid)
        if pid == root:
            return True
    return False


class GpuMemoryWatch:
    """A context manager: while inside, samples the GPU memory of the programs that descend from
    `root_pid` (default: this process, a grader that runs one grading). peak_mib: the most one held; stopped: [(pid, MiB,
    program)] of those stopped for holding more than budget_mib (None: no budget). `sampler` (for
    the tests): a command that prints sample lines, instead of nvidia-smi."""

    def __init__(self, budget_mib=None, interval_ms=500, sampler=None, kill=os.kill, root_pid=None):
        self.root_pid = root_pid if root_pid is not None else os.getpid()
        self.budget_mib = budget_mib
        self.sampler = sampler or ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits",
                                   f"-lms={interval_ms}"]
        self.kill = kill
        self.peak_mib = 0
        self.stopped = []
        self.available = True
        self._process = None
        self._thread = None

    def _program(self, pid):
        """The program's command line if it is this grading's, else "". Asked again at every
        sample (no cache): a pid that ends can be given to a classmate's program."""
        if not descends_from(pid, self.root_pid):
            return ""
        return command_line(pid) or f"pid {pid}"

    def see(self, line):
        """Takes one sample line into account (and stops its program if it is over the budget)."""
        sample = parse_sample_line(line)
        if not sample:
            return
        pid, mib = sample
        program = self._program(pid)
        if not program:
            return
        self.peak_mib = max(self.peak_mib, mib)
        if self.budget_mib is not None and mib > self.budget_mib and pid not in {p for p, _, _ in self.stopped}:
            try:
                self.kill(pid, signal.SIGKILL)
            except OSError:
                return  # it ended by itself
            self.stopped.append((pid, mib, program))

    def _read(self):
        for line in self._process.stdout:
            self.see(line)

    def __enter__(self):
        try:
            self._process = subprocess.Popen(self.sampler, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            self.available = False
            return self
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._process:
            time.sleep(0.05)  # (a last sample of a program that has just ended adds nothing)
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
            self._thread.join(timeout=5)
        return False

    def notes(self):
        """The report's line about what the watch stopped (none when it stopped nothing)."""
        if not self.stopped:
            return []
        held = sorted(mib for _, mib, _ in self.stopped)
        programs = sorted({os.path.basename(program.split()[0]) for _, _, program in self.stopped})
        amount = f"{held[0] / MIB_PER_GIB:.1f}" + (f"-{held[-1] / MIB_PER_GIB:.1f}" if held[-1] != held[0] else "")
        return [f"Stopped {len(held)} test program{'s' if len(held) != 1 else ''} for holding {amount} GiB of GPU "
                f"memory, over the class's budget of {self.budget_mib / MIB_PER_GIB:.1f} GiB per program (their tests "
                f"fail as crashes): {', '.join(programs)}"]

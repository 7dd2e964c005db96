"""ctest's results, read once and reported every way the course needs.

A test's name is <role>.<chapter>.<Suite>.<Case>[.<variant>]. Its kind, from its labels (set by
cmake/CourseTestList.cmake) or else from its suite name: build (Build.*), rule (CodePolicy),
perf, technique, correctness; stretch tests are optional (bonus points).

A test of a chapter's program passes only when two records agree: ctest's (the exit status) and
GoogleTest's own record of the case (the XML file the program writes when its tests end,
cmake/CourseTestList.cmake). Skipped means exit status 77 and a record that says skipped, with
the record's reason. Code under test runs in the same process and could end it early with any
status; it cannot make GoogleTest write a record of a pass it did not see.
"""
import csv
import ctypes
import json
import os
import pathlib
import re
import shutil
import stat
import signal
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def dies_with_the_grader():
    """preexec_fn of the grader's ctest runs: the child is killed when the thread that started it
    ends (PR_SET_PDEATHSIG), so a grader killed with SIGKILL leaves no ctest that goes on starting
    test programs as the test user the next grading may be given (an adversarial review,
    2026-11-28); course-sandbox does the same for what ctest starts. (prctl only: resolved before
    the fork, nothing else runs between fork and exec.)"""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


@dataclass
class TestResult:
    name: str
    outcome: str  # passed | failed | skipped
    output: str = ""
    seconds: float = 0.0
    reason: str = ""  # why it failed or was skipped, in one line
    labels: list = field(default_factory=list)
    timeout: float = 0.0
    # What GoogleTest's record of the case says, where the grader read one (None: no record read: a
    # crash, a time limit, a test judged by its exit status alone): its failures' messages, and the
    # properties the judge recorded (course/perf.h: perf_line:<what>, diagnosis:<what>). The judge's
    # words are read there, not in the printed output, which code under test writes too (a printed
    # "out of memory" had a wrong answer judged again alone; a printed perf line was shown as the
    # measurement: an adversarial review, 2026-11-28). See judge_text.
    recorded: object = None
    properties: dict = field(default_factory=dict)

    @property
    def parts(self):
        return self.name.split(".")

    @property
    def role(self):
        return self.parts[0]

    @property
    def chapter(self):
        parts = self.parts
        return parts[1] if len(parts) > 1 else ""

    @property
    def suite(self):
        parts = self.parts
        return parts[2] if len(parts) > 2 else ""

    @property
    def stretch(self):
        return "stretch" in self.labels or "Stretch" in self.suite

    @property
    def kind(self):
        if self.suite == "Build":
            return "build"
        if self.suite == "CodePolicy":
            return "rule"  # met by any code that follows the code policy, the untouched starter too
        if "perf" in self.labels or "Perf" in self.suite:
            return "perf"
        if "Technique" in self.suite:
            return "technique"
        return "correctness"


def _listed_tests(build_dir, ctest="ctest", env=None, prefix=(), cwd=None):
    """The tests of `ctest --show-only=json-v1` (empty when ctest fails)."""
    try:
        listing = subprocess.run([*prefix, ctest, "--test-dir", str(build_dir), "--show-only=json-v1"], capture_output=True,
                                 text=True, env=env, cwd=cwd, timeout=600, preexec_fn=dies_with_the_grader)
        return json.loads(listing.stdout).get("tests", [])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return []


def test_properties(build_dir, ctest="ctest", env=None, prefix=(), cwd=None):
    """{test name: (labels, timeout, hardware queues)} from `ctest --show-only=json-v1` (empty
    when ctest fails); the queues are "one" or "default" (CUDA_DEVICE_MAX_CONNECTIONS set to 1, or
    unset: cmake/CourseTestList.cmake). `prefix` runs ctest in the sandbox: listing the tests runs
    the test executables."""
    found = {}
    for test in _listed_tests(build_dir, ctest, env, prefix, cwd):
        props = _properties_of(test)
        found[test["name"]] = (list(props.get("LABELS", [])), float(props.get("TIMEOUT", 0) or 0),
                               _hardware_queues(props))
    return found


def _properties_of(test):
    """{property: value} of one test of ctest's json-v1 listing."""
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def _hardware_queues(props):
    """A test's hardware queues from its properties: "default" (CUDA_DEVICE_MAX_CONNECTIONS unset)
    or "one" (cmake/CourseTestList.cmake)."""
    return "default" if "CUDA_DEVICE_MAX_CONNECTIONS=unset:" in props.get("ENVIRONMENT_MODIFICATION", []) else "one"


def _skip_reason(output):
    match = re.search(r": Skipped\n(.*)", output)
    if match and match.group(1).strip():
        return match.group(1).strip()
    for line in output.splitlines():
        if "no CUDA device" in line or "needs two GPUs" in line:
            return line.replace("[  COURSE  ]", "").strip()
    return "the test did not run here"


def _failure_reason(name, message, output, seconds, timeout):
    if name.endswith(".Build.ListsItsTests"):
        return ("Did not start: the chapter's test program crashed, hung or stopped before main while listing its "
                "tests, so none of them ran (code that runs when the program starts: a global object's "
                "constructor?)")
    if message.startswith("Timeout") or (timeout and seconds >= 0.95 * timeout):
        return (f"Timeout: still running after its {timeout:g} s limit (a kernel or a loop that never ends?); "
                f"the process was killed")
    if "[  COURSE  ] stopped: this program held the GPU" in output:  # course/gpu_turn.h, kStoppedExitStatus
        return ("Stopped: it held the GPU for 10 s while another program's measurement waited (a kernel that "
                "never ends, or a call that waits for one?); the process was stopped so that the others go on")
    if message and message != "Failed":  # ctest's own word: SEGFAULT, Subprocess aborted, ...
        return f"{message}: the test process crashed"
    started = "[ RUN      ]" in output  # a GoogleTest case began ...
    finished = "[  FAILED  ]" in output or "[       OK ]" in output or "Failure" in output  # ... and reported
    if started and not finished:
        return "Crashed: the test process ended before GoogleTest could report (a crash, abort or signal)"
    return "Failed"


def report_dir(build):
    """The folder of GoogleTest's records of a build's tests (COURSE_TEST_REPORT_DIR)."""
    cache = pathlib.Path(build) / "CMakeCache.txt"
    if cache.exists():
        for line in cache.read_text(errors="replace").splitlines():
            if line.startswith("COURSE_TEST_REPORT_DIR:"):
                return pathlib.Path(line.split("=", 1)[1])
    return pathlib.Path(build) / "test-reports"


# The records' folder lies in the scratch folder, which test programs write: the grader, perhaps
# root, never follows a link there, never opens anything there but a regular file, and reads a
# bounded amount. A program had made the folder a link to a hidden one, whose records the grader
# then read and deleted, and a record a link to a FIFO, on which it hung (an adversarial review,
# 2026-11-28).
RECORD_LIMIT = 64 << 20  # bytes: the largest record read (a whole batch's is some kilobytes)


def _records_folder(folder):
    """A descriptor of the records' folder itself (no link followed), or None."""
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None


def read_report(path):
    """The bytes of the record at `path` (a regular file, no link followed in its folder or its
    name, at most RECORD_LIMIT bytes), or None."""
    path = pathlib.Path(path)
    folder = _records_folder(path.parent)
    if folder is None:
        return None
    try:
        fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except OSError:
        return None
    finally:
        os.close(folder)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > RECORD_LIMIT:
            return None
        with os.fdopen(fd, "rb", closefd=False) as record:
            return record.read(RECORD_LIMIT + 1)[:RECORD_LIMIT]
    finally:
        os.close(fd)


def remove_report(reports, name):
    """Removes the record of test `name` (the name itself, not what a link there leads to)."""
    folder = _records_folder(reports)
    if folder is None:
        return
    try:
        os.unlink(report_file(reports, name).name, dir_fd=folder)
    except OSError:
        pass
    finally:
        os.close(folder)


def clear_reports(folder):
    """Empties the records' folder before a run: a record left by an earlier run is no record. A
    folder that is not one (a link, a file, put there by a program) is removed, not followed."""
    folder = pathlib.Path(folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
    descriptor = _records_folder(folder)
    if descriptor is not None:
        try:
            for name in os.listdir(descriptor):
                if name.endswith(".xml"):
                    try:
                        os.unlink(name, dir_fd=descriptor)
                    except IsADirectoryError:
                        shutil.rmtree(folder / name, ignore_errors=True)
                    except OSError:
                        pass
        finally:
            os.close(descriptor)
    folder.mkdir(parents=True, exist_ok=True)


def report_file(reports, name):
    """Where the test `name` wrote GoogleTest's record of itself (cmake/CourseTestList.cmake)."""
    return pathlib.Path(reports) / (name.replace("/", "~") + ".xml")


def _parse_report(path):
    """The root element of the record at `path` (read_report), or None."""
    data = read_report(path)
    # GoogleTest writes no document type: one is a record the program wrote, and its entities could
    # expand a few megabytes into gigabytes of the grader's memory (an adversarial review, 2026-11-28).
    if data is None or b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        return None
    try:
        return ET.fromstring(data)
    except ET.ParseError:
        pass
    # GoogleTest copies an exception's text into the record byte for byte: one byte that is not
    # UTF-8 (thrown by the code under test) made the whole record unreadable, every case of a batch
    # then ran alone and the printed output was read again (an adversarial review, 2026-11-28).
    try:
        return ET.fromstring(data.decode("utf-8", errors="replace"))
    except ET.ParseError:
        return None


def judged_by_record(name):
    """Whether a test is a run of a chapter's test program for one case (its verdict needs the
    program's own record): not Build.* or CodePolicy.* (no code under test runs in them), not a
    batch (judge_batch reads its record), not unit tests."""
    parts = name.split(".")
    return len(parts) >= 4 and parts[0] in ("student", "solution", "fixture") and \
        not any(p in ("Build", "CodePolicy", "Batch") for p in parts[1:4])


def _skip_message(case):
    """Why a <testcase> of GoogleTest's record was skipped, without the file and line it prefixes."""
    skip = case.find("skipped")
    message = (skip.get("message") or "") if skip is not None else ""
    return re.sub(r"^[^\n]*?:\d+\n?", "", message).strip() or message.strip()


def _case_words(case):
    """(its failures' messages, {property: value}) of a <testcase> of GoogleTest's record: what the
    judge said of the case. Properties are <property> elements (GoogleTest 1.10 and later) or, in
    older records, the case's own attributes beyond GoogleTest's."""
    text = "\n".join((f.get("message") or "") for f in case.findall("failure"))
    properties = {k: v for k, v in case.attrib.items() if k.startswith(("perf_line_", "diagnosis_", "fault_", "shortfall_"))}
    for node in case.iter("property"):
        if node.get("name"):
            properties[node.get("name")] = node.get("value", "")
    return text, properties


def _record_words(root):
    """(failure messages, properties) of the cases that ran in a record's root, or (None, {})."""
    if root is None:
        return None, {}
    texts, properties = [], {}
    for case in root.iter("testcase"):
        if case.get("status", "run") == "run":
            text, found = _case_words(case)
            texts += [text] if text else []
            properties.update(found)
    return "\n".join(texts), properties


def read_record(path, root=None):
    """(outcome, reason) of GoogleTest's XML record of one selected case: passed, failed, skipped,
    or missing (no record, or no case in it). `root`: the record already parsed."""
    root = _parse_report(path) if root is None else root
    if root is None:
        return "missing", ""
    cases = [c for c in root.iter("testcase") if c.get("status", "run") == "run"]
    if not cases:
        return "missing", ""
    failures = [f for c in cases for f in c.findall("failure")]
    if failures:
        return "failed", ""
    if all(c.get("result") == "skipped" for c in cases):
        return "skipped", next((_skip_message(c) for c in cases if c.find("skipped") is not None), "")
    return "passed", ""


def agree(outcome, reason, output, record):
    """The verdict from ctest's outcome and the program's own record of the case."""
    recorded, recorded_reason = record
    if outcome == "failed":
        return outcome, reason
    if outcome == "passed" and recorded == "passed":
        return "passed", ""
    if outcome == "skipped" and recorded == "skipped":
        return "skipped", recorded_reason or _skip_reason(output)
    status = "0 (a pass)" if outcome == "passed" else "77 (skipped)"
    said = {"missing": "has no record of the test: the program ended before GoogleTest could write it "
                       "(exit, _exit, a signal?)",
            "failed": "recorded a failure", "skipped": "recorded a skip", "passed": "recorded a pass"}[recorded]
    return "failed", (f"Tampered: the program exited with status {status}, but GoogleTest {said}. A verdict "
                      f"needs both to agree; code under test ending the program is not a pass")


def read_junit(path, properties=None, reports=None):
    """The tests of a ctest JUnit report (ctest --output-junit), with labels and timeouts joined
    from `properties` ({name: (labels, timeout)}) when given. With `reports` (the folder of
    GoogleTest's records, COURSE_TEST_REPORT_DIR), the verdict of each run of a test program is
    the agreement of its exit status and its record (see agree)."""
    properties = properties or {}
    results = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "")
        output = "".join(node.text or "" for node in case.iter("system-out"))
        seconds = float(case.get("time", 0) or 0)
        labels, timeout = properties.get(name, ([], 0.0))[:2]
        status = case.get("status", "")
        failure = case.find("failure")
        if status == "run":
            outcome, reason = "passed", ""
        elif status == "fail" or failure is not None:
            message = failure.get("message", "") if failure is not None else ""
            outcome, reason = "failed", _failure_reason(name, message, output, seconds, timeout)
        else:
            outcome, reason = "skipped", _skip_reason(output)
        recorded, recorded_properties = None, {}
        if reports is not None and judged_by_record(name):
            path = report_file(reports, name)
            root = _parse_report(path)
            outcome, reason = agree(outcome, reason, output, read_record(None, root) if root is not None else ("missing", ""))
            recorded, recorded_properties = _record_words(root)
            if root is None and os.path.lexists(path):
                recorded = ""  # a record that is no record: its printed words are not the judge's either
        results.append(TestResult(name, outcome, output, seconds, reason, labels, timeout, recorded, recorded_properties))
    return results


# ---------------------------------------------------------------- batches (the graders' first pass)

def batch_cases(build_dir, ctest="ctest", env=None, cwd=None, queues=None):
    """{batch test name: [the names of its cases, as the one-case tests are named]} of a build, from
    `COURSE_TEST_BATCHES=1 ctest --show-only=json-v1` (cmake/CourseTestList.cmake; `env` may ask
    for other batches: COURSE_TEST_BATCHES=queues, COURSE_TEST_LEAVE_OUT): a batch
    <role>.<chapter>.Batch.<group> runs the cases its --gtest_filter names. With `queues` (a
    dict), each batch's hardware queues go there too ("one" or "default", as test_properties)."""
    batches = {}
    env = dict(env or {})
    env.setdefault("COURSE_TEST_BATCHES", "1")
    for test in _listed_tests(build_dir, ctest, env, cwd=cwd):
        name = test["name"]
        parts = name.split(".")
        if len(parts) != 4 or parts[2] != "Batch":
            continue
        selected = next((a.split("=", 1)[1] for a in test.get("command", []) if a.startswith("--gtest_filter=")), "")
        batches[name] = [f"{parts[0]}.{parts[1]}.{case}" for case in selected.split(":") if case]
        if queues is not None:
            queues[name] = _hardware_queues(_properties_of(test))
    return batches


def read_case_records(path, words=None):
    """GoogleTest's record of a program that ran several cases: [(Suite.Case, outcome, seconds,
    message)] in the order they ran (passed, failed, skipped), or None without a readable record.
    With `words` (a dict), what the judge said of each case goes there too: {Suite.Case: (failure
    messages, properties)} (_case_words)."""
    root = _parse_report(path)
    if root is None:
        return None
    records = []
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            name = f"{suite.get('name', '')}.{case.get('name', '')}"
            if words is not None:
                words[name] = _case_words(case)
            if case.get("status", "run") != "run":
                records.append((name, "skipped", 0.0, "did not run"))
            elif case.findall("failure"):
                records.append((name, "failed", float(case.get("time", 0) or 0), ""))
            elif case.get("result") == "skipped":
                records.append((name, "skipped", 0.0, _skip_message(case)))
            else:
                records.append((name, "passed", float(case.get("time", 0) or 0), ""))
    return records


def _case_output(output, case, to_the_end=False):
    """The part of a batch's output that one case printed (from its [ RUN ] line to the next, or
    with `to_the_end` to the end)."""
    start = output.find(f"[ RUN      ] {case}\n")
    if start < 0:
        return ""
    end = -1 if to_the_end else output.find("[ RUN      ] ", start + 1)
    return output[start:end if end >= 0 else len(output)]


# A skip that a case decides from the machine alone, before any code under test runs in it (the
# number of GPUs the program sees cannot change while it runs): it stands in a batch like a pass.
_MACHINE_SKIPS = ("needs two GPUs",)


def judge_batch(batch, cases, properties=None, reports=None, batch_queues=None):
    """A batch's verdicts that stand, and what to do with the other cases: (stood, again, alone),
    `again` for another batch, `alone` to run one by one. `batch` is the batch test's TestResult
    (ctest's outcome: its exit status, time limit, crash), `cases` the names of its cases;
    `properties` {name: (labels, timeout[, queues])} (test_properties), `batch_queues` the batch's
    own ("one" or "default"; batch_cases; by default CUDA's if any case has them).

    A batch is one process, so a case's outcome there could depend on the cases that ran before it
    in it. Only the verdicts of cases that ran after passes only stand: the passes up to the first
    case that did not pass (and skips the machine decides: in a program that found no GPU when it
    started, and a case that needs two GPUs), and the failure of the first case that ran, which ran
    as it runs alone, if it ran with its own hardware queues (a batch of a program's every case
    has CUDA's default queues if any of them needs streams side by side, else one, its perf cases'
    too; a case given one queue gives the same result with eight, and a perf case's pass with one
    is one with eight, but a failure is judged as the presets run it: that case runs alone). The first
    case that did not stand runs alone: it failed (or ran longer than its own time limit, which
    alone would have stopped it) after other cases, or under other queues, and put first in
    another batch it would most likely fail again and end that batch at once (--gtest_fail_fast).
    The cases after it run in another batch. All of a batch whose exit status and record disagree,
    or that left no record (a crash, a time limit), run alone. So every failure is judged as the presets judge it: in
    a process where nothing ran before it."""
    properties = properties or {}
    said = {}  # {Suite.Case: (failure messages, properties)}: the judge's words of each case
    records = read_case_records(report_file(reports, batch.name), said) if reports is not None else None
    if not records:
        return [], [], list(cases)
    outcomes = {outcome for _, outcome, _, _ in records}
    agrees = {"passed": "failed" not in outcomes and outcomes != {"skipped"},  # exit status 0
              "skipped": outcomes == {"skipped"},  # 77: every case skipped
              "failed": "failed" in outcomes}[batch.outcome]  # else a crash or a time limit
    # A batch that crashed or ran past its time limit left no record of GoogleTest's: what is there
    # the program itself may have written before it died (five passes and a failure, then a null
    # dereference: an adversarial review, 2026-11-28). Every case runs alone.
    if not agrees or (batch.outcome == "failed" and batch.reason != "Failed"):
        return [], [], list(cases)
    prefix = batch.name.rsplit(".Batch.", 1)[0]
    expected = set(cases)
    queues = {c: properties[c][2] if len(properties.get(c, ())) > 2 else "one" for c in cases}
    if batch_queues is None:
        batch_queues = "default" if "default" in queues.values() else "one"
    # main() says, before the first case (and so before any code under test), that it found no GPU.
    no_gpu_program = "no CUDA device" in batch.output.split("[ RUN      ]", 1)[0]
    stood, alone = [], []
    for at, (case, outcome, seconds, message) in enumerate(records):
        name = f"{prefix}.{case}"
        if name not in expected:
            return [], [], list(cases)
        labels, timeout = properties.get(name, ([], 0.0))[:2]
        if timeout and seconds >= 0.95 * timeout:
            alone.append(name)
            break
        machine_skip = outcome == "skipped" and (
            (no_gpu_program and "no CUDA device" in message) or message.startswith(_MACHINE_SKIPS))
        if outcome != "passed" and not machine_skip:
            if outcome == "failed" and at == 0 and queues[name] == batch_queues:
                # Its output to the batch's end (--gtest_fail_fast: nothing ran after it), not to the
                # next "[ RUN      ]" it may have printed itself before the judge's lines (which
                # hid a replay's NOT A MEASUREMENT from breach: an adversarial review, 2026-11-28).
                stood.append(TestResult(name, outcome, _case_output(batch.output, case, to_the_end=True), seconds,
                                        "Failed", labels, timeout, *said.get(case, ("", {}))))
            else:
                alone.append(name)
            break
        stood.append(TestResult(name, outcome, _case_output(batch.output, case), seconds,
                                message if machine_skip else "", labels, timeout, *said.get(case, ("", {}))))
    judged = {r.name for r in stood} | set(alone)
    return stood, [c for c in cases if c not in judged], alone


def gist(output, lines=3):
    """What a failure says, in a few lines: GoogleTest's first failure without its boilerplate,
    else compute-sanitizer's findings, else the end of the output."""
    kept = []
    at = output.find(": Failure\n")
    if at >= 0:
        text = output[at + len(": Failure\n"):at + 6000]
        text = re.split(r"\n\[  [A-Z ]+\]", text)[0]
        text = re.sub(r"\nGoogle Test trace:.*", "", text, flags=re.S)
        operands_to_skip = 0
        for line in text.splitlines():
            line = line.strip()
            if line == "Expected equality of these values:":
                operands_to_skip = 2  # the two operands (each maybe with "Which is:"); the message follows
                continue
            if line.startswith("Which is:"):
                continue
            if operands_to_skip:
                operands_to_skip -= 1
                continue
            if not line or line in ("Expected: true", "Failed") or line.startswith("Value of:"):
                continue
            line = re.sub(r"^Actual: false \((.*)\)$", r"\1", line)
            line = re.sub(r"^Actual: false \(", "", line)
            kept.append(line)
    if not kept:
        kept = [line for line in re.findall(r"========= [^\n]*", output)
                if re.match(r"========= (Invalid|Race|Uninitialized|Barrier|Program hit|Error:|[0-9]+ errors|ERROR)",
                            line)]
    if not kept:
        tail = [line.strip() for line in output.splitlines()
                if line.strip() and not line.startswith(("[", "Note: Google Test filter"))]
        kept = tail[-lines:]
    return kept[:lines]


def perf_lines(output):
    """Every `[  PERF    ]` line of a test's output."""
    return re.findall(r"\[  PERF    \] ([^\n]*)", output)


def perf_line(output):
    """The judge's perf line: the last one. Code under test runs only inside the contract calls,
    before the test prints its measurement, so a line it prints comes earlier."""
    lines = perf_lines(output)
    return lines[-1] if lines else ""


def judge_text(result):
    """The judge's own words of a case: the failure messages of GoogleTest's record where the grader
    read one, else (no record: a crash, a time limit) what the program printed."""
    return result.output if result.recorded is None else result.recorded


def _recorded(result, key):
    """The values of the record's properties named `key`_N, in the order recorded: the judge names
    each one more than the highest N before it (course/perf.h, next_property_name), so a name the
    code under test recorded first never takes the judge's place, and the judge's latest is last."""
    return [v for k, v in result.properties.items() if re.fullmatch(key + r"_\d{1,19}", k)]


def judge_perf_lines(result):
    """The judge's perf lines of a case (without their `[  PERF    ] ` tag): the record's
    perf_line properties where the grader read a record, else the printed ones (perf_lines)."""
    if result.recorded is None:
        return perf_lines(result.output)
    return [re.sub(r"^\[  PERF    \] ", "", line) for line in _recorded(result, "perf_line")]


def judge_perf_line(result):
    """The judge's last perf line of a case (see judge_perf_lines), or ""."""
    lines = judge_perf_lines(result)
    return lines[-1] if lines else ""


def judge_diagnosis(result):
    """The judge's diagnosis of a case (see diagnosis_line): the record's last diagnosis property
    where the grader read a record, else the printed one."""
    if result.recorded is None:
        return diagnosis_line(result.output)
    lines = _recorded(result, "diagnosis")
    return lines[-1] if lines else ""


def diagnosis_line(output):
    """The judge's diagnosis line of a test's output (`[ DIAGNOSIS] <what>: <sentences>`,
    course/diagnosis.h, without its tag): the judge prints it right after its perf line, once code
    under test has run, so only a line that follows the last perf line is the judge's; "" when
    there is none. score() keeps it, tagged, after the perf line."""
    perf_at = output.rfind("[  PERF    ] ")
    lines = re.findall(r"\[ DIAGNOSIS\] ([^\n]*)", output[perf_at:]) if perf_at >= 0 else []
    return lines[-1] if lines else ""


def diagnosis_of(scored_output, what):
    """What the judge's diagnosis of `what` (the perf line's subject) says, from a scored test's
    output (score(): the perf line, then the judge's diagnosis line, if any), or ""."""
    lines = re.findall(r"^\[ DIAGNOSIS\] ([^\n]*)", scored_output, re.M)
    line = lines[-1] if lines else ""
    return line[len(what) + 2:] if line.startswith(what + ": ") else ""


# ---------------------------------------------------------------- the grade workflow's summary

def summary(results, label, reports):
    """The grade workflow's summary (printed and saved as Markdown). Returns (text, passed):
    passed is False when a required (non-stretch) test failed or no test ran."""
    chapters = {}
    perf, skips, failures = [], [], []
    required_failed = False
    for r in results:
        row = chapters.setdefault(r.chapter, {"passed": 0, "failed": 0, "skipped": 0, "stretch": 0, "stretch_of": 0})
        if r.stretch:
            row["stretch_of"] += 1
            row["stretch"] += r.outcome == "passed"
        else:
            row[r.outcome] += 1
            required_failed |= r.outcome == "failed"
        if r.outcome == "skipped" and r.reason not in skips:
            skips.append(r.reason)
        # (a unit test of the judge's own prints perf lines of made-up figures: not a measurement)
        line = judge_perf_line(r) if r.role != "unit" else ""
        if line:
            perf.append(f"  {r.outcome.upper()}: {line}")
        if r.outcome == "failed":
            kind = "stretch, optional" if r.stretch else "required"
            failures.append(f"  {r.name} ({r.reason}, {kind})")
            failures += [f"        {line}" for line in gist(r.output)]
    out = ["", f"==================== Grade summary ({label} tests) ====================",
           "| chapter | passed | failed | skipped | stretch passed |", "| --- | ---: | ---: | ---: | ---: |"]
    for chapter, row in chapters.items():
        out.append(f"| {chapter} | {row['passed']} | {row['failed']} | {row['skipped']} | "
                   f"{row['stretch']} / {row['stretch_of']} |")
    if perf:
        out += ["", "Performance (ratios are to a baseline measured in the same process):", *perf]
    if skips:
        out += ["", "Skipped tests, because:", *[f"  {s}" for s in skips]]
    if failures:
        out += ["", "Failed tests (full output above; rerun one with ctest --preset student -R <name>):", *failures]
    if not results:
        out += ["", "No test ran."]
        required_failed = True
    if required_failed:
        out += ["", "Result: NOT PASSED (a required test failed)"]
    elif all(r.outcome == "skipped" for r in results):
        out += ["", "Result: NOT GRADED (every test was skipped; grading needs a GPU)"]
    else:
        out += ["", "Result: PASSED (every required test that ran passed; skipped tests need a GPU)"]
    out.append("Reports: " + ", ".join(str(r) for r in reports))
    return "\n".join(out) + "\n", not required_failed


# ---------------------------------------------------------------- points

def breach(result):
    """Why a failed test shows cheating rather than a mistake, or "": a broken code policy, a
    verdict the program forged (its exit status against GoogleTest's record), or timed calls whose
    output was wrong although the same code passed its correctness tests (a remembered or replayed
    result; fresh.h)."""
    if result.outcome != "failed":
        return ""
    if result.kind == "rule":
        return "breaks the code policy (see CodePolicy)"
    if result.reason.startswith("Tampered"):
        return "forged a verdict (see the tests marked Tampered)"
    if any("NOT A MEASUREMENT: the timed calls left a wrong result" in line for line in judge_perf_lines(result)):
        return "left wrong results only when timed: a result remembered or replayed (see " + result.suite + ")"
    return ""


def score(results, points):
    """Points for the student tests of the chapters that count (grading/points.json): one entry per
    test with its score and max_score (Gradescope's). A stretch test's max_score is the stretch
    bonus, so that a score is never above its maximum: the maxima add up to the required points
    plus the stretch bonus (see totals). A test not graded (skipped) has neither. A breach (see
    breach) voids its chapter when rule_failure_voids_chapter is true."""
    default = points.get("default", {})
    chapters = points.get("chapters", {})
    bonus = points.get("stretch_bonus", 0)
    graded, breaches = [], {}
    for r in results:
        if r.role != "student" or len(r.parts) < 4:
            continue
        rules = chapters.get(r.chapter)
        if rules is None or not rules.get("counts", True):
            continue
        if breach(r):
            breaches.setdefault(r.chapter, breach(r))
        value = bonus if r.stretch else rules.get(r.kind, default.get(r.kind, 1))
        entry = {"name": r.name[len("student."):], "chapter": r.chapter, "kind": r.kind, "stretch": r.stretch,
                 "outcome": "not graded" if r.outcome == "skipped" else r.outcome, "seconds": r.seconds}
        if r.outcome == "skipped":
            entry.update(score=0, max_score=0, output="NOT GRADED: " + r.reason)
        else:
            passed = r.outcome == "passed"
            entry.update(score=value if passed else 0, max_score=value)
            text = judge_perf_line(r)
            text = (text + "\n") if text else ""
            if judge_diagnosis(r):
                text += f"[ DIAGNOSIS] {judge_diagnosis(r)}\n"
            if not passed:
                text += "\n".join([r.reason, *gist(r.output, lines=12)])
            entry["output"] = text
        graded.append(entry)
    if points.get("rule_failure_voids_chapter", True):
        for t in graded:
            if t["chapter"] in breaches and t["score"]:
                t["score"] = 0
                t["output"] = f"VOID: this chapter's code {breaches[t['chapter']]}.\n" + t["output"]
    return graded


TOTAL_KEYS = ("required", "required_max", "stretch", "stretch_max", "total", "max")


def totals(graded):
    """{required, required_max, stretch, stretch_max, total, max} of graded tests (score's entries,
    or results.json's tests, whose tags say "stretch"): the required points and their maximum, the
    stretch bonus and its maximum, and the total with its maximum (required + stretch), so that
    total <= max."""
    row = dict.fromkeys(TOTAL_KEYS, 0)
    for t in graded:
        part = "stretch" if t.get("stretch", "stretch" in t.get("tags", [])) else "required"
        row[part] += t["score"]
        row[part + "_max"] += t["max_score"]
    row["total"] = row["required"] + row["stretch"]
    row["max"] = row["required_max"] + row["stretch_max"]
    return row


def chapter_totals(graded):
    """{chapter: totals (see totals) with score (= total), passed, failed and not graded}."""
    chapters = {}
    for t in graded:
        chapters.setdefault(t["chapter"], []).append(t)
    out = {}
    for chapter, tests in chapters.items():
        row = totals(tests)
        row["score"] = row["total"]
        for outcome in ("passed", "failed", "not graded"):
            row[outcome] = sum(t.get("outcome") == outcome for t in tests)
        out[chapter] = row
    return out


def points_line(row):
    """One line of a submission's or a class row's points (see totals)."""
    return (f"Points: {row['total']} of {row['max']}: required {row['required']} of {row['required_max']}, "
            f"stretch bonus {row['stretch']} of {row['stretch_max']} (stretch tests are optional)")


# ---------------------------------------------------------------- faults (what went wrong at run time)

# A CUDA error as the course's checks name it ("<call> failed at f.cu:12: cudaErrorIllegalAddress: an
# illegal memory access ...", tests/support/src/cuda_check.cpp), a test's "returned cudaErrorX: ..."
# or compute-sanitizer's "Program hit cudaErrorX (error N)"; not a name a test only mentions.
_CUDA_ERROR = re.compile(r"\b(cudaError[A-Z]\w*)(?=: | \(error )")
FAULT_ORDER = ("timeout", "stopped", "crash", "did not start", "tampered", "GPU memory over budget", "output flood")


def fault(result):
    """What a failed test did wrong at run time, or "" (a plain failure, a pass, a skip): timeout
    (past its time limit), tampered (its exit status against GoogleTest's record), did not start
    (the program stopped while listing its tests), the cudaError its output names, or crash (a
    signal: SEGFAULT, Subprocess aborted, ..., or an end before GoogleTest could report)."""
    if result.outcome != "failed":
        return ""
    reason = result.reason
    if reason.startswith("Timeout"):
        return "timeout"
    if reason.startswith("Stopped"):
        return "stopped"
    if reason.startswith("Tampered"):
        return "tampered"
    if reason.startswith("Did not start"):
        return "did not start"
    judged = _recorded(result, "fault")  # the judge's own word: a CUDA call of its own failed (cuda_check.h)
    if judged:
        return judged[0]
    named = _CUDA_ERROR.search(judge_text(result))
    if named:
        return named.group(1)
    if reason.startswith("Crashed") or reason.endswith(": the test process crashed"):
        return "crash"
    return ""


# Failures that a neighbour on a shared GPU can cause: a time limit passed while another grading's
# long kernel held the GPU, memory that another grading took, a launch that failed or timed out.
# tools/grade-class judges such a test again with the GPU to itself before it counts (grading.test).
SHARED_FAULTS = ("timeout", "stopped", "cudaErrorMemoryAllocation", "cudaErrorLaunchTimeout", "cudaErrorLaunchOutOfResources",
                 "cudaErrorDevicesUnavailable")


# A perf test's shortfall (course/perf.h: "... reached 1683.1 GB/s, 57% of the device-to-device
# copy peak (2973.9 GB/s); 75% is needed."): a neighbour's GPU work beside the measurement slows
# it, and the turn files that keep it away are within reach of the code under test (an
# adversarial review, 2026-11-27: a program that lets go of its own shared turn with flock runs its
# kernels beside a classmate's measurement), so a shortfall seen in a class is judged again alone.
PERF_SHORTFALL = re.compile(r"reached [-\d.e+]+ \S+, \d+% of .*; \d+% is needed\.")


# A skip for want of free device memory (tests of chapters 07, 08 and 09 that need 18-35 GB:
# "this test needs 35.4332 GB of free device memory ..."): beside other gradings, their programs
# hold memory that the GPU alone would have free, so such a skip seen in a class is judged again
# alone too, rather than cost that student the test's points.
MEMORY_SKIP = re.compile(r"needs [\d.e+]+ GB of free device memory")


def shared_fault(result):
    """Whether a failed test's fault is one that another grading on the same GPU could have caused
    (SHARED_FAULTS, "out of memory" in its output, or a perf test's shortfall: PERF_SHORTFALL), or
    a test skipped for want of free device memory (MEMORY_SKIP)."""
    if result.outcome == "skipped":  # the recorded reason only: the output is the program's to print
        return MEMORY_SKIP.search(result.reason) is not None
    return result.outcome == "failed" and (_worse_shared_fault(result) or _falls_short(result))


def perf_shortfall_only(result):
    """Whether a failed test's only fault that a neighbour could have caused is a perf test's
    shortfall (PERF_SHORTFALL): no time limit, stop, out of memory or failed launch among them."""
    return result.outcome == "failed" and not _worse_shared_fault(result) and _falls_short(result)


def _worse_shared_fault(result):
    """A neighbour's fault beyond a shortfall: SHARED_FAULTS (the judge's fault_N, or named in the
    record's failures), or "out of memory" there. A failure's message may carry the code under
    test's words (an exception's text): such a test is judged again alone too, which costs that
    submission's own time only, while a neighbour's fault read too narrowly would cost an honest
    student points."""
    return (fault(result) in SHARED_FAULTS or any(f in SHARED_FAULTS for f in _recorded(result, "fault"))
            or "out of memory" in judge_text(result))


def _falls_short(result):
    """A perf test's measurement counted and fell short (the judge's shortfall_N, course/perf.h,
    or its words in the record's failures)."""
    return bool(_recorded(result, "shortfall")) or PERF_SHORTFALL.search(judge_text(result)) is not None


# What ctest puts in place of the middle of an output over its limit (grading.test's
# --test-output-size-*: 4 MiB, the head and the end kept).
OUTPUT_CUT = "[This part of the test output was removed since it exceeds the threshold"


def output_flooded(result):
    """Whether a test printed more than ctest keeps of an output (grading.test: 4 MiB)."""
    return OUTPUT_CUT in result.output


def faults(results):
    """{kind: how many tests} of the faults of TestResults (see fault), e.g. {"timeout": 2, "crash":
    1, "cudaErrorIllegalAddress": 1}: timeouts, crashes, programs that did not start and Tampered
    verdicts first, then the cudaErrors by name; {} when none."""
    counts = {}
    for r in results:
        kind = fault(r)
        if kind:
            counts[kind] = counts.get(kind, 0) + 1
        if output_flooded(r):  # a fault whatever the verdict: the class's logs carry it
            counts["output flood"] = counts.get("output flood", 0) + 1
    ordered = [k for k in FAULT_ORDER if k in counts] + sorted(k for k in counts if k not in FAULT_ORDER)
    return {k: counts[k] for k in ordered}


def faults_line(counts):
    """The "Faults:" line of a submission's reports, e.g. "Faults: 2 tests past their time limit, 1
    crashed, 1 cudaErrorIllegalAddress", or "Faults: none"."""
    words = {"timeout": lambda n: f"{n} test{'s' if n != 1 else ''} past {'their' if n != 1 else 'its'} time limit",
             "crash": lambda n: f"{n} crashed", "did not start": lambda n: f"{n} did not start",
             "stopped": lambda n: f"{n} stopped for holding a measurement up",
             "tampered": lambda n: f"{n} Tampered",
             "GPU memory over budget": lambda n: f"{n} stopped for holding more GPU memory than the class's budget",
             "output flood": lambda n: f"{n} printed more than ctest keeps (4 MiB; the head and the end kept)"}
    parts = [words[k](n) if k in words else f"{n} {k}" for k, n in counts.items()]
    return "Faults: " + (", ".join(parts) if parts else "none")


def faults_text(counts):
    """class.csv's faults column: "timeout x2; crash x1", "" when none."""
    return "; ".join(f"{k} x{n}" for k, n in (counts or {}).items())


def gradescope_results(graded, notes, faults=None):
    """Gradescope's autograder results (https://gradescope-autograders.readthedocs.io, 'Output format').
    Gradescope shows the score against the sum of the tests' max_score: the required points and
    the stretch bonus (a stretch test's max_score is its bonus); the output's first line and
    extra_data say both apart."""
    row = totals(graded)
    extra = {"points": row}
    head = [points_line(row)]
    if faults is not None:  # {kind: count} (see faults)
        extra["faults"] = dict(faults)
        head.append(faults_line(faults))
    return {
        "score": row["total"],
        "output": "\n".join([*head, *notes]),
        "extra_data": extra,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [{"name": t["name"], "score": t["score"], "max_score": t["max_score"],
                   "status": "passed" if t["outcome"] == "passed" else "failed", "output": t["output"],
                   "tags": [t["chapter"], t["kind"]] + (["stretch"] if t["stretch"] else [])
                   + (["not graded"] if t["outcome"] == "not graded" else []),
                   "visibility": "visible"} for t in graded],
    }


def markdown_report(graded, notes, faults=None):
    """report.md: the Points line, the Faults line (with `faults`, see faults), the notes, the
    points per chapter and the failed tests."""
    row = totals(graded)
    head = [points_line(row) + "."] + ([faults_line(faults) + "."] if faults is not None else [])
    md = ["# Grade", "", *head, "", *notes, "",
          "| chapter | required | of | stretch | of | total | of | passed | failed | not graded |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for chapter, c in sorted(chapter_totals(graded).items()):
        md.append(f"| {chapter} | {c['required']} | {c['required_max']} | {c['stretch']} | {c['stretch_max']} | "
                  f"{c['total']} | {c['max']} | {c['passed']} | {c['failed']} | {c['not graded']} |")
    md.append(f"| **total** | **{row['required']}** | **{row['required_max']}** | **{row['stretch']}** | "
              f"**{row['stretch_max']}** | **{row['total']}** | **{row['max']}** | | | |")
    failures = [f"- `{t['name']}`{' (stretch, optional)' if t['stretch'] else ''}: "
                + " / ".join(line for line in t["output"].splitlines()[:3] if line)
                for t in graded if t["outcome"] == "failed"]
    return "\n".join([*md, "", "## Failed tests", "", *(failures or ["none"])]) + "\n"


def write_junit(results, path):
    """A JUnit report of the graded tests, whatever ctest runs they came from."""
    suite = ET.Element("testsuite", name="course", tests=str(len(results)),
                       failures=str(sum(r.outcome == "failed" for r in results)),
                       skipped=str(sum(r.outcome == "skipped" for r in results)))
    for r in results:
        case = ET.SubElement(suite, "testcase", name=r.name, classname=r.name, time=f"{r.seconds:.3f}",
                             status={"passed": "run", "failed": "fail"}.get(r.outcome, "notrun"))
        if r.outcome == "failed":
            ET.SubElement(case, "failure", message=r.reason)
        elif r.outcome == "skipped":
            ET.SubElement(case, "skipped", message=r.reason)
        ET.SubElement(case, "system-out").text = r.output
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def write_class_csv(rows, chapters, path):
    """class.csv: one row per student (scores only, so that two gradings of one class compare
    equal), one column per chapter (its points, stretch bonus included), then the required points
    and their maximum, the stretch bonus and its maximum, the total and its maximum (required_max +
    stretch_max: total <= max), a status when the submission was not graded, and its faults at run
    time (faults_text: "timeout x2; crash x1", empty when none). A row is {"student", "chapters":
    {chapter: points}, the keys of TOTAL_KEYS, "status", "faults": {kind: count}}."""
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["student", *chapters, *TOTAL_KEYS, "status", "faults"])
        for row in rows:
            writer.writerow([row["student"], *[row["chapters"].get(c, "") for c in chapters],
                             *[row.get(key, "") for key in TOTAL_KEYS], row.get("status", ""),
                             faults_text(row.get("faults"))])

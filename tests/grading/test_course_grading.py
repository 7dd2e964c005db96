#!/usr/bin/env python3
"""Unit tests of the grading library (tools/course_grading): reading ctest's results, the
reasons and gists of failures, points, Gradescope's format, class.csv, the sandbox and the
handling of submissions. No GPU, no build: run by the test workflow (label unit).

    python3 tests/grading/test_course_grading.py
"""
import contextlib
import errno
import fcntl
import csv
import importlib.machinery
import importlib.util
import io
import json
import os
import pathlib
import signal
import stat
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import types
import unittest
from unittest import mock

HERE = pathlib.Path(__file__).resolve().parent
COURSE = HERE.parent.parent


def load_tool(name):
    """A script of tools/ (whatever its name) loaded as a module, for its functions."""
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_").replace(".py", ""), str(COURSE / "tools" / name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


sys.path.insert(0, str(COURSE / "tools"))
sys.path.insert(0, str(HERE))
from course_grading import gpu_memory as M  # noqa: E402
from course_grading import grading as G  # noqa: E402
from course_grading import results as R  # noqa: E402
from course_grading import sandbox  # noqa: E402
from course_grading import submission as S  # noqa: E402
from check_grade_submission import check_gradescope_shape  # noqa: E402

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="6">
  <testcase name="student.06-transpose.TransposeTiled.Works" status="run" time="0.5">
    <system-out>[ RUN      ] TransposeTiled.Works
[  PERF    ] transpose_tiled 2700 GB/s = 0.93 of the copy peak (needs 0.75)
[       OK ] TransposeTiled.Works</system-out></testcase>
  <testcase name="student.06-transpose.TransposeTiled.Wrong" status="fail" time="0.5">
    <failure message=""/>
    <system-out>[ RUN      ] TransposeTiled.Wrong
test.cpp:10: Failure
Value of: check.ok()
  Actual: false (3 of 9 elements differ)
Expected: true
transpose_tiled(3 x 3) wrote a wrong result
[  FAILED  ] TransposeTiled.Wrong</system-out></testcase>
  <testcase name="student.06-transpose.TransposeTiledPerf.Hangs" status="fail" time="39.9">
    <failure message=""/>
    <system-out>[ RUN      ] TransposeTiledPerf.Hangs</system-out></testcase>
  <testcase name="student.06-transpose.TransposeTiled.Crashes" status="fail" time="0.1">
    <failure message=""/>
    <system-out>[ RUN      ] TransposeTiled.Crashes</system-out></testcase>
  <testcase name="student.06-transpose.TransposeTiledStretch.Optional" status="run" time="0.1">
    <system-out>[       OK ]</system-out></testcase>
  <testcase name="student.11-deploy-multi-gpu.PeerAccess.Copies" status="notrun" time="0.0">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>deploy_test.cpp:155: Skipped
needs two GPUs; this machine shows 1
[  SKIPPED ] PeerAccess.Copies</system-out></testcase>
</testsuite>
"""

PROPERTIES = {
    "student.06-transpose.TransposeTiledPerf.Hangs": (["student", "06-transpose", "perf"], 40.0),
    "student.06-transpose.TransposeTiledStretch.Optional": (["student", "06-transpose", "correctness", "stretch"], 90.0),
}

POINTS = {"default": {"correctness": 1, "technique": 2, "perf": 3, "build": 0, "rule": 0},
          "rule_failure_voids_chapter": True, "stretch_bonus": 1,
          "chapters": {"06-transpose": {"counts": True}, "11-deploy-multi-gpu": {"counts": True},
                       "02-transfers": {"counts": False}}}


def read_results():
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(JUNIT)
    try:
        return R.read_junit(f.name, PROPERTIES)
    finally:
        os.unlink(f.name)


class ReadingResults(unittest.TestCase):
    def setUp(self):
        self.results = {r.name.split(".", 2)[2]: r for r in read_results()}

    def test_outcomes(self):
        self.assertEqual(self.results["TransposeTiled.Works"].outcome, "passed")
        self.assertEqual(self.results["TransposeTiled.Wrong"].outcome, "failed")
        self.assertEqual(self.results["PeerAccess.Copies"].outcome, "skipped")

    def test_reasons(self):
        self.assertTrue(self.results["TransposeTiledPerf.Hangs"].reason.startswith("Timeout"))
        self.assertTrue(self.results["TransposeTiled.Crashes"].reason.startswith("Crashed"))
        self.assertEqual(self.results["TransposeTiled.Wrong"].reason, "Failed")
        self.assertEqual(self.results["PeerAccess.Copies"].reason, "needs two GPUs; this machine shows 1")
        self.assertIn("Did not start", R._failure_reason("student.06-transpose.Build.ListsItsTests", "", "", 1, 20))
        self.assertTrue(R._failure_reason("a.b.C.d", "SEGFAULT", "", 1, 20).startswith("SEGFAULT"))

    def test_kinds_from_labels_and_names(self):
        self.assertEqual(self.results["TransposeTiledPerf.Hangs"].kind, "perf")
        self.assertTrue(self.results["TransposeTiledStretch.Optional"].stretch)
        self.assertEqual(R.TestResult("student.06-transpose.CodePolicy.X", "passed").kind, "rule")
        self.assertEqual(R.TestResult("student.06-transpose.Build.Compiles", "failed").kind, "build")
        self.assertEqual(R.TestResult("student.06-transpose.TransposeTiledTechnique.X", "passed").kind, "technique")

    def test_gist(self):
        self.assertEqual(R.gist(self.results["TransposeTiled.Wrong"].output),
                         ["3 of 9 elements differ", "transpose_tiled(3 x 3) wrote a wrong result"])
        equality = "x.cpp:1: Failure\nExpected equality of these values:\n  a\n    Which is: 1\n  b\nthe message\n"
        self.assertEqual(R.gist(equality), ["the message"])
        sanitizer = "========= Invalid __global__ write of size 4 bytes\n========= ERROR SUMMARY: 1 error\n"
        self.assertEqual(R.gist(sanitizer)[0], "========= Invalid __global__ write of size 4 bytes")

    def test_summary_fails_on_a_required_failure_only(self):
        text, passed = R.summary(read_results(), "student", ["r.xml"])
        self.assertFalse(passed)
        self.assertIn("| 06-transpose | 1 | 3 | 0 | 1 / 1 |", text)
        self.assertIn("Result: NOT PASSED", text)
        only_stretch = [R.TestResult("student.06-transpose.XStretch.Y", "failed", labels=["stretch"]),
                        R.TestResult("student.06-transpose.X.Y", "passed")]
        self.assertTrue(R.summary(only_stretch, "student", [])[1])
        self.assertFalse(R.summary([], "student", [])[1])
        # The test workflow's summary (every role): a unit test's made-up perf line is no measurement
        # (on 2 x H200, 2026-11-28, "transpose again: 100.0 GB/s = 0.033 x copy peak" stood among the
        # references' figures as PASSED).
        made_up = "[  PERF    ] transpose again: 100.0 GB/s = 0.033 x copy peak (3000.0 GB/s); required >= 0.750\n"
        workflow = [R.TestResult("unit.support.PerfCheck.TheLineAndDiagnosisAreRecorded", "passed", output=made_up),
                    R.TestResult("solution.06-transpose.TransposeTiledPerf.X", "passed",
                                 output=made_up.replace("transpose again", "transpose_tiled"))]
        text = R.summary(workflow, "every", [])[0]
        self.assertNotIn("transpose again", text)
        self.assertIn("PASSED: transpose_tiled: 100.0 GB/s", text)


RECORD = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" name="AllTests"><testsuite name="S" tests="1">
  <testcase name="C" status="run" result="{result}" classname="S">{inner}</testcase>
</testsuite></testsuites>
"""


class JudgeRecord(unittest.TestCase):
    """A verdict needs ctest's outcome (the exit status) and the program's own record to agree."""

    def verdict(self, status, record):
        with tempfile.TemporaryDirectory() as folder:
            reports = pathlib.Path(folder)
            name = "student.06-transpose.Shapes/S.C/Rows1"
            junit = reports / "ctest.xml"
            skipped = '<skipped message="x"/>' if status == "notrun" else ""
            junit.write_text(f'<testsuite><testcase name="{name}" status="{status}">{skipped}'
                             f'<system-out>out</system-out></testcase></testsuite>')
            if record is not None:
                R.report_file(reports, name).write_text(record)
            (result,) = R.read_junit(junit, reports=reports)
            return result

    def test_agreement(self):
        passed = RECORD.format(result="completed", inner="")
        failed = RECORD.format(result="completed", inner='<failure message="bad"/>')
        skipped = RECORD.format(result="skipped", inner='<skipped message="t.cpp:3&#x0A;no CUDA device: none"/>')
        self.assertEqual(self.verdict("run", passed).outcome, "passed")
        self.assertEqual(self.verdict("fail", passed).outcome, "failed")
        result = self.verdict("notrun", skipped)
        self.assertEqual((result.outcome, result.reason), ("skipped", "no CUDA device: none"))
        for status, record in (("run", None), ("run", failed), ("run", skipped), ("notrun", passed),
                               ("run", "not xml"), ("run", '<testsuites tests="0"/>')):
            result = self.verdict(status, record)
            self.assertEqual(result.outcome, "failed", (status, record))
            self.assertTrue(result.reason.startswith("Tampered"), result.reason)

    def test_only_runs_of_test_programs_need_a_record(self):
        self.assertTrue(R.judged_by_record("student.06-transpose.TransposeTiled.Works"))
        self.assertTrue(R.judged_by_record("fixture.cached.06-transpose.TransposeTiledPerf.X"))
        for name in ("student.06-transpose.Build.Compiles", "student.06-transpose.CodePolicy.X",
                     "fixture.cached.06-transpose.CodePolicy.X", "unit.support.Settings.X"):
            self.assertFalse(R.judged_by_record(name), name)


class ScratchCap(unittest.TestCase):
    """Found by an adversarial review (2026-11-28): fallocate in the scratch folder filled the disk
    that holds every grading's folder, and a classmate's passing program then left an empty
    record. Each grading's scratch folder is now a file system of its own (grading.cap_scratch)."""

    def workspace(self, folder, name):
        ws = G.Workspace(pathlib.Path(folder) / name)
        ws.scratch.mkdir(parents=True)
        return ws

    def test_a_full_scratch_folder_is_its_own_grading_s_only(self):
        with tempfile.TemporaryDirectory() as folder, mock.patch.dict(os.environ, {"COURSE_SCRATCH_GIB": "0.01"}):
            one, other = self.workspace(folder, "one"), self.workspace(folder, "other")
            for ws in (one, other):
                if not G.cap_scratch(ws).endswith("(a tmpfs of its own)"):
                    G.remove_tree(folder)
                    self.skipTest(f"the scratch folder cannot be capped here: {ws.scratch_cap}")
            self.assertEqual(one.scratch_cap, f"0.01 GiB, {G.SCRATCH_INODES} files (a tmpfs of its own)")
            try:
                # Empty files cost no data but the node's memory (an adversarial review, 2026-11-28):
                # their number is capped too.
                made = 0
                with self.assertRaises(OSError) as out_of_inodes:
                    while made <= G.SCRATCH_INODES:
                        (one.scratch / f"e{made}").touch()
                        made += 1
                self.assertEqual(out_of_inodes.exception.errno, errno.ENOSPC)
                self.assertLessEqual(made, G.SCRATCH_INODES)
                for name in range(made):
                    (one.scratch / f"e{name}").unlink()
                with open(one.scratch / "filler", "wb") as filler:
                    with self.assertRaises(OSError) as full:
                        os.posix_fallocate(filler.fileno(), 0, 1 << 30)
                self.assertEqual(full.exception.errno, errno.ENOSPC)
                with open(one.scratch / "more", "wb") as more, self.assertRaises(OSError):
                    more.write(b"x" * (20 << 20))
                    more.flush()
                (other.scratch / "record.xml").write_bytes(b"<testsuites/>" * 1000)  # the classmate's
                self.assertEqual(len((other.scratch / "record.xml").read_bytes()), 13000)
            finally:
                G.remove_tree(folder)
            self.assertEqual(G._mount_points_under(folder), [])
            self.assertFalse(pathlib.Path(folder, "one").exists())

    def test_the_cap_is_a_size_or_none(self):
        ws = G.Workspace(pathlib.Path("/nonexistent"))
        with mock.patch.dict(os.environ, {"COURSE_SCRATCH_GIB": "0"}):
            self.assertEqual(G.cap_scratch(ws), "not capped (COURSE_SCRATCH_GIB=0)")
        with mock.patch.dict(os.environ, {"COURSE_SCRATCH_GIB": "lots"}), self.assertRaises(ValueError):
            G.scratch_limit_bytes()
        with mock.patch.dict(os.environ, {"COURSE_SCRATCH_GIB": ""}):
            self.assertEqual(G.scratch_limit_bytes(), G.DEFAULT_SCRATCH_GIB << 30)


class JudgeWords(unittest.TestCase):
    """The grader reads the judge's words of a case in GoogleTest's record (its failures' messages,
    the perf_line and diagnosis properties of course/perf.h), not in the printed output, which code
    under test writes too. Found by an adversarial review (2026-11-28): a wrong answer that printed
    "out of memory" or a cudaError's name was judged again alone, holding the GPU exclusively (a
    class's time), and a perf line printed by an earlier case was shown as a later case's
    measurement. Without a record (a crash, a time limit) the output is all there is."""
    NAME = "student.06-transpose.TransposeTiledPerf.ReachesThreeQuartersOfCopyPeakAt8192"
    PRINTED = ("cudaMalloc failed at guards.cpp:20: cudaErrorMemoryAllocation: out of memory\n"
               "[  PERF    ] transpose_tiled 8192x8192: 2900.0 GB/s = 0.975 x copy peak (2974.0 GB/s); required >= 0.750\n"
               "transpose_tiled 8192x8192 reached 1683.1 GB/s, 57% of the copy peak (2973.9 GB/s); 75% is needed.\n")
    LINE = ("[  PERF    ] transpose_tiled 8192x8192: 1000.0 GB/s = 0.336 x copy peak (2974.0 GB/s); required &gt;= 0.750; "
            "NOT A MEASUREMENT: the timed calls left a wrong result")

    def result(self, status, record, output):
        with tempfile.TemporaryDirectory() as folder:
            reports = pathlib.Path(folder)
            junit = reports / "ctest.xml"
            text = output.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            junit.write_text(f'<testsuite><testcase name="{self.NAME}" status="{status}">'
                             f'<system-out>{text}</system-out></testcase></testsuite>')
            if record is not None:
                R.report_file(reports, self.NAME).write_text(record)
            (result,) = R.read_junit(junit, reports=reports)
            return result

    def test_printed_words_are_not_the_judges(self):
        record = RECORD.format(result="completed", inner=(
            '<failure message="t.cpp:3&#x0A;C is wrong at index 7"/><properties>'
            f'<property name="perf_line_1" value="{self.LINE}"/>'
            '<property name="diagnosis_1" value="transpose_tiled 8192x8192: stores scattered"/>'
            '</properties>'))
        result = self.result("fail", record, self.PRINTED)
        self.assertEqual((result.outcome, result.recorded), ("failed", "t.cpp:3\nC is wrong at index 7"))
        self.assertFalse(R.shared_fault(result))  # no out of memory, no shortfall, no cudaError in the record
        self.assertEqual(R.fault(result), "")
        self.assertTrue(R.judge_perf_line(result).startswith("transpose_tiled 8192x8192: 1000.0 GB/s"), result.properties)
        self.assertIn("remembered or replayed", R.breach(result))
        self.assertEqual(R.judge_diagnosis(result), "transpose_tiled 8192x8192: stores scattered")
        # A record without a perf line: none, whatever was printed.
        quiet = self.result("fail", RECORD.format(result="completed", inner='<failure message="bad"/>'), self.PRINTED)
        self.assertEqual((R.judge_perf_line(quiet), R.breach(quiet)), ("", ""))

    def test_the_judges_words_in_the_record_count(self):
        oom = self.result("fail", RECORD.format(result="completed", inner=(
            '<failure message="C++ exception with description &quot;cudaMalloc failed at guards.cpp:20: '
            'cudaErrorMemoryAllocation: out of memory&quot; thrown in the test body."/>')), "")
        self.assertTrue(R.shared_fault(oom))
        self.assertEqual(R.fault(oom), "cudaErrorMemoryAllocation")
        short = self.result("fail", RECORD.format(result="completed", inner=(
            '<failure message="t.cpp:9&#x0A;Value of: meets_ratio(c)&#x0A;  Actual: false (transpose_tiled 8192x8192 '
            'reached 1683.1 GB/s, 57% of the copy peak (2973.9 GB/s); 75% is needed.)"/>')), "")
        self.assertTrue(R.shared_fault(short) and R.perf_shortfall_only(short))

    def test_without_a_record_the_output_is_all_there_is(self):
        crashed = R.TestResult(self.NAME, "failed", self.PRINTED, reason="Crashed: the test process ended before ...")
        self.assertIsNone(crashed.recorded)
        self.assertEqual(R.fault(crashed), "cudaErrorMemoryAllocation")
        self.assertTrue(R.judge_perf_line(crashed).startswith("transpose_tiled 8192x8192: 2900.0 GB/s"))

    def test_names_recorded_before_the_judges_do_not_take_its_place(self):
        """Found by an adversarial review (2026-11-28): names the code under test recorded first
        (perf_line_3, then perf_line_z) put its own line after the judge's. The judge now names its
        next one past the highest (course/perf.h), and only key_N names count, in the order recorded."""
        judge = self.LINE.replace("; NOT A MEASUREMENT: the timed calls left a wrong result", "")
        record = RECORD.format(result="completed", inner=(
            '<failure message="bad"/><properties>'
            '<property name="perf_line_99" value="[  PERF    ] mine: 9999.0 GB/s"/>'
            '<property name="perf_line_z" value="[  PERF    ] mine too"/>'
            f'<property name="perf_line_100" value="{judge}"/></properties>'))
        result = self.result("fail", record, "")
        self.assertTrue(R.judge_perf_line(result).startswith("transpose_tiled 8192x8192: 1000.0 GB/s"), result.properties)
        self.assertEqual(len(R.judge_perf_lines(result)), 2)

    def test_a_record_with_a_byte_that_is_not_utf8_is_still_read(self):
        """Found by an adversarial review (2026-11-28): an exception's text with one byte that is not
        UTF-8, copied into the record by GoogleTest, made the record unreadable: the printed words
        counted again, and in a batch every case ran alone."""
        record = RECORD.format(result="completed", inner='<failure message="C++ exception with description &quot;\udcff&quot;"/>')
        data = record.encode("utf-8", errors="surrogateescape")
        with tempfile.TemporaryDirectory() as folder:
            path = pathlib.Path(folder) / "r.xml"
            path.write_bytes(data)
            self.assertIsNotNone(R._parse_report(path))
        with tempfile.TemporaryDirectory() as folder:
            reports = pathlib.Path(folder)
            junit = reports / "ctest.xml"
            junit.write_text(f'<testsuite><testcase name="{self.NAME}" status="fail"><system-out>'
                             'cudaErrorMemoryAllocation: out of memory</system-out></testcase></testsuite>')
            R.report_file(reports, self.NAME).write_bytes(data)
            (result,) = R.read_junit(junit, reports=reports)
            self.assertEqual(result.outcome, "failed")
            self.assertIsNotNone(result.recorded)
            self.assertFalse(R.shared_fault(result))  # the printed words are not read
            # A record that cannot be read at all is no record, and its printed words are not the judge's.
            R.report_file(reports, self.NAME).write_text("<testsuites><testcase")
            (result,) = R.read_junit(junit, reports=reports)
            self.assertEqual((result.recorded, R.shared_fault(result)), ("", False))

    def test_the_judges_fault_and_shortfall_properties(self):
        oom = self.result("fail", RECORD.format(result="completed", inner=(
            '<failure message="C++ exception with description &quot;no&quot; thrown in the test body."/>'
            '<properties><property name="fault_1" value="cudaErrorMemoryAllocation"/></properties>')), "")
        self.assertEqual(R.fault(oom), "cudaErrorMemoryAllocation")
        self.assertTrue(R.shared_fault(oom))
        short = self.result("fail", RECORD.format(result="completed", inner=(
            '<failure message="t.cpp:9 short"/><properties><property name="shortfall_1" value="transpose"/></properties>')), "")
        self.assertTrue(R.shared_fault(short) and R.perf_shortfall_only(short))

    def test_a_batch_passes_each_case_its_own_words(self):
        line = "[  PERF    ] one: 2.0 GB/s = 1.000 x p (2.0 GB/s); required &gt;= 0.500"
        record = batch_record(("S", "A", "completed", f'<properties><property name="perf_line_1" value="{line}"/></properties>'),
                              ("S", "B", "completed", ""))
        with tempfile.TemporaryDirectory() as folder:
            reports = pathlib.Path(folder)
            batch = "student.06-transpose.Batch.turns"
            R.report_file(reports, batch).write_text(record)
            output = ("[ RUN      ] S.A\n[       OK ] S.A\n[ RUN      ] S.B\n"
                      "[  PERF    ] one: 9.0 GB/s = 4.500 x p (2.0 GB/s); required >= 0.500\n[       OK ] S.B\n")
            stood, again, alone = R.judge_batch(R.TestResult(batch, "passed", output),
                                                ["student.06-transpose.S.A", "student.06-transpose.S.B"], {}, reports)
        self.assertEqual([(r.name, r.outcome) for r in stood],
                         [("student.06-transpose.S.A", "passed"), ("student.06-transpose.S.B", "passed")])
        self.assertEqual(R.judge_perf_line(stood[0]), "one: 2.0 GB/s = 1.000 x p (2.0 GB/s); required >= 0.500")
        self.assertEqual(R.judge_perf_line(stood[1]), "")  # its printed line is not the judge's


def batch_record(*cases):
    """GoogleTest's record of a batch: (suite, case, result, inner XML) in the order they ran."""
    suites = {}
    for suite, case, result, inner in cases:
        suites.setdefault(suite, []).append(f'<testcase name="{case}" status="run" result="{result}" time="0.25">'
                                            f'{inner}</testcase>')
    return "<testsuites>" + "".join(f'<testsuite name="{s}">{"".join(c)}</testsuite>'
                                    for s, c in suites.items()) + "</testsuites>"


class Batches(unittest.TestCase):
    """The graders' first pass: of a batch, only the passes before its first other outcome stand."""
    BATCH = "student.05-matmul.Batch.correctness"
    CASES = ["student.05-matmul.MatmulTiledTechnique.Own", "student.05-matmul.Shapes/MatmulTiled.Matches/M1",
             "student.05-matmul.Shapes/MatmulTiled.Matches/M2", "student.05-matmul.Shapes/MatmulTiled.Matches/M3"]
    OUTPUT = ("[ RUN      ] MatmulTiledTechnique.Own\n[       OK ] MatmulTiledTechnique.Own\n"
              "[ RUN      ] Shapes/MatmulTiled.Matches/M1\n[  PERF    ] one\n[       OK ] Shapes/MatmulTiled.Matches/M1\n"
              "[ RUN      ] Shapes/MatmulTiled.Matches/M2\n")
    PASS = ("completed", "")
    FAIL = ("completed", '<failure message="bad"/>')
    SKIP = ("skipped", '<skipped message="t.cpp:3&#x0A;no CUDA device: none visible"/>')
    OTHER_SKIP = ("skipped", '<skipped message="t.cpp:3&#x0A;CUPTI cannot count here"/>')

    def judge(self, outcome, outcomes, cases=None, output=None, properties=None, batch_queues=None, reason=None):
        """(stood as (name, outcome), the cases for another batch, the stood results); the cases
        to run alone in self.alone."""
        suites = [("MatmulTiledTechnique", "Own"), ("Shapes/MatmulTiled", "Matches/M1"),
                  ("Shapes/MatmulTiled", "Matches/M2"), ("Shapes/MatmulTiled", "Matches/M3")]
        with tempfile.TemporaryDirectory() as folder:
            reports = pathlib.Path(folder)
            if outcomes is not None:
                R.report_file(reports, self.BATCH).write_text(
                    batch_record(*[(s, c, *o) for (s, c), o in zip(suites, outcomes)]))
            batch = R.TestResult(self.BATCH, outcome, self.OUTPUT if output is None else output,
                                 reason=reason if reason is not None else ("Failed" if outcome == "failed" else ""))
            stood, again, self.alone = R.judge_batch(batch, cases or self.CASES,
                                                     properties or {self.CASES[1]: (["perf"], 9.0)}, reports,
                                                     batch_queues)
            return [(r.name, r.outcome) for r in stood], again, stood

    def test_a_clean_batch_stands_whole(self):
        stood, again, results = self.judge("passed", [self.PASS] * 4)
        self.assertEqual(stood, [(c, "passed") for c in self.CASES])
        self.assertEqual(again, [])
        self.assertEqual(results[1].output, "[ RUN      ] Shapes/MatmulTiled.Matches/M1\n[  PERF    ] one\n"
                                            "[       OK ] Shapes/MatmulTiled.Matches/M1\n")
        self.assertEqual((results[1].labels, results[1].timeout, results[1].seconds), (["perf"], 9.0, 0.25))

    def test_a_batch_that_crashed_or_timed_out_stands_in_nothing(self):
        """Found by an adversarial review (2026-11-28): the program wrote its own record (five passes
        and a failure) and then crashed, or ran past its time limit; ctest said failed, the record
        had a failure, so the passes stood. Now a batch that did not end by GoogleTest's own
        failure stands in nothing: every case runs alone."""
        for reason in ("Crashed: the test process ended before GoogleTest could report (a crash, abort or signal)",
                       "SEGFAULT: the test process crashed", "Timeout: still running after its 9 s limit"):
            stood, again, _ = self.judge("failed", [self.PASS, self.PASS, self.PASS, self.FAIL], reason=reason)
            self.assertEqual((stood, again, self.alone), ([], [], self.CASES), reason)

    def test_a_first_failure_keeps_its_output_to_the_end(self):
        """Found by an adversarial review (2026-11-28): a case that failed first in its batch printed
        "[ RUN      ] " before the judge's lines, so its output ended there and breach() did not see
        the judge's NOT A MEASUREMENT. A failure that stands keeps the batch's output to its end."""
        output = ("[ RUN      ] MatmulTiledTechnique.Own\n[ RUN      ] \n"
                  "[  PERF    ] NOT A MEASUREMENT: the timed calls left a wrong result\n")
        _, _, results = self.judge("failed", [self.FAIL, self.SKIP, self.SKIP, self.SKIP], output=output)
        self.assertIn("NOT A MEASUREMENT", results[0].output)

    def test_a_record_with_a_document_type_is_no_record(self):
        """GoogleTest writes none; entities could expand a few megabytes into gigabytes (2026-11-28)."""
        with tempfile.TemporaryDirectory() as folder:
            path = pathlib.Path(folder) / "r.xml"
            path.write_text('<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaa">]><testsuites><testsuite name="S">'
                            '<testcase name="c" status="run" result="completed"/></testsuite></testsuites>')
            self.assertEqual(R.read_record(path), ("missing", ""))
            self.assertIsNone(R.read_case_records(path))

    def test_passes_stand_up_to_the_first_other_outcome(self):
        # That case runs alone (put first in a batch, a failure would end it at once); the cases
        # after it, in another batch.
        for outcomes in ([self.PASS, self.FAIL, self.SKIP, self.SKIP], [self.PASS, self.OTHER_SKIP, self.PASS, self.PASS]):
            stood, again, _ = self.judge("failed" if self.FAIL in outcomes else "passed", outcomes)
            self.assertEqual(stood, [(self.CASES[0], "passed")])
            self.assertEqual((again, self.alone), (self.CASES[2:], [self.CASES[1]]))

    def test_the_failure_of_the_first_case_that_ran_stands(self):
        stood, again, results = self.judge("failed", [self.FAIL, self.SKIP, self.SKIP, self.SKIP],
                                           output="[ RUN      ] MatmulTiledTechnique.Own\nt.cpp:9: Failure\nbad\n")
        self.assertEqual((stood, again, self.alone), ([(self.CASES[0], "failed")], self.CASES[1:], []))
        self.assertEqual(results[0].reason, "Failed")
        self.assertIn("t.cpp:9: Failure", results[0].output)

    def test_a_first_failure_under_other_hardware_queues_runs_alone(self):
        # A batch of a program's every case has CUDA's default queues if any case has them.
        queues = {self.CASES[0]: ([], 0.0, "one"), self.CASES[1]: (["perf"], 9.0, "default")}
        stood, again, _ = self.judge("failed", [self.FAIL, self.SKIP, self.SKIP, self.SKIP], properties=queues)
        self.assertEqual((stood, again, self.alone), ([], self.CASES[1:], [self.CASES[0]]))
        # Its own queues: the failure stands.
        queues[self.CASES[0]] = ([], 0.0, "default")
        stood, again, _ = self.judge("failed", [self.FAIL, self.SKIP, self.SKIP, self.SKIP], properties=queues)
        self.assertEqual((stood, again, self.alone), ([(self.CASES[0], "failed")], self.CASES[1:], []))

    def test_a_batch_says_its_own_queues(self):
        # A class's batch runs its perf cases with one queue where no case needs streams side by
        # side: a perf case's pass there stands, its failure as the first case runs alone.
        queues = {self.CASES[0]: (["perf"], 9.0, "default"), self.CASES[1]: ([], 9.0, "one")}
        stood, again, _ = self.judge("passed", [self.PASS] * 4, properties=queues, batch_queues="one")
        self.assertEqual((stood, again, self.alone), ([(c, "passed") for c in self.CASES], [], []))
        stood, again, _ = self.judge("failed", [self.FAIL, self.SKIP, self.SKIP, self.SKIP], properties=queues,
                                     batch_queues="one")
        self.assertEqual((stood, again, self.alone), ([], self.CASES[1:], [self.CASES[0]]))
        # A correctness case of one queue that fails first there stands.
        stood, again, _ = self.judge("failed", [self.FAIL, self.SKIP, self.SKIP, self.SKIP],
                                     properties={self.CASES[0]: ([], 9.0, "one")}, batch_queues="one")
        self.assertEqual((stood, again, self.alone), ([(self.CASES[0], "failed")], self.CASES[1:], []))

    def test_a_case_over_its_own_time_limit_does_not_stand(self):
        slow = ("completed", "")  # 0.25 s against a limit of 0.2 s
        with tempfile.TemporaryDirectory() as folder:
            reports = pathlib.Path(folder)
            R.report_file(reports, self.BATCH).write_text(batch_record(
                ("MatmulTiledTechnique", "Own", *self.PASS), ("Shapes/MatmulTiled", "Matches/M1", *slow)))
            stood, again, alone = R.judge_batch(R.TestResult(self.BATCH, "passed", self.OUTPUT), self.CASES[:2],
                                                {self.CASES[1]: (["correctness"], 0.2)}, reports)
        self.assertEqual(([r.name for r in stood], again, alone), ([self.CASES[0]], [], [self.CASES[1]]))

    def test_a_skip_for_want_of_a_second_gpu_stands(self):
        two = ("skipped", '<skipped message="t.cpp:3&#x0A;needs two GPUs; this machine shows 1"/>')
        stood, again, results = self.judge("passed", [self.PASS, two, self.PASS, self.PASS])
        self.assertEqual((stood, again), ([(c, o) for c, o in zip(self.CASES, ["passed", "skipped", "passed", "passed"])], []))
        self.assertEqual(results[1].reason, "needs two GPUs; this machine shows 1")

    def test_skips_stand_only_where_the_program_found_no_gpu(self):
        no_gpu = "[  COURSE  ] no CUDA device: none visible\n" + self.OUTPUT
        stood, again, results = self.judge("skipped", [self.SKIP] * 4, output=no_gpu)
        self.assertEqual(stood, [(c, "skipped") for c in self.CASES])
        self.assertEqual(results[0].reason, "no CUDA device: none visible")
        stood, again, _ = self.judge("passed", [self.PASS, self.SKIP, self.PASS, self.SKIP], output=no_gpu)
        self.assertEqual((stood, again), ([(c, o) for c, o in zip(self.CASES, ["passed", "skipped", "passed", "skipped"])], []))
        # Said only by the code under test, in a case's output: not the program's start.
        stood, again, _ = self.judge("passed", [self.PASS, self.SKIP, self.PASS, self.PASS],
                                     output=self.OUTPUT + "[  COURSE  ] no CUDA device: none visible\n")
        self.assertEqual((again, self.alone), (self.CASES[2:], [self.CASES[1]]))

    def test_everything_alone_when_the_batch_cannot_be_read_or_disagrees(self):
        for outcome, outcomes in (("failed", None),  # killed: a crash or its time limit, no record
                                  ("failed", [self.PASS] * 4),  # a failing status without a recorded failure
                                  ("passed", [self.PASS, self.FAIL, self.SKIP, self.SKIP]),  # the reverse
                                  ("skipped", [self.SKIP, self.PASS, self.PASS, self.PASS]),
                                  ("passed", [])):
            stood, again, _ = self.judge(outcome, outcomes)
            self.assertEqual((stood, again, self.alone), ([], [], self.CASES), (outcome, outcomes))
        stood, again, _ = self.judge("passed", [self.PASS] * 4, cases=self.CASES[1:])  # a case it should not run
        self.assertEqual((stood, again, self.alone), ([], [], self.CASES[1:]))

    def test_batches_have_no_record_of_their_own(self):
        self.assertFalse(R.judged_by_record(self.BATCH))


class Points(unittest.TestCase):
    def test_score(self):
        graded = {t["name"]: t for t in R.score(read_results(), POINTS)}
        self.assertEqual(graded["06-transpose.TransposeTiled.Works"]["score"], 1)
        self.assertIn("[  PERF", "[  PERF    ] " + graded["06-transpose.TransposeTiled.Works"]["output"])
        self.assertEqual(graded["06-transpose.TransposeTiledPerf.Hangs"]["max_score"], 3)
        self.assertEqual(graded["06-transpose.TransposeTiledPerf.Hangs"]["score"], 0)
        stretch = graded["06-transpose.TransposeTiledStretch.Optional"]
        self.assertEqual((stretch["score"], stretch["max_score"]), (1, 1))  # bonus, shown against its maximum
        skipped = graded["11-deploy-multi-gpu.PeerAccess.Copies"]
        self.assertEqual((skipped["score"], skipped["max_score"], skipped["outcome"]), (0, 0, "not graded"))
        self.assertTrue(skipped["output"].startswith("NOT GRADED: needs two GPUs"))

    def test_chapters_that_do_not_count_are_left_out(self):
        results = [R.TestResult("student.02-transfers.Upload.Works", "passed")]
        self.assertEqual(R.score(results, POINTS), [])

    def test_a_broken_rule_voids_the_chapter(self):
        results = [R.TestResult("student.06-transpose.TransposeTiled.Works", "passed"),
                   R.TestResult("student.06-transpose.CodePolicy.CallsOnlyWhatTheCourseAllows", "failed")]
        graded = R.score(results, POINTS)
        self.assertEqual(sum(t["score"] for t in graded), 0)
        self.assertTrue(graded[0]["output"].startswith("VOID"))

    def test_a_forged_verdict_or_a_replay_voids_the_chapter(self):
        replay = ("[  PERF    ] transpose_tiled 8192x8192: 2900.0 GB/s = 1.000 x the copy peak; required >= 0.750; "
                  "NOT A MEASUREMENT: the timed calls left a wrong result\n")
        for cheat in (R.TestResult("student.06-transpose.TransposeTiled.Other", "failed", reason="Tampered: ..."),
                      R.TestResult("student.06-transpose.TransposeTiledPerf.X", "failed", output=replay,
                                   labels=["perf"])):
            graded = R.score([R.TestResult("student.06-transpose.TransposeTiled.Works", "passed"), cheat], POINTS)
            self.assertEqual(sum(t["score"] for t in graded), 0, cheat.name)
            self.assertTrue(graded[0]["output"].startswith("VOID"))
        slow = R.TestResult("student.06-transpose.TransposeTiledPerf.X", "failed", output="[  PERF    ] 50% of it\n",
                            labels=["perf"])
        graded = R.score([R.TestResult("student.06-transpose.TransposeTiled.Works", "passed"), slow], POINTS)
        self.assertEqual(sum(t["score"] for t in graded), 1)  # too slow is no breach

    def test_a_perf_line_printed_by_the_code_under_test_hides_nothing(self):
        # Student code runs inside the contract calls, before the test prints its own line: the
        # judge's line is the last, and a replay is seen whatever was printed before it.
        fake = "[  PERF    ] transpose_tiled 8192x8192: 2900.0 GB/s = 0.990 x the copy peak; required >= 0.750\n"
        replay = ("[  PERF    ] transpose_tiled 8192x8192: 2900.0 GB/s = 1.000 x the copy peak; required >= 0.750; "
                  "NOT A MEASUREMENT: the timed calls left a wrong result\n")
        cheat = R.TestResult("student.06-transpose.TransposeTiledPerf.X", "failed", output=fake + replay, labels=["perf"])
        self.assertIn("NOT A MEASUREMENT", R.perf_line(cheat.output))
        graded = R.score([R.TestResult("student.06-transpose.TransposeTiled.Works", "passed"), cheat], POINTS)
        self.assertEqual(sum(t["score"] for t in graded), 0)
        self.assertTrue(graded[0]["output"].startswith("VOID"))

    def test_gradescope_format(self):
        results = R.gradescope_results(R.score(read_results(), POINTS), ["a note"])
        self.assertEqual(check_gradescope_shape(results), [])
        self.assertEqual(results["score"], sum(t["score"] for t in results["tests"]))

    def test_class_csv(self):
        with tempfile.TemporaryDirectory() as folder:
            path = pathlib.Path(folder) / "class.csv"
            R.write_class_csv([{"student": "ada", "chapters": {"06-transpose": 3}, "required": 2, "required_max": 4,
                                "stretch": 1, "stretch_max": 1, "total": 3, "max": 5, "status": ""},
                               {"student": "bob", "chapters": {}, "required_max": 4, "stretch_max": 1, "max": 5,
                                "status": "refused: a link"},
                               {"student": "cy", "chapters": {"06-transpose": 0}, "required": 0, "required_max": 4,
                                "stretch": 0, "stretch_max": 1, "total": 0, "max": 5, "status": "",
                                "faults": {"timeout": 2, "crash": 1}}],
                              ["06-transpose", "11-deploy-multi-gpu"], path)
            self.assertEqual(path.read_text().splitlines(),
                             ["student,06-transpose,11-deploy-multi-gpu,required,required_max,stretch,stretch_max,"
                              "total,max,status,faults", "ada,3,,2,4,1,1,3,5,,", "bob,,,,4,,1,,5,refused: a link,",
                              "cy,0,,0,4,0,1,0,5,,timeout x2; crash x1"])
            with open(path) as f:
                rows = list(csv.DictReader(f))  # what the other tools read: the same columns by name
            self.assertEqual((rows[0]["06-transpose"], rows[0]["total"], rows[0]["max"], rows[1]["status"]),
                             ("3", "3", "5", "refused: a link"))
            self.assertEqual([r["faults"] for r in rows], ["", "", "timeout x2; crash x1"])


class Faults(unittest.TestCase):
    """What a submission did wrong at run time, beyond pass and fail: in report.md, results.json
    (its output and extra_data.faults) and class.csv."""
    ILLEGAL = ("[ RUN      ] TransposeTiled.MatchesCpuTranspose\n"
               "unknown file: Failure\nC++ exception with description \"launching transpose (while running) failed at "
               "transpose.cu:40: cudaErrorIllegalAddress: an illegal memory access was encountered\" thrown\n"
               "[  FAILED  ] TransposeTiled.MatchesCpuTranspose (12 ms)\n")

    def results(self):
        t = "student.06-transpose.TransposeTiled."
        return [
            R.TestResult(t + "A", "failed", reason=R._failure_reason(t + "A", "Timeout", "", 20, 20), timeout=20),
            R.TestResult(t + "B", "failed", reason=R._failure_reason(t + "B", "", "", 21, 20), timeout=20),
            R.TestResult(t + "C", "failed", output="[ RUN      ] TransposeTiled.C\n",
                         reason=R._failure_reason(t + "C", "SEGFAULT", "[ RUN      ] TransposeTiled.C\n", 1, 20)),
            R.TestResult(t + "MatchesCpuTranspose", "failed", output=self.ILLEGAL,
                         reason=R._failure_reason(t + "MatchesCpuTranspose", "Failed", self.ILLEGAL, 1, 20)),
            R.TestResult(t + "D", "failed", reason=R.agree("passed", "", "", ("missing", ""))[1]),
            R.TestResult(t + "E", "failed", output="Expected equality\n  Which is: 3\n", reason="Failed"),
            R.TestResult(t + "F", "passed", output="returned cudaErrorInvalidDevice: fine, expected\n"),
            R.TestResult(t + "G", "skipped", reason="no CUDA device"),
        ]

    def test_counts_by_kind(self):
        self.assertEqual(R.faults(self.results()),
                         {"timeout": 2, "crash": 1, "tampered": 1, "cudaErrorIllegalAddress": 1})
        self.assertEqual(list(R.faults(self.results())), ["timeout", "crash", "tampered", "cudaErrorIllegalAddress"])
        self.assertEqual(R.faults([]), {})
        aborted = R.TestResult("student.x.S.C", "failed", reason=R._failure_reason("student.x.S.C", "Subprocess aborted",
                                                                                    "", 1, 20))
        self.assertEqual(R.faults([aborted]), {"crash": 1})
        # Stopped by the GPU turn's watchdog for holding a measurement up (course/gpu_turn.h): its own
        # kind, one a neighbour could cause (a grader judges it again alone).
        said = ("[ RUN      ] TransposeTiled.H\n\n[  COURSE  ] stopped: this program held the GPU for 10.0 s while "
                "another program's measurement waited for it\n")
        stopped = R.TestResult("student.x.S.H", "failed", output=said,
                               reason=R._failure_reason("student.x.S.H", "Failed", said, 11, 20))
        self.assertTrue(stopped.reason.startswith("Stopped: it held the GPU"), stopped.reason)
        self.assertEqual(R.faults([stopped]), {"stopped": 1})
        self.assertTrue(R.shared_fault(stopped))
        self.assertEqual(R.faults_line({"stopped": 1}), "Faults: 1 stopped for holding a measurement up")
        # A name the test only mentions is no fault; compute-sanitizer's finding is.
        mention = R.TestResult("student.x.S.C", "failed", output="expected cudaErrorInvalidDevice, got 0\n", reason="Failed")
        sanitizer = R.TestResult("student.x.S.C", "failed", reason="Failed",
                                 output="========= Program hit cudaErrorMemoryAllocation (error 2) due to \"out of memory\"\n")
        self.assertEqual(R.faults([mention, sanitizer]), {"cudaErrorMemoryAllocation": 1})
        did_not_start = R.TestResult("student.x.Build.ListsItsTests", "failed",
                                     reason=R._failure_reason("student.x.Build.ListsItsTests", "Failed", "", 1, 20))
        self.assertEqual(R.faults([did_not_start]), {"did not start": 1})

    def test_lines_and_columns(self):
        counts = R.faults(self.results())
        line = "Faults: 2 tests past their time limit, 1 crashed, 1 Tampered, 1 cudaErrorIllegalAddress"
        self.assertEqual(R.faults_line(counts), line)
        self.assertEqual(R.faults_line({"timeout": 1}), "Faults: 1 test past its time limit")
        self.assertEqual(R.faults_line({}), "Faults: none")
        self.assertEqual(R.faults_text(counts), "timeout x2; crash x1; tampered x1; cudaErrorIllegalAddress x1")
        self.assertEqual(R.faults_text({}), "")
        graded = R.score(self.results(), POINTS)
        report = R.markdown_report(graded, ["a note"], counts)
        lines = report.splitlines()
        self.assertEqual(lines[lines.index(R.points_line(R.totals(graded)) + ".") + 1], line + ".")  # after Points
        results = R.gradescope_results(graded, ["a note"], counts)
        self.assertEqual(check_gradescope_shape(results), [])
        self.assertEqual(results["output"].splitlines()[:3], [R.points_line(R.totals(graded)), line, "a note"])
        self.assertEqual(results["extra_data"]["faults"], counts)
        self.assertEqual(json.loads(json.dumps(results))["extra_data"]["faults"], counts)
        self.assertIn("Faults: none.", R.markdown_report(graded, [], {}))
        self.assertIn("Faults: none", R.gradescope_results(graded, [], {})["output"])


class OutputFlood(unittest.TestCase):
    """A test that printed more than ctest keeps is named in the faults, passed or failed; ctest cuts
    its middle (grading.test), so GoogleTest's verdict at the end is still read."""

    def test_a_flood_is_a_fault_whatever_the_verdict(self):
        cut = "x" * 100 + "...\n" + R.OUTPUT_CUT + " of 4194304 bytes.]\n[  PASSED  ] 1 test.\n"
        flooded = R.TestResult("student.x.S.A", "passed", output=cut)
        failed = R.TestResult("student.x.S.B", "failed", output=cut, reason="Failed")
        quiet = R.TestResult("student.x.S.C", "passed", output="[  PASSED  ] 1 test.\n")
        self.assertEqual(R.faults([flooded, failed, quiet]), {"output flood": 2})
        self.assertIn("2 printed more than ctest keeps", R.faults_line({"output flood": 2}))

    def test_ctest_cuts_the_middle(self):
        with tempfile.TemporaryDirectory() as folder:
            top = pathlib.Path(folder)
            (top / "CMakeLists.txt").write_text(
                "cmake_minimum_required(VERSION 3.25)\nproject(flood NONE)\nenable_testing()\n"
                "add_test(NAME flood COMMAND python3 -c \"print('head'); print('y' * 5000000); print('the end')\")\n")
            subprocess.run(["cmake", "-S", folder, "-B", folder + "/b"], check=True, capture_output=True)
            junit = top / "j.xml"
            # the options grading.test gives ctest
            subprocess.run(["ctest", "--test-dir", folder + "/b", "--output-junit", str(junit),
                            "--test-output-size-passed", str(1 << 22), "--test-output-size-failed", str(1 << 22),
                            "--test-output-truncation", "middle"], capture_output=True)
            text = junit.read_text()
            self.assertIn("head", text)
            self.assertIn("the end", text)
            self.assertIn(R.OUTPUT_CUT, text)
            self.assertLess(len(text), 5 << 20)


class GpuMemoryWatch(unittest.TestCase):
    """The grader's watch over its programs' GPU memory (gpu_memory.GpuMemoryWatch), fed sample
    lines as nvidia-smi prints them."""

    def test_the_class_budget_is_never_below_the_biggest_tests(self):
        grade_class = load_tool("grade-class")
        budget = grade_class.default_memory_budget
        self.assertEqual(budget("0", {"0": 139.8}), 69.9)  # H200: half
        self.assertEqual(budget("0", {"0": 79.6}), 40.0)  # H100: half would be 39.8, below the biggest tests
        self.assertIsNone(budget("0", {"0": 40.0}))  # a GPU that small: no budget
        self.assertIsNone(budget("0", {"0": None}))
        self.assertIsNone(budget("1", {"0": 79.6}))

    def test_lines(self):
        self.assertEqual(M.parse_sample_line("1234, 512"), (1234, 512))
        self.assertIsNone(M.parse_sample_line("1234, [N/A]"))
        self.assertIsNone(M.parse_sample_line(""))
        self.assertIsNone(M.parse_sample_line("No running processes found"))

    def test_peak_of_its_own_programs_and_a_stop_over_the_budget(self):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # this grader's program
        try:
            mine, other = child.pid, 1  # pid 1 does not descend from this process
            killed = []
            watch = M.GpuMemoryWatch(budget_mib=1000, kill=lambda pid, sig: killed.append(pid))
            for line in (f"{mine}, 600", f"{other}, 70000", f"{mine}, 900", f"{mine}, 800", f"{os.getpid()}, 90000"):
                watch.see(line)
            self.assertEqual((watch.peak_mib, killed, watch.stopped), (900, [], []))
            watch.see(f"{mine}, 70000")
            watch.see(f"{mine}, 71000")  # (stopped once)
            self.assertEqual(killed, [mine])
            self.assertEqual([(pid, mib) for pid, mib, _ in watch.stopped], [(mine, 70000)])
            self.assertEqual(watch.peak_mib, 71000)
            self.assertEqual(len(watch.notes()), 1)
            self.assertIn("Stopped 1 test program for holding 68.4 GiB of GPU memory, over the class's budget of 1.0 GiB",
                          watch.notes()[0])
            without_budget = M.GpuMemoryWatch(kill=lambda pid, sig: killed.append(pid))
            without_budget.see(f"{mine}, 70000")
            self.assertEqual((without_budget.peak_mib, without_budget.stopped, len(killed)), (70000, [], 1))
        finally:
            child.kill()
            child.wait()

    def test_programs_are_known_by_their_parents_not_their_command_lines(self):
        """A program of another grading that names this one's folder in its command line (argv can
        be rewritten) is not this grading's; a grandchild is, whatever it calls itself."""
        with tempfile.TemporaryDirectory() as folder:
            tree = pathlib.Path(folder) / "worker-1" / "course" / "build" / "tests"
            tree.mkdir(parents=True)
            (tree / "t.py").write_text("import time; time.sleep(30)\n")
            neighbour = subprocess.Popen([sys.executable, str(tree / "t.py")])
            # A grader (the middle process) whose program (its child) is called "x".
            grader = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                                       "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)', 'x']); "
                                       "print(p.pid, flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True)
            try:
                program = int(grader.stdout.readline())
                killed = []
                watch = M.GpuMemoryWatch(budget_mib=1, root_pid=grader.pid, kill=lambda pid, sig: killed.append(pid))
                watch.see(f"{neighbour.pid}, 5000")
                self.assertEqual((watch.peak_mib, killed), (0, []))
                watch.see(f"{program}, 5000")
                self.assertEqual((watch.peak_mib, killed), (5000, [program]))
                self.assertFalse(M.descends_from(grader.pid, grader.pid))
                self.assertFalse(M.descends_from(999999999, grader.pid))  # gone
            finally:
                for p in (neighbour, grader):
                    p.kill()
                    p.wait()
                with contextlib.suppress(ProcessLookupError, NameError):
                    os.kill(program, signal.SIGKILL)

    def test_it_reads_a_sampler_until_the_end(self):
        sampler = [sys.executable, "-c", f"print('{os.getpid()}, 300'); print('{os.getpid()}, 200')"]
        with M.GpuMemoryWatch(sampler=sampler, root_pid=os.getppid()) as watch:  # this process descends from its parent
            waited = time.monotonic()  # (a sampler started under load, CI's beside it, took more than 0.5 s)
            while watch.peak_mib != 300 and time.monotonic() - waited < 30:
                time.sleep(0.1)
        self.assertEqual(watch.peak_mib, 300)
        with M.GpuMemoryWatch(sampler=["/nonexistent/nvidia-smi"]) as missing:
            pass
        self.assertFalse(missing.available)


class SharedFaults(unittest.TestCase):
    """A failure that a neighbour on a shared GPU could cause is judged again alone, and that
    verdict counts (grading.judge_shared_faults_alone); the others stand as they were."""

    def test_which_failures_a_neighbour_could_cause(self):
        r = Faults().results()
        self.assertEqual([x.name.rsplit(".", 1)[1] for x in r if R.shared_fault(x)], ["A", "B"])  # the two time-outs
        oom = R.TestResult("student.x.S.C", "failed", reason="Failed",
                           output="cudaMalloc failed at guards.cpp:20: cudaErrorMemoryAllocation: out of memory\n")
        self.assertTrue(R.shared_fault(oom))
        self.assertFalse(R.shared_fault(R.TestResult("student.x.S.C", "passed", output="out of memory\n")))
        # A perf test's shortfall: a neighbour's work beside the measurement could have caused it.
        slow = R.TestResult("student.06-transpose.TransposeTiledPerf.ReachesThreeQuartersOfCopyPeakAt8192", "failed",
                            reason="Failed", output="Actual: false (transpose_tiled 8192x8192 reached 1683.1 GB/s, 57% "
                            "of the device-to-device copy peak (2973.9 GB/s); 75% is needed. Hint: ...)\n")
        self.assertTrue(R.shared_fault(slow))
        wrong = R.TestResult("student.06-transpose.TransposeTiledPerf.ReachesThreeQuartersOfCopyPeakAt8192", "failed",
                             reason="Failed", output="transpose_tiled is wrong at 8192 x 8192, so it was not timed\n")
        self.assertFalse(R.shared_fault(wrong))
        # A skip for want of free device memory: beside other gradings, their programs held it.
        short = R.TestResult("student.08-execution-config.ProcessBatchesAsyncDeviceWide.TheLargestWorkTheContractAllows",
                             "skipped", reason="this test needs 35.4332 GB of free device memory (in and out of "
                             "2^31 - 1 floats, ...), 20.1 GB are free")
        self.assertTrue(R.shared_fault(short))
        self.assertEqual(R.fault(short), "")  # (not a fault of the submission's)
        self.assertFalse(R.shared_fault(R.TestResult("student.11.PeerAccess.Copies", "skipped",
                                                     reason="devices 0 and 1 cannot access each other's memory here")))
        # Only the recorded reason counts: the output is the program's to print, so a skip with
        # another reason whose code printed the words is not judged again.
        printed = R.TestResult("student.11.PeerAccess.Copies", "skipped", reason="needs two GPUs; this machine shows 1",
                               output="this test needs 35.4332 GB of free device memory, 20.1 GB are free\n")
        self.assertFalse(R.shared_fault(printed))

    def test_judged_again_alone_and_that_verdict_counts(self):
        import tempfile as T
        ws = G.Workspace(pathlib.Path(T.mkdtemp()))
        t = "student.06-transpose.TransposeTiled."
        graded = [R.TestResult(t + "A", "failed", reason=R._failure_reason(t + "A", "Timeout", "", 20, 20), timeout=20),
                  R.TestResult(t + "E", "failed", output="Expected equality\n", reason="Failed"),
                  R.TestResult(t + "F", "passed")]
        calls = []

        def run(phase, selection, visible, locks, shared, jobs, turn_lock=None, pass_env=None, tests=None):
            calls.append((phase, visible, locks, shared, jobs, pathlib.Path(pass_env["COURSE_TEST_ONLY"]).read_text()))
            return [R.TestResult(t + "A", "passed"), R.TestResult(t + "E", "passed")]  # E was not asked for
        out = G.judge_shared_faults_alone(ws, graded, run, "1", ["1"], "turns")
        self.assertEqual([(x.name[-1], x.outcome) for x in out], [("A", "passed"), ("E", "failed"), ("F", "passed")])
        self.assertEqual(calls, [("again alone", "1", ["1"], False, 1, t + "A\n")])  # the GPU's lock held exclusively
        self.assertEqual(ws.rejudged, [t + "A"])
        calls.clear()
        self.assertEqual(G.judge_shared_faults_alone(ws, graded[1:], run, "1", ["1"], "turns"), graded[1:])
        self.assertEqual((calls, ws.rejudged), ([], []))
        # More than REJUDGE_AT_MOST such failures: some alone first, spread over the list. One failed so
        # again there: they are the submission's own (an endless kernel), and the rest are not judged again ...
        timeout = R._failure_reason(t + "T", "Timeout", "", 20, 20)
        many = [R.TestResult(t + f"T{i}", "failed", reason=timeout, timeout=20) for i in range(G.REJUDGE_AT_MOST + 2)]
        asked = []

        def again(verdict):
            def run(phase, selection, visible, locks, shared, jobs, turn_lock=None, pass_env=None, tests=None):
                names = pathlib.Path(pass_env["COURSE_TEST_ONLY"]).read_text().split()
                asked.append(names)
                return [R.TestResult(n, verdict, reason=timeout if verdict == "failed" else "", timeout=20) for n in names]
            return run
        out = G.judge_shared_faults_alone(ws, many, again("failed"), "1", ["1"], "turns")
        self.assertEqual([len(a) for a in asked], [G.REJUDGE_AT_MOST])
        self.assertEqual(asked[0], [t + f"T{i}" for i in (0, 1, 2, 3)])  # (6 // 4 = 1 apart)
        self.assertEqual([x.outcome for x in out], ["failed"] * len(many))
        asked.clear()
        eleven = [R.TestResult(t + f"U{i}", "failed", reason=timeout, timeout=20) for i in range(11)]
        G.judge_shared_faults_alone(ws, eleven, again("failed"), "1", ["1"], "turns")
        self.assertEqual(asked, [[t + f"U{i}" for i in (0, 2, 4, 6)]])  # spread over the list
        # ... passed there, a neighbour caused them (a class beside an endless kernel): the rest alone too.
        asked.clear()
        out = G.judge_shared_faults_alone(ws, many, again("passed"), "1", ["1"], "turns")
        self.assertEqual([len(a) for a in asked], [G.REJUDGE_AT_MOST, 2])
        self.assertEqual([x.outcome for x in out], ["passed"] * len(many))
        self.assertEqual(len(ws.rejudged), len(many))


class FailFast(unittest.TestCase):
    """grading.test(fail_fast=True) (tools/mutate.py): the tests that may run side by side first,
    and nothing more once a failure stands; a failure a neighbour could cause does not stop it."""

    def grade(self, verdicts, lock_dir=None, batches=False, rejudged=lambda graded: graded):
        """The ctest selections that ran, with ctest faked: each run's results are the next of
        `verdicts` (lists of (case, outcome, reason))."""
        from unittest import mock
        ws = G.Workspace(pathlib.Path(tempfile.mkdtemp()), sandbox=False)
        ws.build.mkdir(parents=True)
        ran, left = [], list(verdicts)
        t = "student.06-transpose.S."

        def fake_run(command, **kwargs):
            ran.append(" ".join(command[command.index("-L"):command.index("-R")]))
            junit = pathlib.Path(command[command.index("--output-junit") + 1])
            junit.write_text("x")
            return subprocess.CompletedProcess(command, 0)

        def read_junit(junit, properties, reports=None):
            return [R.TestResult(t + case, outcome, reason=reason, timeout=20) for case, outcome, reason in left.pop(0)]

        def judged_again(ws, graded, *args, considered=None, **kwargs):  # (as the real one, each suspect once)
            if considered is not None:
                new = {r.name for r in graded if R.shared_fault(r)} - considered
                if not new:
                    return graded
                considered.update(new)
            return rejudged(graded)
        with mock.patch.object(G.subprocess, "run", fake_run), mock.patch.object(R, "read_junit", read_junit), \
                mock.patch.object(R, "test_properties", lambda *a, **k: {}), \
                mock.patch.object(G, "judge_shared_faults_alone", judged_again):
            graded, *_ = G.test(ws, ["06-transpose"], {}, gpu="0" if lock_dir else None, all_gpus="0,1",
                                lock_dir=lock_dir, batches=batches, fail_fast=True)
        return ran, [(r.name.rsplit(".", 1)[1], r.outcome) for r in graded]

    def test_stops_after_the_phase_where_a_failure_stands(self):
        ran, graded = self.grade([[("A", "failed", "Failed"), ("B", "passed", "")], [("C", "passed", "")]])
        self.assertEqual(ran, ["-L ^student$ -LE ^alone$"])  # the measurements never ran
        self.assertEqual(graded, [("A", "failed"), ("B", "passed")])

    def test_a_time_limit_stands_alone_and_beside_others_once_judged_again(self):
        timeout = R._failure_reason("student.06-transpose.S.A", "Timeout", "", 20, 20)
        ran, graded = self.grade([[("A", "failed", timeout)], [("C", "passed", "")]])
        self.assertEqual(ran, ["-L ^student$ -LE ^alone$"])  # graded alone: the time limit is its own
        # Beside other gradings it is judged again with the GPU to itself first: passed there, it goes on ...
        ran, graded = self.grade([[("A", "failed", timeout)], [("C", "passed", "")], [("M", "passed", "")]],
                                 tempfile.mkdtemp(), rejudged=lambda graded: [R.TestResult(graded[0].name, "passed")])
        self.assertEqual(graded, [("A", "passed"), ("C", "passed"), ("M", "passed")])
        self.assertEqual(len(ran), 3)  # and the multi-GPU phase
        # ... failed again, it stands (a kernel that never ends is killed at its first time limit).
        ran, graded = self.grade([[("A", "failed", timeout)], [("C", "passed", "")]], tempfile.mkdtemp(),
                                 rejudged=lambda graded: graded)
        self.assertEqual((len(ran), graded), (1, [("A", "failed")]))

    def test_with_the_class_turns_the_cheap_tests_still_come_first(self):
        lock_dir = tempfile.mkdtemp()
        ran, _ = self.grade([[("A", "passed", "")], [("C", "failed", "Failed")], [("M", "passed", "")]], lock_dir)
        # Two phases in the class's turns (not one), and no multi-GPU phase after the failure.
        self.assertEqual(ran, ["-L ^student$ -LE ^(alone|multi-gpu)$", "-L ^student$ -L ^alone$ -LE ^multi-gpu$"])


class SeveralGpus(unittest.TestCase):
    """grading.test in a class on several GPUs: the tests that use every GPU see every GPU (this
    grading's first), take turns through every GPU's turn file, and run beside the grading's other
    tests from the start, their ctest in a folder of its own."""

    def test_the_multi_gpu_tests_run_beside_the_others_with_every_turn_file(self):
        from unittest import mock
        ws = G.Workspace(pathlib.Path(tempfile.mkdtemp()), sandbox=False)
        ws.build.mkdir(parents=True)
        lock_dir = pathlib.Path(tempfile.mkdtemp())
        runs, lock = {}, threading.Lock()

        def fake_run(command, **kwargs):
            junit = pathlib.Path(command[command.index("--output-junit") + 1])
            started = time.monotonic()
            if "multi-gpu" not in junit.name:
                time.sleep(0.5)  # the one-GPU tests take a while: the multi-GPU ones start meanwhile
            with lock:
                runs[junit.name] = (started, time.monotonic(), command, kwargs["env"])
            junit.write_text("x")
            return subprocess.CompletedProcess(command, 0)

        def read_junit(junit, properties, reports=None):
            return [R.TestResult(f"student.11-deploy-multi-gpu.S.{pathlib.Path(junit).stem}", "passed")]
        with mock.patch.object(G.subprocess, "run", fake_run), mock.patch.object(R, "read_junit", read_junit), \
                mock.patch.object(R, "test_properties", lambda *a, **k: {}):
            graded, *_ = G.test(ws, ["11-deploy-multi-gpu"], {}, gpu="1", all_gpus="0,1", lock_dir=str(lock_dir),
                                batches=False)
        self.assertEqual(sorted(r.name.rsplit(".", 1)[1] for r in graded),
                         ["ctest-multi-gpu", "ctest-side-by-side-and-alone"])
        main_start, main_end, main_command, main_env = runs["ctest-side-by-side-and-alone.xml"]
        multi_start, _, multi_command, multi_env = runs["ctest-multi-gpu.xml"]
        self.assertLess(multi_start, main_end, "the multi-GPU tests waited for the others")
        self.assertEqual(main_env["CUDA_VISIBLE_DEVICES"], "1")
        self.assertEqual(main_env["COURSE_GPU_LOCK"], str(lock_dir / "gpu-1.turn"))
        self.assertIn("^multi-gpu$", main_command)  # left out there (-LE)
        self.assertEqual(multi_env["CUDA_VISIBLE_DEVICES"], "1,0")
        self.assertEqual(multi_env["COURSE_GPU_LOCK"], f"{lock_dir / 'gpu-0.turn'},{lock_dir / 'gpu-1.turn'}")
        test_dir = pathlib.Path(multi_command[multi_command.index("--test-dir") + 1])
        self.assertEqual(test_dir, ws.root / "ctest-every-gpu")
        self.assertIn(str(ws.build), (test_dir / "CTestTestfile.cmake").read_text())
        for gpu in ("0", "1"):  # every GPU's turn files exist (the programs open them read-only: they make none)
            for end in ("", ".gate", ".queue", ".context"):
                self.assertTrue((lock_dir / f"gpu-{gpu}.turn{end}").exists())
        # One context slot by default; COURSE_CONTEXT_SLOTS=3: two more on each GPU (course/gpu_turn.h).
        self.assertEqual(sorted(path.name for path in lock_dir.glob("gpu-*.turn.context-*")), [])
        three_slots = pathlib.Path(tempfile.mkdtemp())
        with mock.patch.object(G.subprocess, "run", fake_run), mock.patch.object(R, "read_junit", read_junit), \
                mock.patch.object(R, "test_properties", lambda *a, **k: {}), mock.patch.dict(os.environ, {"COURSE_CONTEXT_SLOTS": "3"}):
            G.test(ws, ["11-deploy-multi-gpu"], {}, gpu="1", all_gpus="0,1", lock_dir=str(three_slots), batches=False)
        self.assertEqual(sorted(path.name for path in three_slots.glob("gpu-*.turn.context-*")),
                         [f"gpu-{g}.turn.context-{n}" for g in (0, 1) for n in (1, 2)])
        # The same folder graded again with one: the slots left there are gone (a program would use them).
        with mock.patch.object(G.subprocess, "run", fake_run), mock.patch.object(R, "read_junit", read_junit), \
                mock.patch.object(R, "test_properties", lambda *a, **k: {}):
            G.test(ws, ["11-deploy-multi-gpu"], {}, gpu="1", all_gpus="0,1", lock_dir=str(three_slots), batches=False)
        self.assertEqual(sorted(path.name for path in three_slots.glob("gpu-*.turn.context-*")), [])
        with mock.patch.dict(os.environ, {"COURSE_CONTEXT_SLOTS": "two"}), self.assertRaisesRegex(ValueError, "1, 2 or 3"):
            G.test(ws, ["11-deploy-multi-gpu"], {}, gpu="1", all_gpus="0,1", lock_dir=str(three_slots), batches=False)


    def test_the_multi_gpu_cases_run_as_one_batch_and_what_did_not_stand_one_by_one(self):
        """With batches, a class on several GPUs runs the multi-GPU cases in one program
        (Batch.every-gpu: one context on each GPU for them all), beside the grading's other
        batches and never among them; the cases whose verdicts did not stand run one by one."""
        from unittest import mock
        ws = G.Workspace(pathlib.Path(tempfile.mkdtemp()), sandbox=False)
        ws.build.mkdir(parents=True)
        lock_dir = pathlib.Path(tempfile.mkdtemp())
        c = "student.11-deploy-multi-gpu."
        one_gpu_cases = [c + "ComputeOnDevicesCalls.NothingToDo", c + "FatBinary.Embeds"]
        every_gpu_cases = [c + "MultiGpu.MatchesCpuOnOneDevice", c + "PeerAccess.CopiesBetweenTwoDevices",
                           c + "MultiGpuPerf.TwoGpusAtLeast1_7xOne"]
        listed = {c + "Batch.turns": one_gpu_cases, c + "Batch.every-gpu": every_gpu_cases}
        runs, lock = {}, threading.Lock()

        def fake_run(command, **kwargs):
            junit = pathlib.Path(command[command.index("--output-junit") + 1])
            with lock:
                runs[junit.name] = (command, kwargs["env"])
            junit.write_text("x")
            return subprocess.CompletedProcess(command, 0)

        def read_junit(junit, properties, reports=None):
            name = pathlib.Path(junit).name
            if name == "ctest-multi-gpu-batch.xml":
                return [R.TestResult(c + "Batch.every-gpu", "failed"),
                        R.TestResult(c + "MultiGpu.UsesOnlyVisibleDevices.CUDA_VISIBLE_DEVICES_1", "passed")]
            if name == "ctest-multi-gpu-one-by-one.xml":
                return [R.TestResult(every_gpu_cases[2], "failed", reason="Failed")]
            return [R.TestResult(c + "Batch.turns", "passed")]

        def judge_batch(batch, cases, properties=None, reports=None, batch_queues=None):
            if batch.name.endswith("every-gpu"):  # two passes, then a failure after them: it runs alone
                return [R.TestResult(n, "passed") for n in cases[:2]], [], cases[2:]
            return [R.TestResult(n, "passed") for n in cases], [], []
        with mock.patch.object(G.subprocess, "run", fake_run), mock.patch.object(R, "read_junit", read_junit), \
                mock.patch.object(R, "test_properties", lambda *a, **k: {}), \
                mock.patch.object(R, "batch_cases", lambda *a, **k: dict(listed)), \
                mock.patch.object(R, "judge_batch", judge_batch):
            graded, *_ = G.test(ws, ["11-deploy-multi-gpu"], {}, gpu="1", all_gpus="0,1", lock_dir=str(lock_dir))
        verdicts = {r.name: r.outcome for r in graded}
        self.assertEqual(verdicts, {**{n: "passed" for n in one_gpu_cases + every_gpu_cases[:2]},
                                    every_gpu_cases[2]: "failed",
                                    c + "MultiGpu.UsesOnlyVisibleDevices.CUDA_VISIBLE_DEVICES_1": "passed"})
        command, env = runs["ctest-multi-gpu-batch.xml"]
        self.assertEqual(env["COURSE_TEST_BATCHES"], "queues")
        self.assertEqual(env["COURSE_GPU_LOCK"], f"{lock_dir / 'gpu-0.turn'},{lock_dir / 'gpu-1.turn'}")
        command, env = runs["ctest-multi-gpu-one-by-one.xml"]
        self.assertEqual(pathlib.Path(env["COURSE_TEST_ONLY"]).read_text(), every_gpu_cases[2] + "\n")
        self.assertNotIn("COURSE_TEST_BATCHES", env)
        # The one-GPU rounds ran only their own batch, and once (every case settled).
        self.assertEqual(sorted(n for n in runs if "multi-gpu" not in n), ["ctest-side-by-side-and-alone-batches.xml"])


class SyscallLog(unittest.TestCase):
    """The sandbox supervisor's log, "<number> <times> <command>" per call outside the list, read
    into {name: times} and the programs that made them (grading.syscalls_outside)."""

    def test_counts_and_programs(self):
        import tempfile as T
        ws = G.Workspace(pathlib.Path(T.mkdtemp()))
        ws.syscall_log.write_text("57 3 /b/student_ch06_tests --gtest_filter=A.B\n62 1 /b/student_ch06_tests\n"
                                  "57 2 /b/student_ch07_tests\nnot a line\n"
                                  "refused-write /proc/self/mem /b/student_ch06_tests --gtest_filter=A.B\n")
        counts, programs = G.syscalls_outside(ws)
        names = G._syscall_names()
        fork, kill = names.get(57, "syscall 57"), names.get(62, "syscall 62")
        self.assertEqual(counts, {fork: 5, kill: 1, "open for writing /proc/self/mem": 1})
        self.assertEqual(programs[fork], ["student_ch06_tests", "student_ch07_tests"])
        ws.syscall_log.unlink()
        self.assertEqual(G.syscalls_outside(ws), ({}, {}))

    def test_refused_metadata_changes(self):
        """A "refused-metadata <path> <command>" line (fchmod or utimensat of a file outside the -w folders,
        refused by the supervisor) is a fault named after the file, counted once per line."""
        import tempfile as T
        ws = G.Workspace(pathlib.Path(T.mkdtemp()))
        ws.syscall_log.write_text("refused-metadata /graded/.locks/gpu-0.turn /b/student_ch06_tests --gtest_filter=A.B\n"
                                  "refused-metadata /graded/.locks/gpu-0.turn /b/student_ch07_tests\n"
                                  "refused-metadata /secret/answer.txt /b/student_ch07_tests\n"
                                  "refused-write /proc/self/mem /b/student_ch06_tests\n")
        counts, _ = G.syscalls_outside(ws)
        self.assertEqual(counts, {"change the metadata of /graded/.locks/gpu-0.turn": 2,
                                  "change the metadata of /secret/answer.txt": 1,
                                  "open for writing /proc/self/mem": 1})


def course_like(outcomes):
    """A graded course like the real one: per chapter required tests of every kind and stretch tests,
    each with the outcome outcomes(kind, stretch) gives."""
    results = []
    for chapter in ("06-transpose", "11-deploy-multi-gpu"):
        results.append(R.TestResult(f"student.{chapter}.Build.Compiles", outcomes("build", False)))
        results.append(R.TestResult(f"student.{chapter}.CodePolicy.CallsOnlyWhatTheCourseAllows", "passed"))
        for i in range(3):
            results.append(R.TestResult(f"student.{chapter}.Kernel.Works{i}", outcomes("correctness", False)))
        results.append(R.TestResult(f"student.{chapter}.KernelTechnique.Tiles", outcomes("technique", False)))
        results.append(R.TestResult(f"student.{chapter}.KernelPerf.Fast", outcomes("perf", False), labels=["perf"]))
        results.append(R.TestResult(f"student.{chapter}.KernelStretch.Works", outcomes("correctness", True),
                                    labels=["stretch"]))
        results.append(R.TestResult(f"student.{chapter}.KernelStretchPerf.Fast", outcomes("perf", True),
                                    labels=["perf", "stretch"]))
    return results


class Totals(unittest.TestCase):
    """Every place a score is shown, it is shown against a maximum it cannot exceed: the required
    points and theirs, the stretch bonus and its, the total and max = required_max + stretch_max."""
    POINTS = dict(POINTS, stretch_bonus=2)
    REQUIRED_MAX = 2 * (3 * 1 + 2 + 3)  # two chapters: three correctness tests, a technique and a perf test
    STRETCH_MAX = 2 * 2 * 2  # two chapters, two stretch tests, a bonus of 2

    def check_everywhere(self, graded, expected):
        row = R.totals(graded)
        self.assertEqual(row, expected)
        self.assertLessEqual(row["total"], row["max"])
        self.assertEqual(row["max"], row["required_max"] + row["stretch_max"])
        chapters = R.chapter_totals(graded)
        for key in R.TOTAL_KEYS:
            self.assertEqual(sum(c[key] for c in chapters.values()), row[key], key)
        for c in chapters.values():
            self.assertLessEqual(c["total"], c["max"])
            self.assertEqual(c["score"], c["total"])
        results = R.gradescope_results(graded, ["a note"])
        self.assertEqual(check_gradescope_shape(results), [])
        self.assertEqual(results["score"], row["total"])
        self.assertEqual(sum(t["max_score"] for t in results["tests"]), row["max"])  # what Gradescope shows it against
        self.assertTrue(all(t["score"] <= t["max_score"] for t in results["tests"]))
        self.assertEqual(results["extra_data"]["points"], row)
        self.assertTrue(results["output"].startswith(R.points_line(row)))
        self.assertEqual(R.totals(results["tests"]), row)  # results.json's tests say the same (tags: stretch)
        report = R.markdown_report(graded, ["a note"])
        self.assertIn(R.points_line(row), report)
        self.assertIn(f"| **total** | **{row['required']}** | **{row['required_max']}** | **{row['stretch']}** | "
                      f"**{row['stretch_max']}** | **{row['total']}** | **{row['max']}** |", report)
        return row

    def test_a_reference_with_every_stretch_test_passed_scores_the_maximum(self):
        graded = R.score(course_like(lambda kind, stretch: "passed"), self.POINTS)
        row = self.check_everywhere(graded, {"required": self.REQUIRED_MAX, "required_max": self.REQUIRED_MAX,
                                             "stretch": self.STRETCH_MAX, "stretch_max": self.STRETCH_MAX,
                                             "total": self.REQUIRED_MAX + self.STRETCH_MAX,
                                             "max": self.REQUIRED_MAX + self.STRETCH_MAX})
        self.assertEqual(row["total"], row["max"])

    def test_a_starter_sums_right(self):
        # The untouched starter: it builds and keeps the code policy, the correctness tests mostly
        # fail, no technique, perf or stretch point.
        graded = R.score(course_like(lambda kind, stretch: "passed" if kind == "build" else "failed"), self.POINTS)
        graded[2]["outcome"], graded[2]["score"] = "passed", 1  # one correctness test a starter happens to pass
        self.check_everywhere(graded, {"required": 1, "required_max": self.REQUIRED_MAX, "stretch": 0,
                                       "stretch_max": self.STRETCH_MAX, "total": 1,
                                       "max": self.REQUIRED_MAX + self.STRETCH_MAX})

    def test_not_graded_and_void(self):
        # Without a GPU: the GPU tests not graded carry neither points nor a maximum.
        graded = R.score(course_like(lambda kind, stretch: "passed" if kind == "build" else "skipped"), self.POINTS)
        self.check_everywhere(graded, dict.fromkeys(R.TOTAL_KEYS, 0))
        # A breach voids the chapter's points, stretch bonus included, not its maxima.
        results = course_like(lambda kind, stretch: "passed")
        results[1] = R.TestResult(results[1].name, "failed")  # 06-transpose's code policy
        graded = R.score(results, self.POINTS)
        half = self.REQUIRED_MAX // 2, self.STRETCH_MAX // 2
        self.check_everywhere(graded, {"required": half[0], "required_max": self.REQUIRED_MAX, "stretch": half[1],
                                       "stretch_max": self.STRETCH_MAX, "total": sum(half),
                                       "max": self.REQUIRED_MAX + self.STRETCH_MAX})

    def test_class_files(self):
        """grade-submission's files of each student, then grade-class's class.csv from them: the class's
        maxima for every row (a chapter that did not build lists only its Build test), total <= max."""
        tools = {}
        for name in ("grade-submission", "grade-class"):
            loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), str(COURSE / "tools" / name))
            spec = importlib.util.spec_from_loader(loader.name, loader)
            tools[name] = importlib.util.module_from_spec(spec)
            loader.exec_module(tools[name])
        everything = course_like(lambda kind, stretch: "passed")
        did_not_build = [r for r in everything if r.chapter == "11-deploy-multi-gpu"] + [
            R.TestResult("student.06-transpose.Build.Compiles", "failed")]
        students = {"ref": everything, "starter": course_like(lambda kind, stretch: "failed"),
                    "broken": did_not_build, "old": everything}
        timing = {"build_seconds": 1, "test_seconds": 2, "total_seconds": 3}
        with tempfile.TemporaryDirectory() as folder:
            out = pathlib.Path(folder)
            for student, results in students.items():
                (out / student).mkdir()
                report, row = tools["grade-submission"].write_reports(out / student, results, self.POINTS, [], timing)
                self.assertLessEqual(row["total"], row["max"])
                self.assertIn(R.points_line(row), report)
            # A grading from before required and stretch were apart: a stretch test's max_score was 0.
            old = json.loads((out / "old" / "results.json").read_text())
            for t in old["tests"]:
                t["max_score"] = 0 if "stretch" in t["tags"] else t["max_score"]
            (out / "old" / "results.json").write_text(json.dumps(old))
            timing_json = json.loads((out / "old" / "timing.json").read_text())
            (out / "old" / "timing.json").write_text(json.dumps({k: v for k, v in timing_json.items()
                                                                 if k not in R.TOTAL_KEYS or k in ("total", "max")}))
            (out / "refused").mkdir()
            (out / "refused" / "refused.txt").write_text("refused: a symbolic link\n")
            (out / "class.json").write_text(json.dumps({"students": [*students, "refused"],
                                                        "chapters": ["06-transpose", "11-deploy-multi-gpu"]}))
            # A grading whose every case ran one by one (its batches stood in nothing) is named.
            starter_timing = json.loads((out / "starter" / "timing.json").read_text())
            starter_timing.update(cases_run_alone=10**6, test_user="uid 5, gid 5 (its own)",
                                  proc="its own: no process of another user, no file lock of the node")
            (out / "starter" / "timing.json").write_text(json.dumps(starter_timing))
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                tools["grade-class"].collect(out)
            self.assertIn("grade-class: 1 gradings ran most of their cases one by one (class-timing.csv's "
                          "cases_run_alone): starter;", printed.getvalue())
            with open(out / "class-timing.csv") as f:
                timing_rows = {row["student"]: row for row in csv.DictReader(f)}
            self.assertEqual((timing_rows["starter"]["cases_run_alone"], timing_rows["starter"]["test_user"],
                              timing_rows["starter"]["proc"]),
                             ("1000000", "uid 5, gid 5 (its own)", "its own: no process of another user, no file lock "
                                                                   "of the node"))
            self.assertEqual(timing_rows["ref"]["cases_run_alone"], "")
            with open(out / "class.csv") as f:
                rows = {row["student"]: row for row in csv.DictReader(f)}
        whole = {"required_max": str(self.REQUIRED_MAX), "stretch_max": str(self.STRETCH_MAX),
                 "max": str(self.REQUIRED_MAX + self.STRETCH_MAX)}
        bonus = self.POINTS["stretch_bonus"]
        for student, required, stretch, status in (("ref", self.REQUIRED_MAX, self.STRETCH_MAX, ""),
                                                   ("starter", 0, 0, ""),
                                                   ("broken", self.REQUIRED_MAX // 2, self.STRETCH_MAX // 2, ""),
                                                   ("old", self.REQUIRED_MAX, 2 * 2 * bonus, ""),
                                                   ("refused", "", "", "refused: a symbolic link")):
            total = required + stretch if status == "" else ""
            self.assertEqual({k: rows[student][k] for k in (*R.TOTAL_KEYS, "status")},
                             {**whole, "required": str(required), "stretch": str(stretch), "total": str(total),
                              "status": status}, student)
            if total != "":
                self.assertLessEqual(int(rows[student]["total"]), int(rows[student]["max"]))
        self.assertEqual(rows["ref"]["total"], rows["ref"]["max"])
        self.assertEqual(rows["ref"]["06-transpose"], str((self.REQUIRED_MAX + self.STRETCH_MAX) // 2))
        self.assertEqual(rows["broken"]["06-transpose"], "0")


    def test_class_maxima_are_not_raised_by_a_faulty_minority(self):
        """A test that this machine does not grade (skipped in the right answers) but that crashing
        submissions failed before the skip does not count towards the class's maximum; a test that
        one submission passed counts, whatever the others did; one that a student made skip for
        themself alone does not lower it (grade-class's class_maxima, 2026-11-27)."""
        loader = importlib.machinery.SourceFileLoader("grade_class", str(COURSE / "tools" / "grade-class"))
        spec = importlib.util.spec_from_loader(loader.name, loader)
        grade_class = importlib.util.module_from_spec(spec)
        loader.exec_module(grade_class)

        def test(name, status, points, stretch=False):
            tags = ["stretch"] if stretch else []
            if status == "not graded":
                return {"name": name, "status": "passed", "score": 0, "max_score": 0, "tags": tags + ["not graded"]}
            return {"name": name, "status": status, "score": points if status == "passed" else 0,
                    "max_score": points, "tags": tags}

        def right(peer="not graded", own="passed"):
            return [test("11-deploy-multi-gpu.MultiGpu.MatchesCpu", own, 1),
                    test("11-deploy-multi-gpu.PeerAccess.CopiesBetweenTwoDevices", peer, 1),
                    test("06-transpose.TransposeTiledPerf.Reaches", "passed", 3),
                    test("06-transpose.TransposeStretch.Bulk", "passed", 1, stretch=True)]
        crashed = [test(t["name"], "failed", t["max_score"] or 1, "stretch" in t["tags"]) for t in right()]
        students = {"ref-1": right(), "ref-2": right(), "ref-3": right(own="not graded"),
                    "crash-1": crashed, "crash-2": crashed, "no-build": []}
        with tempfile.TemporaryDirectory() as folder:
            out = pathlib.Path(folder)
            for student, tests in students.items():
                (out / student).mkdir()
                (out / student / "results.json").write_text(json.dumps({"tests": tests}))
                (out / student / "timing.json").write_text("{}")
            most, split = grade_class.class_maxima(out, list(students))
            self.assertEqual(most, {"required_max": {"06-transpose": 3, "11-deploy-multi-gpu": 1},
                                    "stretch_max": {"06-transpose": 1}})
            self.assertEqual(split["11-deploy-multi-gpu.PeerAccess.CopiesBetweenTwoDevices"],
                             {"points": 1, "graded": 2, "not graded": 3, "passed": 0, "counts": False})
            # One submission on a machine that grades it passed it: it counts, so no total exceeds its maximum.
            (out / "ref-1" / "results.json").write_text(json.dumps({"tests": right(peer="passed")}))
            most, _ = grade_class.class_maxima(out, list(students))
            self.assertEqual(most["required_max"]["11-deploy-multi-gpu"], 2)
            # A stretch test of a grading from before the split (max_score 0) is worth the bonus of
            # the points the class was graded with (class.json), not the course's default.
            (out / "ref-1" / "results.json").write_text(json.dumps({"tests": [
                {"name": "06-transpose.TransposeStretch.Bulk", "status": "failed", "score": 0, "max_score": 0,
                 "tags": ["stretch"]}]}))
            for student in ("ref-2", "ref-3", "crash-1", "crash-2"):
                (out / student / "timing.json").unlink()
            (out / "class.json").write_text(json.dumps({"students": list(students), "stretch_bonus": 7}))
            most, _ = grade_class.class_maxima(out, list(students))
            self.assertEqual(most["stretch_max"], {"06-transpose": 7})


class Submissions(unittest.TestCase):
    def test_loose_files_are_found_by_name(self):
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            upload = root / "upload"
            (upload / "some" / "where").mkdir(parents=True)
            (upload / "some" / "where" / "transpose.cu").write_text("// mine\n")
            clean = root / "clean"
            (clean / "chapters" / "06-transpose").mkdir(parents=True)
            taken, missing = S.take_starters(COURSE, S.course_root_in(upload), clean)
            self.assertIn(pathlib.Path("chapters/06-transpose/transpose.cu"), taken)
            self.assertEqual((clean / "chapters/06-transpose/transpose.cu").read_text(), "// mine\n")
            self.assertTrue(missing)

    def test_symbolic_links_refuse_the_submission(self):
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            clean = root / "clean"
            (clean / "chapters" / "06-transpose").mkdir(parents=True)
            real = root / "real" / "06-transpose"
            real.mkdir(parents=True)
            (real / "transpose.cu").write_text("// elsewhere\n")
            linked_folder = root / "a"
            (linked_folder / "chapters").mkdir(parents=True)
            (linked_folder / "chapters" / "06-transpose").symlink_to(real)
            linked_file = root / "b"
            (linked_file / "chapters" / "06-transpose").mkdir(parents=True)
            (linked_file / "chapters" / "06-transpose" / "transpose.cu").symlink_to(real / "transpose.cu")
            linked_root = root / "c"
            linked_root.mkdir()
            (linked_root / "course").symlink_to(linked_file)
            for submission in (linked_folder, linked_file):
                with self.assertRaises(S.Refused):
                    S.take_starters(COURSE, S.course_root_in(submission), clean)
            with self.assertRaises(S.Refused):
                S.course_root_in(linked_root)
            self.assertFalse((clean / "chapters/06-transpose/transpose.cu").exists())

    def test_a_reused_workspace_keeps_nothing_of_the_earlier_submissions_logs(self):
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            ws = G.prepare(COURSE, root / "work", sandbox=False)
            # What an earlier grading left: logs of a phase that the next one may not run.
            (ws.root / "ctest-side-by-side-one-by-one.log").write_text("the earlier student's output\n")
            (ws.root / "ctest-side-by-side-one-by-one.xml").write_text("<testsuites/>\n")
            # And the folder of the multi-GPU tests' ctest on several GPUs (run_every_gpu): a class
            # on 2 x H200 (2026-11-28) had five gradings fail in 1 s on reused workspaces
            # ("NOT GRADED"), take() unlinking it as a file.
            (ws.root / "ctest-every-gpu" / "Testing" / "Temporary").mkdir(parents=True)
            (ws.root / "ctest-every-gpu" / "CTestTestfile.cmake").write_text("subdirs(\"/elsewhere\")\n")
            (ws.root / "ctest-every-gpu" / "Testing" / "Temporary" / "LastTest.log").write_text("earlier\n")
            upload = root / "upload"
            upload.mkdir()
            (upload / "transpose.cu").write_text("// mine\n")
            try:
                taken, _ = G.take(ws, upload, ["06-transpose"])
            finally:
                G.unmount_under(ws.root)  # (its scratch folder's own file system, where it may mount one)
            self.assertEqual(taken, [pathlib.Path("chapters/06-transpose/transpose.cu")])
            self.assertEqual(list(ws.root.glob("ctest-*")), [])

    def test_names(self):
        self.assertEqual(S.student_name("/x/ada.tar.gz"), "ada")
        self.assertEqual(S.student_name("/x/ben.bundle"), "ben")
        self.assertEqual(S.student_name("/x/cal"), "cal")


class GpuLocks(unittest.TestCase):
    """grading.gpu_locks: how gradings of a class share one GPU, and how they wait for several."""

    def hold(self, folder, gpus, shared, events):
        """Takes the locks in a thread; events: (given, release)."""
        given, release = events

        def run():
            with G.gpu_locks(folder, gpus, shared):
                given.set()
                release.wait(10)
        thread = threading.Thread(target=run)
        thread.start()
        return thread

    def test_shared_together_exclusive_alone_and_never_overtaken(self):
        with tempfile.TemporaryDirectory() as folder:
            first, second, alone, late = [(threading.Event(), threading.Event()) for _ in range(4)]
            threads = [self.hold(folder, ["0"], True, first)]
            self.assertTrue(first[0].wait(5))
            threads.append(self.hold(folder, ["0"], True, second))
            self.assertTrue(second[0].wait(5), "a shared lock waited for another shared one")
            second[1].set()
            threads.append(self.hold(folder, ["0"], False, alone))
            self.assertFalse(alone[0].wait(0.3), "an exclusive lock was given beside a shared one")
            threads.append(self.hold(folder, ["0"], True, late))
            self.assertFalse(late[0].wait(0.3), "a shared lock overtook a waiting exclusive one")
            first[1].set()
            self.assertTrue(alone[0].wait(5))
            self.assertFalse(late[0].wait(0.3), "a shared lock was given beside an exclusive one")
            alone[1].set()
            self.assertTrue(late[0].wait(5))
            late[1].set()
            for thread in threads:
                thread.join(10)

    def test_several_gpus_all_at_once(self):
        with tempfile.TemporaryDirectory() as folder:
            one, both = (threading.Event(), threading.Event()), (threading.Event(), threading.Event())
            threads = [self.hold(folder, ["1"], False, one)]
            self.assertTrue(one[0].wait(5))
            threads.append(self.hold(folder, ["0", "1"], False, both))
            self.assertFalse(both[0].wait(0.3), "GPU 1 was taken twice")
            with G.gpu_locks(folder, ["0"], False):  # GPU 0 is not held while the pair waits
                pass
            one[1].set()
            self.assertTrue(both[0].wait(5))
            both[1].set()
            for thread in threads:
                thread.join(10)


    def test_the_lock_folder_must_lock_a_read_only_file_exclusively(self):
        """grading.check_lock_folder (grade-class, with GPUs): a local folder passes and keeps no
        probe; where an exclusive flock on a read-only descriptor fails (NFS: EBADF), it says the
        folder must be on a local file system."""
        import errno
        from unittest import mock
        with tempfile.TemporaryDirectory() as folder:
            G.check_lock_folder(folder)
            self.assertEqual(os.listdir(folder), [])
            asked = []

            def nfs_flock(handle, operation):
                asked.append((handle.mode, operation))
                raise OSError(errno.EBADF, os.strerror(errno.EBADF))
            with mock.patch.object(G.fcntl, "flock", nfs_flock), \
                    self.assertRaisesRegex(ValueError, f"{folder}.*local file system.*-o"):
                G.check_lock_folder(folder)
            self.assertEqual(asked, [("rb", G.fcntl.LOCK_EX | G.fcntl.LOCK_NB)])
            self.assertEqual(os.listdir(folder), [])


class ClassLocks(unittest.TestCase):
    """tools/class-locks.py: who holds and who waits for a class's turn files, from the kernel's
    table of locks (a stalled class's GPUs idle while its programs wait on one of them)."""

    def test_holders_and_waiters_per_turn_file(self):
        class_locks = load_tool("class-locks.py")
        folder = pathlib.Path(tempfile.mkdtemp())
        inodes = {}
        for name in ("gpu-0.turn", "gpu-0.turn.gate", "gpu-0.turn.context", "gpu-1.turn"):
            (folder / name).touch()
            inodes[name] = (folder / name).stat().st_ino
        me = os.getpid()
        table = "\n".join([
            f"1: FLOCK  ADVISORY  WRITE {me} 00:2e:{inodes['gpu-0.turn']} 0 EOF",
            f"1: -> FLOCK  ADVISORY  READ 7 00:2e:{inodes['gpu-0.turn']} 0 EOF",
            f"1: -> FLOCK  ADVISORY  READ 8 00:2e:{inodes['gpu-0.turn']} 0 EOF",
            f"2: FLOCK  ADVISORY  READ 9 00:2e:{inodes['gpu-1.turn']} 0 EOF",
            f"3: FLOCK  ADVISORY  READ 10 00:2e:{inodes['gpu-1.turn']} 0 EOF",
            f"4: -> FLOCK  ADVISORY  WRITE 11 00:2e:{inodes['gpu-0.turn.context']} 0 EOF",
            "5: POSIX  ADVISORY  WRITE 12 00:2e:999999999 0 EOF",  # not a turn file's
        ])
        lines = class_locks.snapshot(folder, table)
        self.assertEqual(len(lines), 5, lines)
        self.assertTrue(lines[0].startswith(f"  gpu-0.turn: held exclusive by {me} "), lines)
        self.assertIn("waited for by 2 shared", lines[0])
        self.assertTrue(lines[1].startswith("    waiting: "), lines)  # (pids 7 and 8: their programs, or gone)
        self.assertEqual(lines[2], "  gpu-0.turn.context: waited for by 1 exclusive")
        self.assertTrue(lines[3].startswith("    waiting: 1 x "), lines)
        self.assertEqual(lines[4], "  gpu-1.turn: held shared by 2")
        self.assertEqual(class_locks.snapshot(folder, ""), ["  (no turn file held or waited for)"])


class ClassFloor(unittest.TestCase):
    """tools/class-floor.py: the GPU's serial work per submission of a class on one GPU (contexts
    made and torn down one at a time, measurements' exclusive turns), from its profiles."""

    PROFILE = """run side by side: 75 tests, 546.8 s in all (42 profiled)
  outside main() (process start, exit, context teardown)          5.0 s
  GPU turn: waiting for the context turn                        294.6 s
  GPU turn: exclusive, held                                      10.0 s
  GPU turn: exclusive, held by UploadPerf.AtLeast0_8OfPinnedPeak      3.0 s
  GPU turn: exclusive, held by MatmulTiledPerf.AtLeast1_3xNaive      {matmul} s
  context                                                         {context} s
  slowest:
     73.22 s  student.05-matmul.Batch.turns
"""

    def test_adds_up_the_serial_parts_per_submission(self):
        class_floor = load_tool("class-floor.py")
        folder = pathlib.Path(tempfile.mkdtemp())
        for name, context, matmul in (("ref-1", "6.0", "2.0"), ("ref-2", "8.0", "4.0")):
            (folder / name).mkdir()
            (folder / name / "profile.txt").write_text(self.PROFILE.format(context=context, matmul=matmul))
        result = class_floor.floor(class_floor.profiles(folder))
        self.assertEqual(result["gradings"], 2)
        self.assertEqual(result["programs"], 42)
        self.assertAlmostEqual(result["context"], 7.0)
        self.assertAlmostEqual(result["outside_main"], 5.0)
        self.assertAlmostEqual(result["exclusive"], 10.0)
        self.assertAlmostEqual(result["floor"], 22.0)
        self.assertEqual(result["exclusive_by_test"], {"UploadPerf.AtLeast0_8OfPinnedPeak": 3.0,
                                                       "MatmulTiledPerf.AtLeast1_3xNaive": 3.0})
        with tarfile.open(folder / "timing.tgz", "w:gz") as archive:  # as gpu-run-class-scaling.sh keeps them
            archive.add(folder / "ref-1" / "profile.txt", arcname="ref-1/profile.txt")
        self.assertAlmostEqual(class_floor.floor(class_floor.profiles(folder / "timing.tgz"))["floor"], 21.0)
        self.assertIsNone(class_floor.floor(class_floor.profiles(pathlib.Path(tempfile.mkdtemp()))))


class TestEnvironment(unittest.TestCase):
    def test_the_instructors_secrets_stay_out_of_the_tests(self):
        """Found by an adversarial review (2026-11-28): a test program read GH_TOKEN and
        AWS_SECRET_ACCESS_KEY from /proc/self/environ. The tests see only what they need."""
        env = {"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "HOME": "/s/home", "TMPDIR": "/s/tmp",
               "LC_ALL": "C.UTF-8", "CUDA_CACHE_PATH": "/s/cuda-cache", "CUDA_MODULE_LOADING": "LAZY",
               "COURSE_PROFILE": "1", "GH_TOKEN": "ghp_x", "AWS_SECRET_ACCESS_KEY": "k", "SSH_AUTH_SOCK": "/tmp/a",
               "CUDACXX": "/usr/local/cuda/bin/nvcc"}
        kept = G.test_environment(env)
        self.assertEqual(sorted(kept), ["COURSE_PROFILE", "CUDA_CACHE_PATH", "CUDA_MODULE_LOADING", "HOME", "LC_ALL",
                                        "LD_LIBRARY_PATH", "PATH", "TMPDIR"])


class GraderReadsScratchSafely(unittest.TestCase):
    """The grader (perhaps root) reads and clears the records in the scratch folder, which test
    programs write: found by an adversarial review (2026-11-28), a program made the records'
    folder a link to a hidden one (the grader read and deleted its records), a record a link to a
    FIFO (the grader hung) and a tree of thousands of folders (shutil.rmtree raised
    RecursionError, and the worker's next grading failed)."""

    RECORD = b'<testsuites><testsuite name="S"><testcase name="c" status="run" result="completed"/></testsuite></testsuites>'

    def test_no_link_followed_no_fifo_opened(self):
        root = pathlib.Path(tempfile.mkdtemp())
        hidden = root / "hidden"
        hidden.mkdir()
        (hidden / "student.ch.S.c.xml").write_bytes(self.RECORD)
        scratch = root / "scratch"
        scratch.mkdir()
        records = scratch / "records"
        records.symlink_to(hidden)  # the folder a link
        self.assertEqual(R.read_record(R.report_file(records, "student.ch.S.c")), ("missing", ""))
        self.assertIsNone(R.read_case_records(R.report_file(records, "student.ch.S.c")))
        R.remove_report(records, "student.ch.S.c")
        self.assertTrue((hidden / "student.ch.S.c.xml").exists())
        R.clear_reports(records)
        self.assertTrue((hidden / "student.ch.S.c.xml").exists())  # not followed: the link is gone
        self.assertTrue(records.is_dir() and not records.is_symlink())
        (records / "student.ch.S.c.xml").symlink_to(hidden / "student.ch.S.c.xml")  # a record a link
        self.assertEqual(R.read_record(R.report_file(records, "student.ch.S.c")), ("missing", ""))
        os.unlink(records / "student.ch.S.c.xml")
        os.mkfifo(records / "student.ch.S.c.xml")  # a FIFO: opened without blocking, not a regular file
        self.assertEqual(R.read_record(R.report_file(records, "student.ch.S.c")), ("missing", ""))
        os.unlink(records / "student.ch.S.c.xml")
        (records / "student.ch.S.c.xml").write_bytes(self.RECORD)
        self.assertEqual(R.read_record(R.report_file(records, "student.ch.S.c")), ("passed", ""))
        R.clear_reports(records)
        self.assertEqual(list(records.iterdir()), [])
        self.assertTrue((hidden / "student.ch.S.c.xml").exists())

    def test_a_deep_tree_is_removed(self):
        root = pathlib.Path(tempfile.mkdtemp())
        folder = root / "scratch"
        os.makedirs(folder)
        fd = os.open(folder, os.O_RDONLY)
        for _ in range(3000):  # deeper than Python's recursion limit
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(fd)
        G.remove_tree(folder)
        self.assertFalse(os.path.lexists(folder))


class JudgedAgainAlone(unittest.TestCase):
    """grading.judge_shared_faults_alone: a fault a neighbour could have caused is judged again
    alone; on several GPUs, a test that uses every GPU holds every GPU's lock for it."""

    def test_tests_of_every_gpu_are_judged_again_on_every_gpu(self):
        with tempfile.TemporaryDirectory() as folder:
            ws = types.SimpleNamespace(root=pathlib.Path(folder), rejudged=[])
            one, multi, fine = "student.04.Sums.Big", "student.11.MultiGpu.Every", "student.04.Sums.Small"
            graded = [R.TestResult(one, "failed", output="cudaErrorMemoryAllocation: out of memory"),
                      R.TestResult(multi, "failed", output="cudaErrorMemoryAllocation: out of memory"),
                      R.TestResult(fine, "passed")]
            runs = []

            def run(phase, selection, visible, phase_locks, shared, jobs, turn_lock, pass_env):
                names = pathlib.Path(pass_env["COURSE_TEST_ONLY"]).read_text().split()
                runs.append((phase, names, visible, list(phase_locks), shared, turn_lock))
                return [R.TestResult(name, "passed") for name in names]

            every = G.EveryGpu("1,0", ["0", "1"], "/l/gpu-0.turn,/l/gpu-1.turn", lambda name: ".11." in name)
            again = G.judge_shared_faults_alone(ws, graded, run, "1", ["1"], "/l/gpu-1.turn", every)
            self.assertEqual([r.outcome for r in again], ["passed", "passed", "passed"])
            self.assertEqual(ws.rejudged, sorted([one, multi]))
            self.assertEqual(runs, [("again alone", [one], "1", ["1"], False, "/l/gpu-1.turn"),
                                    ("again alone on every GPU", [multi], "1,0", ["0", "1"], False,
                                     "/l/gpu-0.turn,/l/gpu-1.turn")])
            # One GPU: every test is judged again on it.
            runs.clear()
            G.judge_shared_faults_alone(ws, graded, run, "0", ["0"], "/l/gpu-0.turn")
            self.assertEqual(runs, [("again alone", [one, multi], "0", ["0"], False, "/l/gpu-0.turn")])

    def test_a_perf_shortfall_is_judged_again_at_the_turn_when_so_asked(self):
        """With COURSE_REJUDGE_PERF=turn, a perf shortfall (and nothing worse) is judged again
        holding the GPU's lock shared, its program in the exclusive turn from start to end
        (COURSE_GPU_ALONE=1); an out-of-memory failure still alone. Without it, both alone."""
        from unittest import mock
        shortfall = ("[  PERF    ] x\nActual: false (transpose_tiled, 8192x8192 reached 1500.0 GB/s, 50% of the "
                     "device-to-device copy peak (2975.2 GB/s); 75% is needed.")
        slow, oom = "student.06.TransposePerf.AtLeast", "student.04.Sums.Big"
        graded = [R.TestResult(slow, "failed", output=shortfall),
                  R.TestResult(oom, "failed", output="cudaErrorMemoryAllocation: out of memory")]
        self.assertTrue(R.perf_shortfall_only(graded[0]))
        self.assertFalse(R.perf_shortfall_only(graded[1]))
        for asked, expected in (("turn", [("again at the turn", [slow], True, "1"), ("again alone", [oom], False, None)]),
                                ("", [("again alone", [slow, oom], False, None)])):
            with tempfile.TemporaryDirectory() as folder, mock.patch.dict(os.environ, {"COURSE_REJUDGE_PERF": asked}):
                ws = types.SimpleNamespace(root=pathlib.Path(folder), rejudged=[])
                runs = []

                def run(phase, selection, visible, phase_locks, shared, jobs, turn_lock, pass_env):
                    names = pathlib.Path(pass_env["COURSE_TEST_ONLY"]).read_text().split()
                    runs.append((phase, names, shared, pass_env.get("COURSE_GPU_ALONE")))
                    return [R.TestResult(name, "passed") for name in names]
                G.judge_shared_faults_alone(ws, graded, run, "0", ["0"], "/l/gpu-0.turn")
                self.assertEqual(runs, expected, asked)
                self.assertEqual(ws.rejudged, sorted([slow, oom]))

    def test_a_skip_for_want_of_memory_is_judged_again_whatever_the_sample_says(self):
        """A test skipped for want of free device memory beside other gradings runs again alone,
        even when the submission's own time limits stand (the sample failed again)."""
        with tempfile.TemporaryDirectory() as folder:
            ws = types.SimpleNamespace(root=pathlib.Path(folder), rejudged=[])
            timeout = R._failure_reason("student.x.S.T", "Timeout", "", 20, 20)
            big = "student.08.ProcessBatchesAsyncDeviceWide.TheLargestWorkTheContractAllows"
            graded = [R.TestResult(f"student.x.S.T{i}", "failed", reason=timeout, timeout=20) for i in range(6)]
            graded.append(R.TestResult(big, "skipped", reason="this test needs 35.4332 GB of free device memory, "
                                                               "20.1 GB are free"))
            asked = []

            def run(phase, selection, visible, phase_locks, shared, jobs, turn_lock, pass_env):
                names = pathlib.Path(pass_env["COURSE_TEST_ONLY"]).read_text().split()
                asked.append(names)
                return [R.TestResult(n, "passed") if n == big else R.TestResult(n, "failed", reason=timeout, timeout=20)
                        for n in names]

            out = G.judge_shared_faults_alone(ws, graded, run, "0", ["0"], "/l/gpu-0.turn")
            self.assertEqual(asked[0], [big])
            self.assertEqual([len(a) for a in asked], [1, G.REJUDGE_AT_MOST])  # the rest of the time limits stand
            self.assertEqual(out[-1].outcome, "passed")
            self.assertIn(big, ws.rejudged)

    def test_each_phase_judges_again_only_its_new_suspects(self):
        """A grading that judges again after each phase (fail-fast: tools/mutate.py) judges a
        later phase's neighbour-caused failures too, each test once, and names them all."""
        with tempfile.TemporaryDirectory() as folder:
            ws = types.SimpleNamespace(root=pathlib.Path(folder), rejudged=[])
            early, late = "student.08.Calls.Empty", "student.08.BatchesPerf.AtLeast4x"
            runs = []

            def run(phase, selection, visible, phase_locks, shared, jobs, turn_lock, pass_env):
                names = pathlib.Path(pass_env["COURSE_TEST_ONLY"]).read_text().split()
                runs.append(names)
                return [R.TestResult(name, "passed") for name in names]

            considered = set()
            graded = [R.TestResult(early, "failed", reason="Timeout: still running after its 30 s limit")]
            graded = G.judge_shared_faults_alone(ws, graded, run, "0", ["0"], "/l/gpu-0.turn", considered=considered)
            graded.append(R.TestResult(late, "failed", output="run reached 22517.9 batches/s, 372% of the given "
                                                              "malloc (6060.2 batches/s); 400% is needed."))
            graded = G.judge_shared_faults_alone(ws, graded, run, "0", ["0"], "/l/gpu-0.turn", considered=considered)
            self.assertEqual(runs, [[early], [late]])
            self.assertEqual([r.outcome for r in graded], ["passed", "passed"])
            self.assertEqual(ws.rejudged, sorted([early, late]))
            self.assertEqual(considered, {early, late})


class BuildSlots(unittest.TestCase):
    """grading._take_one_of: at most as many gradings build at once as there are lock files."""

    def test_a_third_build_waits_for_one_of_two_slots(self):
        with tempfile.TemporaryDirectory() as folder:
            paths = [pathlib.Path(folder) / "a.lock", pathlib.Path(folder) / "b.lock"]
            (first, first_index), (second, second_index) = G._take_one_of(paths), G._take_one_of(paths)
            self.assertEqual((first_index, second_index), (0, 1))
            third = []
            thread = threading.Thread(target=lambda: third.append(G._take_one_of(paths, poll_seconds=0.02)))
            thread.start()
            thread.join(0.3)
            self.assertFalse(third, "a third build started beside two")
            second.close()
            thread.join(5)
            self.assertTrue(third, "the third build did not take the slot given back")
            self.assertEqual(third[0][1], 1, "the third build runs with the niceness of the slot it took")
            for handle in (first, third[0][0]):
                handle.close()


class JudgeWhileItCompiles(unittest.TestCase):
    """grading._wait_for_the_judge: a grading links once the class's judge has compiled
    (prebuild's course-prebuilt.pending gone), and not at all when it failed."""

    def test_waits_until_the_judge_has_compiled(self):
        with tempfile.TemporaryDirectory() as folder:
            tree = pathlib.Path(folder)
            (tree / G.JUDGE_PENDING).touch()
            done = []
            thread = threading.Thread(target=lambda: done.append(G._wait_for_the_judge(tree, poll_seconds=0.02)))
            thread.start()
            thread.join(0.3)
            self.assertFalse(done, "a grading linked while the judge compiled")
            (tree / G.JUDGE_PENDING).unlink()
            thread.join(5)
            self.assertEqual(done, [True])

    def test_a_judge_that_failed_is_not_linked(self):
        with tempfile.TemporaryDirectory() as folder:
            tree = pathlib.Path(folder)
            self.assertTrue(G._wait_for_the_judge(tree), "a judge built without grade-class (no marker)")
            (tree / G.JUDGE_FAILED).touch()
            self.assertFalse(G._wait_for_the_judge(tree))


class CompiledSandbox:
    """A test class's course-sandbox (self.launcher), compiled as the grader compiles it."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.launcher = pathlib.Path(cls.folder.name) / "course-sandbox"
        subprocess.run(["cc", "-O2", "-std=gnu11", "-o", str(cls.launcher),
                        str(COURSE / "tools/course_grading/sandbox.c")], check=True)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()


@unittest.skipUnless(sandbox.abi_version(), "this kernel has no Landlock")
class Sandbox(CompiledSandbox, unittest.TestCase):
    """course-sandbox (tools/course_grading/sandbox.c), compiled here as the grader compiles it."""

    def test_writes_only_in_its_folder_and_cannot_read_hidden_ones(self):
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            for name in ("work", "secret", "secret/course"):
                (root / name).mkdir()
            (root / "secret" / "answer.txt").write_text("42\n")
            (root / "secret" / "course" / "test.txt").write_text("course\n")
            (root / "options").write_text(f"-w {root / 'work'}\n-h {root / 'secret'}\n-R {root / 'secret' / 'course'}\n")
            script = ("cat secret/answer.txt && echo read-hidden; echo x > outside.txt && echo wrote-outside; "
                      "echo y > work/inside.txt && echo wrote-inside; cat secret/course/test.txt && echo read-course; "
                      "echo z > secret/course/test.txt && echo wrote-course")
            done = subprocess.run([str(self.launcher), "-r", "-f", str(root / "options"), "--", "bash", "-c", script],
                                  cwd=root, capture_output=True, text=True)
            self.assertNotIn("read-hidden", done.stdout)
            self.assertNotIn("wrote-outside", done.stdout)
            self.assertIn("wrote-inside", done.stdout)
            self.assertIn("read-course", done.stdout)  # -R: readable inside a hidden folder ...
            self.assertNotIn("wrote-course", done.stdout)  # ... not writable
            self.assertFalse((root / "outside.txt").exists())

    def test_a_device_folder_gives_its_devices_not_its_entries(self):
        """Found by an adversarial review (2026-11-28): a folder among /dev/nvidia* (MIG's
        /dev/nvidia-caps) had every right, so student code could make, remove or rename files there.
        Now its devices may be read and written, nothing more. /dev is the machine's (and a CPU
        machine has no /dev/nvidia*): a build of the sandbox for this test reads the driver's device
        files in a folder of its own (COURSE_SANDBOX_DEVICES), regular files standing for them."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            devices = root / "dev"
            (devices / "nvidia-caps").mkdir(parents=True)
            for name in ("nvidiactl", "nvidia-caps/nvidia-cap1", "nvidia-caps/nvidia-cap2", "other"):
                (devices / name).write_text("")
            launcher = root / "course-sandbox"
            subprocess.run(["cc", "-O2", "-std=gnu11", f'-DCOURSE_SANDBOX_DEVICES="{devices}"', "-o", str(launcher),
                            str(COURSE / "tools/course_grading/sandbox.c")], check=True)
            script = ("echo x > nvidiactl && echo wrote-device; echo x > nvidia-caps/nvidia-cap1 && echo wrote-cap; "
                      "ls nvidia-caps > /dev/null && echo listed; cat nvidia-caps/nvidia-cap1 > /dev/null && echo read-cap; "
                      "echo x > other && echo wrote-other; echo x > nvidia-caps/new && echo created; "
                      "mkdir nvidia-caps/folder && echo made-folder; ln -s x nvidia-caps/link && echo linked; "
                      "rm -f nvidia-caps/nvidia-cap1 && echo removed; "
                      "mv nvidia-caps/nvidia-cap2 nvidia-caps/moved && echo renamed; true")
            done = subprocess.run([str(launcher), "-r", "--", "bash", "-c", script], cwd=devices,
                                  capture_output=True, text=True, timeout=60)
            said = done.stdout.split()
            for what in ("wrote-device", "wrote-cap", "listed", "read-cap"):
                self.assertIn(what, said)
            for what in ("wrote-other", "created", "made-folder", "linked", "removed", "renamed"):
                self.assertNotIn(what, said)
            self.assertEqual(sorted(p.name for p in (devices / "nvidia-caps").iterdir()), ["nvidia-cap1", "nvidia-cap2"])

    def test_a_device_is_known_by_its_file_not_its_name(self):
        """Seen on the H100 (2026-11-28): the container's /dev/nvidiactl, /dev/nvidia0 and
        /dev/nvidia-uvm are links to /dev/char/MAJOR:MINOR, so the driver's opens, resolved to where
        they lead, were logged as refused writes of /dev/char/195:255 (42 times in every reference's
        report) although Landlock allowed them. A device is now known by its file: an open of what
        allow_devices allows, under any name, is not logged; another device file still is. A fake
        device folder of regular files stands for /dev (COURSE_SANDBOX_DEVICES)."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            devices = root / "dev"
            (devices / "char").mkdir(parents=True)
            (devices / "nvidia-caps").mkdir()
            for name in ("char/195:255", "char/1:11", "nvidia-caps/nvidia-cap1"):
                (devices / name).write_text("")
            (devices / "nvidiactl").symlink_to("char/195:255")
            launcher = root / "course-sandbox"
            subprocess.run(["cc", "-O2", "-std=gnu11", f'-DCOURSE_SANDBOX_DEVICES="{devices}"', "-o", str(launcher),
                            str(COURSE / "tools/course_grading/sandbox.c")], check=True)
            script = ("echo x > nvidiactl && echo wrote-link; echo x > char/195:255 && echo wrote-device; "
                      "echo x > nvidia-caps/nvidia-cap1 && echo wrote-cap; echo x > char/1:11 && echo wrote-other; true")
            log = root / "calls.log"
            done = subprocess.run([str(launcher), "-s", f"learn:{log}", "--", "bash", "-c", script], cwd=devices,
                                  capture_output=True, text=True, timeout=60)
            said = done.stdout.split()
            for what in ("wrote-link", "wrote-device", "wrote-cap"):
                self.assertIn(what, said, done.stderr)
            self.assertNotIn("wrote-other", said)
            refused = [line.split(" ")[1] for line in log.read_text().splitlines() if line.startswith("refused-write ")]
            self.assertEqual([path for path in refused if path.startswith(str(root))], [str(devices / "char/1:11")])  # (bash opens /dev/tty)

    def test_a_class_turn_file_can_be_locked_but_not_written(self):
        """The turn files a class's grader gives the test programs (grading.test: -R in sandbox.args)
        can be flocked exclusively through a read-only descriptor (course/gpu_turn.h opens them so),
        and opened for writing by none: two gradings cannot pass data through them."""
        from unittest import mock
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            outdir = root / "graded"
            lock_dir = outdir / ".locks"
            lock_dir.mkdir(parents=True)
            ws = G.Workspace(root / "work", hidden=[outdir], syscalls="off")
            ws.build.mkdir(parents=True)
            ws.scratch.mkdir()

            def fake_run(command, **kwargs):
                junit = pathlib.Path(command[command.index("--output-junit") + 1])
                junit.write_text("x")
                return subprocess.CompletedProcess(command, 0)
            with mock.patch.object(G.subprocess, "run", fake_run), \
                    mock.patch.object(G, "check_test_sandbox", lambda ws: None), \
                    mock.patch.object(R, "read_junit", lambda *a, **k: []), \
                    mock.patch.object(R, "test_properties", lambda *a, **k: {}):
                G.test(ws, ["11-deploy-multi-gpu"], {}, gpu="1", all_gpus="0,1", lock_dir=str(lock_dir), batches=False)
            options = ws.sandbox_args.read_text().splitlines()
            turn = lock_dir / "gpu-1.turn"
            for end in ("", ".gate", ".queue", ".context"):
                self.assertIn(f"-R {turn}{end}", options)
            self.assertFalse([o for o in options if o.startswith("-w ") and str(lock_dir) in o], options)
            # The test users' locks (a program as root flocked one and stalled another class: an
            # adversarial review, 2026-11-28) are hidden.
            self.assertIn(f"-h {G._test_user_locks()}", options)
            G._test_user_locks().mkdir(mode=0o700, exist_ok=True)
            peek = subprocess.run([str(self.launcher), "-f", str(ws.sandbox_args), "--", "/bin/sh", "-c",
                                   f"ls {G._test_user_locks()} && echo listed; true"], capture_output=True, text=True,
                                  timeout=60)
            self.assertNotIn("listed", peek.stdout.split(), peek.stderr)
            script = (
                "import fcntl, sys\n"
                "path = sys.argv[1]\n"
                "for mode in ('r+b', 'ab', 'wb'):\n"
                "    try:\n"
                "        open(path, mode).write(b'x')\n"
                "        print('wrote', mode, flush=True)\n"
                "    except PermissionError:\n"
                "        print('refused', mode, flush=True)\n"
                "handle = open(path, 'rb')\n"
                "fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
                "print('locked', flush=True)\n"
                "import os, time\n"
                "for _ in range(3000):  # until the test says go (its standard input is /dev/null)\n"
                "    if os.path.exists('go'):\n"
                "        break\n"
                "    time.sleep(0.01)\n")
            program = subprocess.Popen([str(self.launcher), "-f", str(ws.sandbox_args), "--", sys.executable, "-c",
                                        script, str(turn)], cwd=ws.scratch, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                said = [program.stdout.readline().strip() for _ in range(4)]
                self.assertEqual(said, ["refused r+b", "refused ab", "refused wb", "locked"], program.stderr.read()
                                 if said[-1] != "locked" else said)
                import fcntl
                with open(turn, "rb") as outside:  # the program's lock is a real one: held, nobody else gets it
                    with self.assertRaises(BlockingIOError):
                        fcntl.flock(outside, fcntl.LOCK_SH | fcntl.LOCK_NB)
                (ws.scratch / "go").write_text("")
                self.assertEqual(program.wait(30), 0, program.stderr.read())
            finally:
                if program.poll() is None:
                    program.kill()
                    program.wait()
                program.stdin.close()
                program.stdout.close()
                program.stderr.close()
            self.assertEqual(turn.stat().st_size, 0)

    PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <pthread.h>
static void* nothing(void* p) { return p; }
int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);  /* every line out before the exec */
  pthread_t thread;
  printf("thread %d\n", pthread_create(&thread, NULL, nothing, NULL) == 0 && pthread_join(thread, NULL) == 0);
  printf("self-signal %d\n", kill(getpid(), 0) == 0);
  long got;
  errno = 0; got = syscall(SYS_fork);
  if (got == 0) _exit(0);
  printf("fork %ld %s\n", got, strerror(errno));
  errno = 0; got = kill(1, 0); printf("kill-init %ld %s\n", got, strerror(errno));
  errno = 0; got = socket(AF_INET, SOCK_STREAM, 0); printf("socket %ld %s\n", got, strerror(errno));
  errno = 0; got = prctl(PR_SET_PDEATHSIG, 0); printf("pdeathsig %ld %s\n", got, strerror(errno));
  struct rlimit limit;
  printf("prlimit-self %d\n", prlimit(0, RLIMIT_FSIZE, NULL, &limit));
  errno = 0; got = prlimit(getppid(), RLIMIT_FSIZE, NULL, &limit); printf("prlimit-parent %ld %s\n", got, strerror(errno));
  cpu_set_t cpus; CPU_ZERO(&cpus); CPU_SET(0, &cpus);
  errno = 0; got = sched_setaffinity(getppid(), sizeof cpus, &cpus); printf("affinity-parent %ld %s\n", got, strerror(errno));
  /* SIGIO to the supervisor through a pipe's owner: no kill() needed */
  int ends[2]; got = -1;
  if (pipe(ends) == 0) {
    errno = 0;
    got = fcntl(ends[0], F_SETOWN, getppid());
    if (got == 0) { fcntl(ends[0], F_SETSIG, SIGUSR1); fcntl(ends[0], F_SETFL, O_ASYNC); got = write(ends[1], "x", 1) == 1 ? 0 : -1; }
  }
  printf("sigio-parent %ld %s\n", got, strerror(errno));
  errno = 0; got = execl("/bin/true", "true", (char*)0); printf("exec %ld %s\n", got, strerror(errno));
  return 3;
}
"""

    def run_probe(self, mode):
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            (root / "probe.c").write_text(self.PROBE)
            subprocess.run(["cc", "-O1", "-pthread", "-o", str(root / "probe"), str(root / "probe.c")], check=True)
            done = subprocess.run([str(self.launcher), "-w", str(root), "-s", f"{mode}:{root / 'calls.log'}", "--",
                                   str(root / "probe")], capture_output=True, text=True, timeout=60)
            log = (root / "calls.log").read_text() if (root / "calls.log").exists() else ""
        return done, dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line), log

    def test_system_calls_outside_the_list_are_refused_and_logged(self):
        done, said, log = self.run_probe("enforce")
        self.assertEqual(done.returncode, 3, done.stderr)  # the program's own exit status comes back
        self.assertEqual(said["thread"], "1")      # threads and signals to itself: allowed
        self.assertEqual(said["self-signal"], "1")
        for what in ("fork", "kill-init", "socket", "exec", "pdeathsig", "prlimit-parent"):
            self.assertIn("Operation not permitted", said[what], what)  # a process, a signal to another, ...
        self.assertIn("No such process", said["affinity-parent"])  # (another process's CPUs: as if none)
        self.assertEqual(said["prlimit-self"], "0")
        # SIGUSR1 to the supervisor through a pipe's owner (no kill()): Landlock ABI 6 drops it, so the
        # supervisor lived to pass on the program's own exit status (3, above; -10 without the scope).
        self.assertIn("sigio-parent", said)
        numbers = [int(line.split(" ", 2)[0]) for line in log.splitlines()]
        self.assertEqual(sorted(numbers), sorted([57, 62, 41, 59, 157, 302, 203]))  # fork, kill, socket, execve,
        # prctl(PR_SET_PDEATHSIG), prlimit64 and sched_setaffinity of another process (x86-64)
        self.assertTrue(all(line.split(" ", 2)[1] == "1" for line in log.splitlines()), log)  # each made once
        self.assertTrue(all(line.split(" ", 2)[2].endswith("/probe") for line in log.splitlines()))
        names = G._syscall_names()
        if names:
            self.assertEqual(sorted(names[n] for n in numbers),
                             ["execve", "fork", "kill", "prctl", "prlimit64", "sched_setaffinity", "socket"])

    def test_learn_lets_them_run_and_logs_them(self):
        done, said, log = self.run_probe("learn")
        self.assertEqual(done.returncode, 0, done.stderr)  # exec ran /bin/true
        self.assertTrue(said["fork"].split(" ")[0].lstrip("-").isdigit() and int(said["fork"].split(" ")[0]) > 0)
        self.assertIn(57, [int(line.split(" ", 1)[0]) for line in log.splitlines()])

    def test_a_signal_ends_the_supervisor_as_it_ended_the_program(self):
        with tempfile.TemporaryDirectory() as folder:
            done = subprocess.run([str(self.launcher), "-s", f"enforce:{folder}/calls.log", "--", "sh", "-c", "kill -SEGV $$"],
                                  capture_output=True, timeout=60)
        self.assertEqual(done.returncode, -11)  # ctest tells a crash by the signal

    PROC_PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
static int value = 1;
static void say(const char* what, int fd) { printf("%s %s\n", what, fd >= 0 ? "opened" : strerror(errno)); }
int main(int argc, char** argv) {
  char path[96];
  /* what the CUDA driver does to name a thread: glibc opens /proc/self/task/<tid>/comm O_RDWR */
  printf("setname %d\n", pthread_setname_np(pthread_self(), "course-probe"));
  say("mem", open("/proc/self/mem", O_RDWR));
  snprintf(path, sizeof path, "/proc/self/task/%d/mem", gettid());
  say("task-mem", open(path, O_WRONLY));
  say("pid-mem", openat(AT_FDCWD, "/proc/thread-self/mem", O_RDWR | O_CLOEXEC));
  say("oom", open("/proc/self/oom_score_adj", O_WRONLY));
  say("maps", open("/proc/self/maps", O_RDONLY));
  say("kmsg", open("/dev/kmsg", O_WRONLY));   /* not a device a test program writes (root could) */
  say("null", open("/dev/null", O_WRONLY));
  /* /dev/shm: one folder for the whole node, no channel between gradings; a private memfd still works */
  snprintf(path, sizeof path, "/dev/shm/course-probe-%d", getpid());
  say("shm", open(path, O_RDWR | O_CREAT, 0600));
  say("memfd", memfd_create("course-probe", MFD_CLOEXEC));
  say("injection", open("/dev/shm/cuda_injection_path_shm", O_RDWR | O_CREAT | O_CLOEXEC, 0666));  /* the driver's: refused, not logged */
  printf("pid %d\n", getpid());
  snprintf(path, sizeof path, "%s/inside.txt", argv[1]);
  say("inside", open(path, O_WRONLY | O_CREAT, 0644));
  int fd = open("/proc/self/mem", O_RDONLY);
  if (fd >= 0) {
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);  /* the read-only descriptor reopened for writing */
    say("reopen-mem", open(path, O_RDWR));
  }
  printf("tid %d\nfd %d\n", gettid(), fd);
  printf("value %d\n", value + argc - 2);
  return 0;
}
"""

    def test_proc_is_read_only_and_thread_names_go_nowhere(self):
        """With -s, no write through /proc/<pid>/mem (the kernel writes through page protections and
        seals there) or any other /proc file; the one the CUDA driver needs, a thread's name, gets
        /dev/null (the driver fails to start when it cannot open it). No device but the driver's
        and the usual sinks (/dev/kmsg: root could write the kernel's log; /dev/shm: a channel
        between gradings, where a private memfd does as well)."""
        for mode in ("enforce", "learn"):
            with tempfile.TemporaryDirectory() as folder:
                root = pathlib.Path(folder)
                (root / "probe.c").write_text(self.PROC_PROBE)
                subprocess.run(["cc", "-O1", "-pthread", "-o", str(root / "probe"), str(root / "probe.c")], check=True)
                done = subprocess.run([str(self.launcher), "-w", str(root), "-s", f"{mode}:{root / 'calls.log'}", "--",
                                       str(root / "probe"), str(root)], capture_output=True, text=True, timeout=60)
                said = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(said["setname"], "0", mode)  # the name's open and write succeed (into /dev/null)
                self.assertEqual(said["null"], "opened")
                self.assertEqual(said["memfd"], "opened")
                for what in ("mem", "task-mem", "pid-mem", "oom", "reopen-mem", "kmsg", "shm", "injection"):
                    self.assertEqual(said[what], "Permission denied", (mode, what))  # Landlock
                self.assertEqual(said["maps"], "opened")
                self.assertEqual(said["inside"], "opened")  # writes where -w allows them still open
                self.assertTrue((root / "inside.txt").exists())
                self.assertEqual(said["value"], "1")
                log = (root / "calls.log").read_text()
                # Nothing outside the list was called; the refused opens under /proc are named, as the
                # kernel resolved them (/proc/thread-self and the reopened descriptor are the same
                # files as two others here: one line each).
                pid, tid = said["pid"], said["tid"]
                self.assertEqual(sorted(line.split(" ")[1] for line in log.splitlines()),
                                 sorted([f"/proc/{pid}/mem", f"/proc/{pid}/task/{tid}/mem", f"/proc/{pid}/oom_score_adj",
                                         "/dev/kmsg", f"/dev/shm/course-probe-{pid}"]), log)
                self.assertFalse(pathlib.Path(f"/dev/shm/course-probe-{said['pid']}").exists())
                self.assertTrue(all(line.startswith("refused-write ") for line in log.splitlines()), log)

    SPELLING_PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
static void say(const char* what, int got) { printf("%s %s\n", what, got >= 0 ? "ok" : strerror(errno)); }
static void* thread(void* unused) {  /* the supervisor hears of a thread's call by the thread's id */
  char path[64];
  printf("tid %d\n", gettid());
  say("thread-self", open("/proc/thread-self/mem", O_RDWR));
  snprintf(path, sizeof path, "shm/j-%d", getpid()); say("thread-cwd", open(path, O_WRONLY | O_CREAT, 0600));
  return unused;
}
int main(int argc, char** argv) {
  char path[256];
  int pid = getpid();
  pthread_t other;
  if (pthread_create(&other, NULL, thread, NULL) != 0 || pthread_join(other, NULL) != 0) return 4;
  printf("pid %d\n", pid);
  /* other spellings of a file under /dev or /proc that Landlock refuses to write */
  snprintf(path, sizeof path, "//dev/shm/a-%d", pid); say("double-slash", open(path, O_WRONLY | O_CREAT, 0600));
  snprintf(path, sizeof path, "/dev/./../dev/shm/b-%d", pid); say("dot-dot", open(path, O_WRONLY | O_CREAT, 0600));
  int dev = open("/dev", O_PATH | O_DIRECTORY);
  snprintf(path, sizeof path, "shm/c-%d", pid); say("dirfd", openat(dev, path, O_WRONLY | O_CREAT, 0600));
  snprintf(path, sizeof path, "shm/d-%d", pid); say("cwd", open(path, O_WRONLY | O_CREAT, 0600));  /* it runs in /dev */
  snprintf(path, sizeof path, "/dev/shm/e-%d", pid); say("create-read-only", open(path, O_RDONLY | O_CREAT, 0600));
  say("truncate-read-only", open("/proc/self/oom_score_adj", O_RDONLY | O_TRUNC));
  int status = open("/proc/self/status", O_RDONLY);
  snprintf(path, sizeof path, "/dev/fd/%d", status); say("dev-fd", open(path, O_RDWR));
  int self = open("/proc/self", O_PATH | O_DIRECTORY);
  say("proc-dirfd", openat(self, "environ", O_RDWR));
  snprintf(path, sizeof path, "%s/shm-link/f-%d", argv[1], pid); say("link", open(path, O_WRONLY | O_CREAT, 0600));
  snprintf(path, sizeof path, "/dev/shm/g-%d", pid); say("mkdir", mkdir(path, 0700));
  snprintf(path, sizeof path, "shm/h-%d", pid); say("mkdirat", mkdirat(dev, path, 0700));
  snprintf(path, sizeof path, "/dev/shm/i-%d", pid); say("symlink", symlink("x", path));
  say("rmdir", rmdir("/proc/self/fd"));
  /* the link the CUDA driver makes for each of its devices, udev's name by number (here /dev/null's,
     1:3): refused, not logged */
  say("driver-link", symlink("../null", "/dev/char/1:3"));
  /* not refused, not logged */
  say("create-existing", open("/proc/self/status", O_RDONLY | O_CREAT, 0600));
  snprintf(path, sizeof path, "%s/shm-link", argv[1]); say("unlink-link", unlink(path));  /* the link, in the writable folder */
  int memfd = memfd_create("course-probe", 0);
  snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
  int again = open(path, O_RDWR);
  say("memfd-reopen", again);
  say("memfd-write", again >= 0 && write(again, "x", 1) == 1 ? 0 : -1);
  int ends[2];
  if (pipe(ends) != 0) return 4;
  snprintf(path, sizeof path, "/proc/self/fd/%d", ends[1]); say("pipe-reopen", open(path, O_WRONLY));
  snprintf(path, sizeof path, "%s/out.txt", argv[1]);
  int file = open(path, O_WRONLY | O_CREAT, 0600);
  snprintf(path, sizeof path, "/dev/fd/%d", file); say("file-reopen", open(path, O_WRONLY));
  int out = open("/dev/stdout", O_WRONLY); say("stdout", out);
  say("stdout-write", out >= 0 && write(out, "", 0) == 0 ? 0 : -1);
  say("fd-1", open("/proc/self/fd/1", O_WRONLY));
  say("thread-self-fd", open("/proc/thread-self/fd/1", O_WRONLY));
  return 0;
}
"""

    @unittest.skipUnless(os.geteuid() == 0, "a /proc of the program's own is made where the sandbox runs as root")
    def test_the_own_proc_s_locks_file_is_no_refused_write(self):
        """Found by an adversarial review (2026-11-28): in the program's own /proc, /proc/locks is
        /dev/null, which it may write, and the log named that write refused (a false fault)."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            log = root / "calls.log"
            done = subprocess.run([str(self.launcher), "-w", str(root), "-s", f"learn:{log}", "--", "/bin/sh", "-c",
                                   "echo x > /proc/locks && echo wrote; echo x > /proc/version || echo refused"],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.stdout.split(), ["wrote", "refused"], done.stderr)
            lines = log.read_text().splitlines() if log.exists() else []
            self.assertFalse([line for line in lines if line.split(" ")[1:2] == ["/proc/locks"]], lines)
            self.assertTrue([line for line in lines if line.startswith("refused-write /proc/version")], lines)

    def test_refused_writes_are_logged_under_every_spelling(self):
        """Found by an adversarial review (2026-11-28): //dev/..., /dev/../dev/..., a name relative to a
        descriptor of /dev or to the working folder, O_CREAT or O_TRUNC without write access, /dev/fd/N,
        a symbolic link to /dev/shm, and mkdir, symlink or rmdir there went unlogged. The supervisor now
        logs the file as the kernel resolves it. Reopening one's own memfd, pipe, file or standard
        output through /proc/self/fd/N or /dev/stdout is allowed and no longer logged as refused."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            (root / "probe.c").write_text(self.SPELLING_PROBE)
            subprocess.run(["cc", "-O1", "-pthread", "-o", str(root / "probe"), str(root / "probe.c")], check=True)
            (root / "shm-link").symlink_to("/dev/shm")
            log = root / "calls.log"
            done = subprocess.run([str(self.launcher), "-w", str(root), "-s", f"enforce:{log}", "--",
                                   str(root / "probe"), str(root)], capture_output=True, text=True, timeout=60, cwd="/dev")
            self.assertEqual(done.returncode, 0, done.stderr)
            said = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
            pid = said["pid"]
            for what in ("double-slash", "dot-dot", "dirfd", "cwd", "create-read-only", "truncate-read-only", "dev-fd",
                         "proc-dirfd", "link", "mkdir", "mkdirat", "symlink", "rmdir", "thread-self", "thread-cwd"):
                self.assertEqual(said[what], "Permission denied", what)  # Landlock, as before
            self.assertNotEqual(said["driver-link"], "ok")
            for what in ("create-existing", "unlink-link", "memfd-reopen", "memfd-write", "pipe-reopen", "file-reopen",
                         "stdout", "stdout-write", "fd-1", "thread-self-fd"):
                self.assertEqual(said[what], "ok", what)
            self.assertFalse((root / "shm-link").exists())
            lines = log.read_text().splitlines()
            self.assertTrue(all(line.startswith("refused-write ") for line in lines), lines)
            self.assertEqual(sorted(line.split(" ")[1] for line in lines),
                             sorted([f"/dev/shm/{name}-{pid}" for name in "abcdefghij"] +
                                    [f"/proc/{pid}/oom_score_adj", f"/proc/{pid}/status", f"/proc/{pid}/environ",
                                     f"/proc/{pid}/fd", f"/proc/{pid}/task/{said['tid']}/mem"]))
            self.assertNotEqual(said["tid"], pid)
            for name in "abcdefghij":
                self.assertFalse(pathlib.Path(f"/dev/shm/{name}-{pid}").exists(), name)

    METADATA_PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
static void say(const char* what, long got) { printf("%s %s\n", what, got == 0 ? "ok" : strerror(errno)); }
static const struct timespec kThen[2] = {{1000000000, 0}, {1000000000, 0}};
static const struct timespec kLater[2] = {{1100000000, 0}, {1100000000, 0}};
static const struct timespec kLink[2] = {{1200000000, 0}, {1200000000, 0}};
static int scratch_file;
static void* thread(void* unused) {  /* the supervisor hears of a thread's call by the thread's id */
  say("thread-fchmod", fchmod(scratch_file, 0604));
  return unused;
}
int main(int argc, char** argv) {
  const char *scratch = argv[1], *turn = argv[2], *hidden = argv[3];
  char path[512];
  snprintf(path, sizeof path, "%s/file", scratch);
  scratch_file = open(path, O_RDWR | O_CREAT, 0600);
  pthread_t other;
  if (scratch_file < 0 || pthread_create(&other, NULL, thread, NULL) != 0 || pthread_join(other, NULL) != 0) return 4;
  say("fchmod-scratch", fchmod(scratch_file, 0640));
  say("futimens-scratch", futimens(scratch_file, kThen));
  say("setuid-scratch", fchmod(scratch_file, 04755));
  snprintf(path, sizeof path, "%s/other", scratch);
  close(open(path, O_WRONLY | O_CREAT, 0600));
  say("utimensat-scratch", utimensat(AT_FDCWD, path, kLater, 0));
  int folder = open(scratch, O_PATH | O_DIRECTORY);
  close(openat(folder, "relative", O_WRONLY | O_CREAT, 0600));
  say("utimensat-dirfd", utimensat(folder, "relative", kThen, 0));
  say("utimensat-missing", utimensat(folder, "missing", kThen, 0));
  int opath = openat(folder, "relative", O_PATH);
  say("futimens-opath", futimens(opath, kThen));
  say("empty-path-opath", utimensat(opath, "", kLater, AT_EMPTY_PATH));
  int file = open(turn, O_RDONLY);
  printf("turn-fd %d\n", file);
  say("fchmod-turn", fchmod(file, 0666));
  say("futimens-turn", futimens(file, kThen));
  say("futimens-turn-now", futimens(file, NULL));
  say("utimensat-turn", utimensat(AT_FDCWD, turn, kThen, 0));
  say("utimensat-turn-now", utimensat(AT_FDCWD, turn, NULL, 0));
  snprintf(path, sizeof path, "/proc/self/fd/%d", file); say("utimensat-proc-fd", utimensat(AT_FDCWD, path, kThen, 0));
  say("utimensat-hidden", utimensat(AT_FDCWD, hidden, kThen, 0));
  snprintf(path, sizeof path, "%s/link", scratch);
  say("utimensat-link", utimensat(AT_FDCWD, path, kThen, 0));
  say("utimensat-link-nofollow", utimensat(AT_FDCWD, path, kLink, AT_SYMLINK_NOFOLLOW));
  /* odd calls: answered, the supervisor lives on */
  snprintf(path, sizeof path, "%s/other", scratch);
  say("bad-times", syscall(SYS_utimensat, AT_FDCWD, path, (void*)8, 0));
  say("bad-path", syscall(SYS_utimensat, AT_FDCWD, (void*)8, kThen, 0));
  say("bad-flags", syscall(SYS_utimensat, AT_FDCWD, path, kThen, 0x4000));
  say("bad-fd", fchmod(999, 0600));
  say("bad-dirfd", utimensat(999, "other", kThen, 0));
  say("no-path-flags", syscall(SYS_utimensat, file, NULL, kThen, AT_SYMLINK_NOFOLLOW));
  /* outside the list: refused whatever the file */
  say("chmod", chmod(path, 0600));
  say("fchmodat", fchmodat(AT_FDCWD, path, 0600, 0));
  say("utimes", syscall(SYS_utimes, path, NULL));
  snprintf(path, sizeof path, "%s/touched", scratch);
  close(open(path, O_WRONLY | O_CREAT, 0600));
  say("utimes-libc", utimes(path, (const struct timeval[2]){{1300000000, 0}, {1300000000, 0}}));  /* (glibc: utimensat) */
  say("fchown", fchown(scratch_file, getuid(), getgid()));
  say("chown", chown(path, getuid(), getgid()));
  say("fsetxattr", fsetxattr(scratch_file, "user.course", "x", 1, 0));
  return 0;
}
"""

    def test_metadata_changes_only_inside_the_writable_folders(self):
        """Found by an adversarial review (2026-11-28): the filter allowed utimensat and fchmod, which
        Landlock does not cover, so a program set the mode and times of a class's turn file (given with
        -R: a channel between two gradings) and, by path, of hidden files. The supervisor now makes these
        calls itself on a file it holds, inside a -w folder only; elsewhere they are refused and logged."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            (root / "probe.c").write_text(self.METADATA_PROBE)
            subprocess.run(["cc", "-O1", "-pthread", "-o", str(root / "probe"), str(root / "probe.c")], check=True)
            scratch, turn, hidden = root / "scratch", root / "gpu-0.turn", root / "hidden" / "secret.txt"
            scratch.mkdir()
            hidden.parent.mkdir()
            for path in (turn, hidden):
                path.write_text("")
                path.chmod(0o644)
                os.utime(path, (500000000, 500000000))
            (scratch / "link").symlink_to(turn)
            log = root / "calls.log"
            done = subprocess.run([str(self.launcher), "-w", str(scratch), "-R", str(turn), "-h", str(hidden.parent),
                                   "-s", f"enforce:{log}", "--", str(root / "probe"), str(scratch), str(turn),
                                   str(hidden)], capture_output=True, text=True, timeout=60, cwd=scratch)
            self.assertEqual(done.returncode, 0, done.stderr)
            said = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
            for what in ("thread-fchmod", "fchmod-scratch", "futimens-scratch", "utimensat-scratch", "utimensat-dirfd",
                         "empty-path-opath", "utimensat-link-nofollow", "utimes-libc"):
                self.assertEqual(said[what], "ok", what)
            for what in ("fchmod-turn", "futimens-turn", "futimens-turn-now", "utimensat-turn", "utimensat-turn-now",
                         "utimensat-proc-fd", "utimensat-hidden", "utimensat-link", "setuid-scratch", "chmod",
                         "fchmodat", "utimes", "fchown", "chown", "fsetxattr"):
                self.assertEqual(said[what], "Operation not permitted", what)
            expected = {"utimensat-missing": "No such file or directory", "futimens-opath": "Bad file descriptor",
                        "bad-times": "Bad address", "bad-path": "Bad address", "bad-flags": "Invalid argument",
                        "bad-fd": "Bad file descriptor", "bad-dirfd": "Bad file descriptor",
                        "no-path-flags": "Invalid argument"}
            self.assertEqual({what: said[what] for what in expected}, expected)
            file = scratch / "file"  # changed from outside's point of view too
            self.assertEqual(file.stat().st_mode & 0o7777, 0o640)
            self.assertEqual(file.stat().st_mtime, 1000000000)
            self.assertEqual((scratch / "other").stat().st_mtime, 1100000000)
            self.assertEqual((scratch / "relative").stat().st_mtime, 1100000000)  # (the O_PATH descriptor's last)
            self.assertEqual((scratch / "touched").stat().st_mtime, 1300000000)
            self.assertEqual(os.lstat(scratch / "link").st_mtime, 1200000000)  # the link itself, inside scratch
            for path in (turn, hidden):
                self.assertEqual(path.stat().st_mode & 0o7777, 0o644, path)
                self.assertEqual(path.stat().st_mtime, 500000000, path)
                self.assertEqual(path.stat().st_atime, 500000000, path)
            lines = log.read_text().splitlines()
            refused = sorted(line.split(" ")[1] for line in lines if line.startswith("refused-metadata "))
            self.assertEqual(refused, sorted([str(turn), str(hidden), str(file), f"/proc/self/fd/{said['turn-fd']}"]))
            self.assertTrue(all(line.endswith(f"/probe {scratch} {turn} {hidden}") for line in lines), lines)
            names = G._syscall_names()
            counted = {names.get(int(line.split(" ")[0]), line.split(" ")[0]): int(line.split(" ")[1])
                       for line in lines if line.split(" ")[0].isdigit()}
            if names:
                self.assertEqual(counted, {"chmod": 1, "fchmodat": 1, "utimes": 1, "fchown": 1, "chown": 1,
                                           "fsetxattr": 1})

    METADATA_RACE_PROBE = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static char name[512], scratch_name[512], turn_name[512], flip[512], flip_new[512];
static const char* turn;
static volatile int done;
static void* swap_memory(void* unused) {  /* the path in memory, between scratch and the turn file */
  for (int i = 0; !done; ++i) memcpy(name, i % 2 ? turn_name : scratch_name, sizeof name);
  return unused;
}
static void* swap_link(void* unused) {  /* scratch/flip: a file in scratch, then a link to the turn file */
  for (int i = 0; !done; ++i) {
    unlink(flip_new);
    if (i % 2) symlink(turn, flip_new); else close(open(flip_new, O_WRONLY | O_CREAT, 0600));
    rename(flip_new, flip);
  }
  return unused;
}
int main(int argc, char** argv) {
  turn = argv[2];
  snprintf(scratch_name, sizeof scratch_name, "%s/file", argv[1]);
  snprintf(turn_name, sizeof turn_name, "%s", turn);
  snprintf(flip, sizeof flip, "%s/flip", argv[1]);
  snprintf(flip_new, sizeof flip_new, "%s/flip.new", argv[1]);
  close(open(scratch_name, O_WRONLY | O_CREAT, 0600));
  memcpy(name, scratch_name, sizeof name);
  const struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
  pthread_t memory, link;
  if (pthread_create(&memory, NULL, swap_memory, NULL) != 0 || pthread_create(&link, NULL, swap_link, NULL) != 0) return 4;
  int made = 0;
  for (int i = 0; i < 3000; ++i) {
    made += utimensat(AT_FDCWD, name, times, 0) == 0;
    made += utimensat(AT_FDCWD, flip, times, 0) == 0;
  }
  done = 1;
  pthread_join(memory, NULL);
  pthread_join(link, NULL);
  printf("made %d\n", made);
  return 0;
}
"""

    def test_a_thread_cannot_swap_the_file_whose_times_are_changed(self):
        """The supervisor changes the times of the file it opened and found inside scratch, not what the
        path names later: a thread that swaps the path in memory, or a file in scratch for a link to the
        turn file, between the check and the change, never reaches the turn file."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            (root / "probe.c").write_text(self.METADATA_RACE_PROBE)
            subprocess.run(["cc", "-O1", "-pthread", "-o", str(root / "probe"), str(root / "probe.c")], check=True)
            scratch, turn = root / "scratch", root / "gpu-0.turn"
            scratch.mkdir()
            turn.write_text("")
            os.utime(turn, (500000000, 500000000))
            done = subprocess.run([str(self.launcher), "-w", str(scratch), "-R", str(turn), "-s",
                                   f"enforce:{root / 'calls.log'}", "--", str(root / "probe"), str(scratch), str(turn)],
                                  capture_output=True, text=True, timeout=120, cwd=scratch)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertGreater(int(done.stdout.split()[-1]), 0, done.stdout)  # some were made: it raced
            self.assertEqual(turn.stat().st_mtime, 500000000)
            self.assertEqual(turn.stat().st_atime, 500000000)
            self.assertEqual((scratch / "file").stat().st_mtime, 1000000000)

    SOCKET_PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
static socklen_t address(struct sockaddr_un* a, const char* name, int abstract) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  strncpy(a->sun_path + abstract, name, sizeof a->sun_path - 2);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + strlen(name) + !abstract);
}
static void say(const char* what, int got) { printf("%s %s\n", what, got == 0 ? "0" : strerror(errno)); }
int main(int argc, char** argv) {
  struct sockaddr_un a;
  char name[128];
  /* what the CUDA driver does: a SOCK_SEQPACKET socket bound to cuda-uvmfd-<namespace>-<pid>, listening */
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  struct stat pid_namespace;
  stat("/proc/self/ns/pid", &pid_namespace);
  unsigned long long space = (unsigned long long)pid_namespace.st_ino;
  snprintf(name, sizeof name, "cuda-uvmfd-%llu-%d", space, getpid());
  socklen_t n = address(&a, name, 1);
  say("bind-own", bind(fd, (struct sockaddr*)&a, n));
  say("listen", listen(fd, 16));
  /* ... and the whole sun_path as the length, zeros after the name */
  int padded = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  struct stat net_namespace;
  stat("/proc/self/ns/net", &net_namespace);  /* (another of its namespaces: allowed too) */
  snprintf(name, sizeof name, "cuda-uvmfd-%llu-%d", (unsigned long long)net_namespace.st_ino, getpid());
  address(&a, name, 1);
  say("bind-own-padded", bind(padded, (struct sockaddr*)&a, sizeof a));
  int message = socket(AF_UNIX, SOCK_SEQPACKET, 0);  /* any text in the middle: a message to a classmate */
  snprintf(name, sizeof name, "cuda-uvmfd-HELLO%llu-%d", space, getpid());
  n = address(&a, name, 1);
  say("bind-message", bind(message, (struct sockaddr*)&a, n));
  int other = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  snprintf(name, sizeof name, "cuda-uvmfd-%llu-%d", space, getpid() + 1);  /* a classmate's name, taken first */
  n = address(&a, name, 1);
  say("bind-other-pid", bind(other, (struct sockaddr*)&a, n));
  n = address(&a, "course-listener", 1);
  say("bind-abstract", bind(other, (struct sockaddr*)&a, n));
  snprintf(name, sizeof name, "%s/mine.sock", argv[1]);
  n = address(&a, name, 0);
  say("bind-path", bind(other, (struct sockaddr*)&a, n));
  /* the MPS probe */
  int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  snprintf(name, sizeof name, "%s/control", getenv("CUDA_MPS_PIPE_DIRECTORY"));
  n = address(&a, name, 0);
  say("connect-mps", connect(probe, (struct sockaddr*)&a, n));
  int stream = socket(AF_UNIX, SOCK_STREAM, 0);
  snprintf(name, sizeof name, "%s/daemon.sock", argv[1]);
  n = address(&a, name, 0);
  say("connect-path", connect(stream, (struct sockaddr*)&a, n));
  int abstract = socket(AF_UNIX, SOCK_STREAM, 0);
  n = address(&a, argv[2], 1);
  say("connect-abstract", connect(abstract, (struct sockaddr*)&a, n));
  int datagram = socket(AF_UNIX, SOCK_DGRAM, 0);
  n = address(&a, argv[3], 1);
  say("sendto-abstract", sendto(datagram, "x", 1, 0, (struct sockaddr*)&a, n) == 1 ? 0 : -1);
  return 0;
}
"""

    def test_only_the_drivers_own_local_sockets(self):
        """bind is made by the supervisor for the CUDA driver's cuda-uvmfd-...-<pid> listener only,
        and the driver's MPS probe is answered "no daemon"; no other local socket is reachable (a
        daemon's path, an abstract name made outside: Landlock ABI 6 refuses that one even with learn)."""
        import socket
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            (root / "mps").mkdir()
            (root / "probe.c").write_text(self.SOCKET_PROBE)
            subprocess.run(["cc", "-O1", "-o", str(root / "probe"), str(root / "probe.c")], check=True)
            servers = []
            for path in (root / "mps" / "control", root / "daemon.sock"):
                server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET if path.name == "control" else socket.SOCK_STREAM)
                server.bind(str(path))
                server.listen(4)
                servers.append(server)
            daemon_name = f"course-daemon-{os.getpid()}"
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind("\0" + daemon_name)
            server.listen(4)
            servers.append(server)
            server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            server.bind("\0" + daemon_name + "-datagrams")
            servers.append(server)
            env = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=str(root / "mps"))
            try:
                said = {}
                for mode in ("enforce", "learn"):
                    log = root / f"{mode}.log"
                    done = subprocess.run([str(self.launcher), "-w", str(root), "-s", f"{mode}:{log}", "--",
                                           str(root / "probe"), str(root), daemon_name, daemon_name + "-datagrams"],
                                          capture_output=True, text=True, timeout=60, env=env)
                    self.assertEqual(done.returncode, 0, done.stderr)
                    said[mode] = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
                    said[mode]["log"] = sorted(int(line.split(" ")[0]) for line in log.read_text().splitlines()) \
                        if log.exists() else []
            finally:
                for server in servers:
                    server.close()
        enforce, learn = said["enforce"], said["learn"]
        for what in ("bind-own", "listen", "bind-own-padded"):
            self.assertEqual(enforce[what], "0", what)
        # The MPS probe is answered as when no daemon runs, even where one listens (the course is
        # graded without MPS): the supervisor connects nothing, so it follows no symbolic link.
        self.assertEqual(enforce["connect-mps"], "No such file or directory")
        self.assertEqual(learn["connect-mps"], "No such file or directory")
        for what in ("bind-message", "bind-other-pid", "bind-abstract", "bind-path", "connect-path", "connect-abstract",
                     "sendto-abstract"):
            self.assertEqual(enforce[what], "Operation not permitted", what)
        # Each refusal is named in the log by its number: bind 49 (3 times), connect 42 (2), sendto 44.
        self.assertEqual(enforce["log"], [42, 44, 49])
        # learn lets the calls outside run and logs them; an abstract socket made outside the sandbox
        # stays out of reach (Landlock's scope) where the kernel has it (ABI 6, Linux 6.12).
        self.assertEqual(learn["connect-path"], "0")
        self.assertEqual(learn["bind-other-pid"], "0")
        if self.landlock_abi() >= 6:
            self.assertEqual(learn["connect-abstract"], "Operation not permitted")
            self.assertEqual(learn["sendto-abstract"], "Operation not permitted")
        self.assertEqual(learn["log"], [42, 44, 49])

    PRIVILEGE_PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
static void say(const char* what, int got) { printf("%s %s\n", what, got >= 0 ? "0" : strerror(errno)); }
int main(int argc, char** argv) {
  FILE* status = fopen("/proc/self/status", "r");
  char line[256];
  while (status && fgets(line, sizeof line, status))
    if (strncmp(line, "Cap", 3) == 0) fputs(line, stdout);  /* CapInh, CapPrm, CapEff, CapBnd, CapAmb */
  say("open-tty", open(argv[1], O_RDONLY | O_NOCTTY));  /* another terminal: no device to open (2026-11-28) */
  int tty = 0;  /* ... but one given to the program, its standard input */
  say("tiocsti", ioctl(tty, TIOCSTI, "x"));
  int winsize_ok = 0; struct winsize size;
  winsize_ok = ioctl(tty, TIOCGWINSZ, &size);  /* a terminal's other ioctls still work */
  say("tiocgwinsz", winsize_ok);
  int local = socket(AF_UNIX, SOCK_DGRAM, 0);
  struct ifreq request; memset(&request, 0, sizeof request); strcpy(request.ifr_name, "lo");
  say("siocgifmtu", ioctl(local, SIOCGIFMTU, &request));
  int file = open(argv[2], O_RDONLY);
  say("setlease", fcntl(file, F_SETLEASE, F_RDLCK));
  say("notify", fcntl(open(".", O_RDONLY), F_NOTIFY, DN_MODIFY));
  say("getfl", fcntl(file, F_GETFL));
  return 0;
}
"""

    def test_no_capability_no_terminal_input_no_network_device_no_lease(self):
        """Found by an adversarial review (2026-11-27), as root: TIOCSTI typed a command into another
        terminal, SIOCSIFMTU changed the node's interface through an AF_UNIX socket, and a lease on
        a file the program may only read stalled writers outside. Now the command runs with no
        capability, and the filter refuses those ioctls and fcntls (each logged)."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            (root / "probe.c").write_text(self.PRIVILEGE_PROBE)
            subprocess.run(["cc", "-O1", "-o", str(root / "probe"), str(root / "probe.c")], check=True)
            (root / "outside.txt").write_text("read only\n")
            leader, follower = os.openpty()
            try:
                log = root / "calls.log"
                done = subprocess.run([str(self.launcher), "-w", str(root / "nothing"), "-s", f"enforce:{log}", "--",
                                       str(root / "probe"), os.ttyname(follower), str(root / "outside.txt")],
                                      stdin=follower, capture_output=True, text=True, timeout=60, cwd=root)
                os.set_blocking(leader, False)
                try:
                    typed = os.read(leader, 100)
                except BlockingIOError:
                    typed = b""
            finally:
                os.close(leader)
                os.close(follower)
            said = dict(line.split(maxsplit=1) for line in done.stdout.splitlines() if line.strip())
            self.assertEqual(done.returncode, 0, done.stderr)
            for field in ("CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"):
                self.assertEqual(int(said[field], 16), 0, field)
            for what in ("tiocsti", "siocgifmtu", "setlease", "notify"):
                self.assertEqual(said[what], "Operation not permitted", what)
            # The terminal given as standard input does not cross into the program (2026-11-28): its
            # standard input is /dev/null, and no terminal can be opened.
            self.assertEqual(said["tiocgwinsz"], "Inappropriate ioctl for device")
            self.assertEqual(said["open-tty"], "Permission denied")
            self.assertEqual(said["getfl"], "0")
            self.assertEqual(typed, b"")
            numbers = sorted(int(line.split(" ")[0]) for line in log.read_text().splitlines())
            self.assertEqual(numbers, [16, 72])  # ioctl (2 refused) and fcntl (2), one line each

    DEVICE_PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
static void say(const char* what, int got) { printf("%s %s\n", what, got >= 0 ? "0" : strerror(errno)); }
int main(int argc, char** argv) {
  (void)argc;
  say("null", open("/dev/null", O_RDWR));
  say("urandom", open("/dev/urandom", O_RDONLY));
  say("stdout", open("/dev/stdout", O_WRONLY));
  say("fd", open("/dev/fd/1", O_WRONLY));
  say("loop-control", open("/dev/loop-control", O_RDONLY));  /* (loop devices: attach, detach anyone's) */
  say("loop0", open("/dev/loop0", O_RDONLY));  /* a block device, read raw */
  say("kmsg", open("/dev/kmsg", O_RDONLY));
  say("vda", open("/dev/vda", O_RDONLY));
  say("shadow", open("/etc/shadow", O_RDONLY));  /* root's own file: hidden whatever the grader says */
  say("passwd", open("/etc/passwd", O_RDONLY));
  int file = open(argv[1], O_RDONLY);  /* a file it may read, owned by its uid */
  int flags = 0;
  say("getflags", ioctl(file, FS_IOC_GETFLAGS, &flags));
  flags |= FS_NODUMP_FL;
  say("setflags", ioctl(file, FS_IOC_SETFLAGS, &flags));
  int generation = 12345;
  say("setversion", ioctl(file, FS_IOC_SETVERSION, &generation));  /* the inode's generation: owner only */
  say("fionread", ioctl(1, FIONREAD, &flags));  /* an ordinary ioctl still runs (its output, a pipe) */
  return 0;
}
"""

    def test_no_device_but_the_drivers_and_no_inode_flags(self):
        """Found by an adversarial review (2026-11-28), as root without capabilities: the devices of
        /dev were readable (their owner is the program's uid), so a disk could be read raw (every
        hidden file), another grading's loop device detached and a terminal's input read; and
        chattr's ioctl set the flags of files the program may only read (the turn files). Now /dev
        is hidden but for the GPU driver's and the usual sinks and sources (links into /proc
        work), and the filter refuses the inode-flag ioctls (logged as ioctl)."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            (root / "probe.c").write_text(self.DEVICE_PROBE)
            subprocess.run(["cc", "-O1", "-o", str(root / "probe"), str(root / "probe.c")], check=True)
            (root / "outside.txt").write_text("read only\n")
            log = root / "calls.log"
            done = subprocess.run([str(self.launcher), "-w", str(root / "nothing"), "-s", f"enforce:{log}", "--",
                                   str(root / "probe"), str(root / "outside.txt")],
                                  capture_output=True, text=True, timeout=60, cwd=root)
            self.assertEqual(done.returncode, 0, done.stderr)
            said = dict(line.split(maxsplit=1) for line in done.stdout.splitlines() if line.strip())
            for what in ("null", "urandom", "stdout", "fd", "passwd"):
                self.assertEqual(said[what], "0", what)
            if pathlib.Path("/etc/shadow").exists():
                self.assertEqual(said["shadow"], "Permission denied")
            for what in ("getflags", "setflags", "setversion"):  # a file system's ioctls, by their type
                self.assertEqual(said[what], "Operation not permitted", what)
            for what in ("loop-control", "loop0", "kmsg", "vda"):
                if pathlib.Path("/dev", what).exists():
                    self.assertEqual(said[what], "Permission denied", what)
            self.assertEqual(said["fionread"], "0")
            numbers = sorted(int(line.split(" ")[0]) for line in log.read_text().splitlines() if line[0].isdigit())
            self.assertEqual(numbers, [16])  # ioctl, refused (three times, one line)

    FD_PROBE = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
  char got[64];
  ssize_t n = write(3, "forged\n", 7);  /* ctest's log of the test, given open for writing */
  printf("write-3 %s\n", n == 7 ? "0" : strerror(errno));
  n = read(0, got, sizeof got);  /* the grader's standard input (a terminal, where it has one) */
  printf("read-0 %zd\n", n);
  return 0;
}
"""

    def test_no_descriptor_crosses_but_output_and_errors(self):
        """Found by an adversarial review (2026-11-28): ctest gives each test its log open for
        writing (descriptor 3, outside the scratch folder) and its standard input, and Landlock
        checks only new opens: a program forged lines in ctest's log. Now descriptors 3 and up
        close at the command's exec and standard input is /dev/null."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            (root / "probe.c").write_text(self.FD_PROBE)
            subprocess.run(["cc", "-O1", "-o", str(root / "probe"), str(root / "probe.c")], check=True)
            outside = root / "ctest.log"
            outside.write_text("")
            for mode in ([], ["-s", f"enforce:{root / 'calls.log'}"]):
                with open(outside, "a") as log:
                    reader, writer = os.pipe()
                    os.write(writer, b"typed by an administrator\n")
                    os.close(writer)
                    os.dup2(log.fileno(), 3) if log.fileno() != 3 else None
                    try:
                        done = subprocess.run([str(self.launcher), "-w", str(root / "nothing"), *mode, "--", str(root / "probe")],
                                              stdin=reader, pass_fds=(3,), capture_output=True, text=True, timeout=60)
                    finally:
                        os.close(reader)
                        if log.fileno() != 3:
                            os.close(3)
                self.assertEqual(done.returncode, 0, done.stderr)
                said = dict(line.split(maxsplit=1) for line in done.stdout.splitlines() if line.strip())
                self.assertEqual(said["write-3"], "Bad file descriptor", mode)
                self.assertEqual(said["read-0"], "0", mode)
            self.assertEqual(outside.read_text(), "")

    @staticmethod
    def landlock_abi():
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return max(0, libc.syscall(444, None, 0, 1))  # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)

    def test_refuses_bad_usage(self):
        self.assertEqual(subprocess.run([str(self.launcher), "-s", "maybe:/tmp/x", "--", "true"],
                                        capture_output=True).returncode, 2)
        self.assertEqual(subprocess.run([str(self.launcher), "-x", "--", "true"], capture_output=True).returncode, 2)
        self.assertEqual(subprocess.run([str(self.launcher), "-f", "/nonexistent", "--", "true"],
                                        capture_output=True).returncode, 2)


@unittest.skipUnless(sandbox.abi_version(), "this kernel has no Landlock")
@unittest.skipUnless(os.geteuid() == 0, "a test user needs a grader running as root")
class TestUser(CompiledSandbox, unittest.TestCase):
    """The test programs under a user of their own (course-sandbox -u, grade-submission --test-uid):
    root's files and the other gradings' folders closed by the kernel's permissions, not by a list
    (the threat model's rows "read what the node keeps for root" and "learn about hidden files":
    an adversarial review, 2026-11-28, read hidden files' sizes and links' texts with stat and
    readlink, which Landlock does not cover)."""

    def run_as(self, uid, script, *options, cwd=None):
        return subprocess.run([str(self.launcher), "-r", *options, "-u", f"{uid}:{uid}", "--", "bash", "-c", script],
                              cwd=cwd, capture_output=True, text=True, timeout=60)

    def test_the_program_runs_as_its_user_and_owns_nothing_else(self):
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            os.chmod(root, 0o755)
            scratch, secret = root / "scratch", root / "root-only"
            scratch.mkdir()
            os.chown(scratch, 61101, 61101)
            secret.mkdir(mode=0o700)
            (secret / "key").write_text("k\n")
            (secret / "link").symlink_to("text of a link")
            done = self.run_as(61101, "id -u; id -g; id -G; echo x > scratch/mine && echo wrote-own; "
                                      "cat root-only/key && echo read-root-only; stat root-only/key && echo stat-root-only; "
                                      "readlink root-only/link && echo readlink-root-only; "
                                      "cat /etc/shadow > /dev/null 2>&1 && echo read-shadow; true",
                               "-w", str(scratch), cwd=root)
            said = done.stdout.split()
            self.assertEqual(said[:3], ["61101", "61101", "61101"], done.stdout + done.stderr)  # (no supplementary group)
            self.assertIn("wrote-own", said)
            for what in ("read-root-only", "stat-root-only", "readlink-root-only", "read-shadow"):
                self.assertNotIn(what, said)
            self.assertEqual((scratch / "mine").stat().st_uid, 61101)

    def test_with_the_system_call_filter_as_the_graders_run_it(self):
        """The supervisor (root) still takes the filter's listener from its child, which changed its
        user before the filter (pidfd_getfd of a process that is no longer dumpable)."""
        with tempfile.TemporaryDirectory() as folder:
            log = pathlib.Path(folder) / "syscalls.log"
            done = subprocess.run([str(self.launcher), "-r", "-s", f"enforce:{log}", "-u", "61107:61107", "--",
                                   "/usr/bin/id", "-u"], capture_output=True, text=True, timeout=60)
            self.assertEqual((done.returncode, done.stdout.strip()), (0, "61107"), done.stderr)

    def test_the_program_dies_with_its_supervisor(self):
        """Found by an adversarial review (2026-11-28): a change of user clears the parent-death
        signal, so under -u a program outlived its supervisor killed with SIGKILL (as the worker's
        next grading's test user, it could look into that grading's folders)."""
        with tempfile.TemporaryDirectory() as folder:
            log = pathlib.Path(folder) / "syscalls.log"
            supervisor = subprocess.Popen([str(self.launcher), "-r", "-s", f"enforce:{log}", "-u", "61108:61108", "--",
                                           "/bin/sleep", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                program = None
                for _ in range(500):  # (its child, once it runs sleep)
                    children = pathlib.Path(f"/proc/{supervisor.pid}/task/{supervisor.pid}/children")
                    found = children.read_text().split() if children.exists() else []
                    if found and pathlib.Path(f"/proc/{found[0]}/comm").read_text().strip() == "sleep":
                        program = int(found[0])
                        break
                    time.sleep(0.01)
                self.assertIsNotNone(program, "the program did not start")
                os.kill(supervisor.pid, signal.SIGKILL)
                supervisor.wait()
                gone = False
                for _ in range(500):
                    try:
                        state = pathlib.Path(f"/proc/{program}/stat").read_text().split(")")[-1].split()[0]
                    except OSError:
                        state = "gone"
                    if state in ("gone", "Z", "X"):
                        gone = True
                        break
                    time.sleep(0.01)
                self.assertTrue(gone, "the program outlived its supervisor")
            finally:
                supervisor.kill()
                subprocess.run(["pkill", "-KILL", "-u", "61108"], capture_output=True)

    def test_nothing_outlives_a_grader_killed_with_sigkill(self):
        """Found by an adversarial review (2026-11-28): a grader killed alone (SIGKILL, the OOM killer)
        left its ctest running, which went on starting programs as the test user, that the next
        grading could be given. Now ctest dies with the grader (results.dies_with_the_grader) and
        course-sandbox, with or without its supervisor, with whoever started it."""
        with tempfile.TemporaryDirectory() as folder:
            log = pathlib.Path(folder) / "syscalls.log"
            ctest_like = (f"{self.launcher} -r -s enforce:{log} -u 61109:61109 -- /bin/sleep 61.25 & "
                          f"{self.launcher} -r -- /bin/sleep 61.5 & wait")
            grader = subprocess.Popen([sys.executable, "-c",
                                       "import subprocess, sys; sys.path.insert(0, sys.argv[1]); "
                                       "from course_grading import results as R; "
                                       "subprocess.run(['/bin/bash', '-c', sys.argv[2]], preexec_fn=R.dies_with_the_grader)",
                                       str(COURSE / "tools"), ctest_like])

            def sleeping():
                found = subprocess.run(["pgrep", "-f", "^/bin/sleep 61.(25|5)$"], capture_output=True, text=True)
                return found.stdout.split()
            try:
                for _ in range(500):
                    if len(sleeping()) == 2:
                        break
                    time.sleep(0.01)
                self.assertEqual(len(sleeping()), 2, "the programs did not start")
                os.kill(grader.pid, signal.SIGKILL)
                grader.wait()
                for _ in range(500):
                    if not sleeping() and not G.processes_of(61109):
                        break
                    time.sleep(0.01)
                self.assertEqual((sleeping(), G.processes_of(61109)), ([], []), "a program outlived its grader")
            finally:
                grader.kill()
                subprocess.run(["pkill", "-KILL", "-f", "^/bin/sleep 61.(25|5)$"], capture_output=True)

    def test_a_test_user_s_fork_hopper_is_stopped(self):
        """A process that forks anew and ends, over and over (possible with --syscalls off), is
        stopped by kill(-1) as its user, where killing pids from a list of /proc chases it (an
        adversarial review, 2026-11-28). Whether it still runs: its heartbeat file."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            os.chmod(root, 0o755)
            beat = root / "beat"
            beat.write_text("")
            os.chown(beat, 61112, 61112)
            hopper = ("import os, sys, time\n"
                      "while True:\n"
                      "    if os.fork():\n"
                      "        os._exit(0)\n"
                      "    open(sys.argv[1], 'w').write(str(os.getpid()))\n"
                      "    time.sleep(0.002)\n")
            python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")  # (one the test user may run)
            if not python:
                self.skipTest("no python3 outside root's folders")
            started = subprocess.Popen([str(self.launcher), "-r", "-w", str(root), "-u", "61112:61112", "--",
                                        python, "-c", hopper, str(beat)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

            def beats():
                first = beat.read_text()
                time.sleep(0.2)
                return beat.read_text() != first
            try:
                for _ in range(100):
                    if beats():
                        break
                self.assertTrue(beats(), "the hopper did not start")
                G.stop_every_process_of(61112, 10)
                self.assertFalse(beats(), "the hopper still runs")
                self.assertEqual(G.processes_of(61112), [])
            finally:
                started.kill()
                started.wait()
                subprocess.run(["pkill", "-KILL", "-u", "61112"], capture_output=True)

    def test_a_grading_cannot_look_into_another_s_scratch_folder(self):
        """Two gradings' scratch folders, each its own user's (mode 0700): the stat and readlink
        channel between them is closed."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            os.chmod(root, 0o755)
            one, other = root / "one", root / "other"
            for scratch, uid in ((one, 61102), (other, 61103)):
                scratch.mkdir()
                os.chown(scratch, uid, uid)
                os.chmod(scratch, 0o700)
            planted = self.run_as(61103, "ln -s 'a message' other/channel && echo planted", "-w", str(other), cwd=root)
            self.assertIn("planted", planted.stdout, planted.stderr)
            done = self.run_as(61102, "readlink other/channel && echo read-channel; stat other/channel && echo stat-channel; "
                                      "ls other && echo listed; true", "-w", str(one), cwd=root)
            self.assertNotIn("a message", done.stdout)
            for what in ("read-channel", "stat-channel", "listed"):
                self.assertNotIn(what, done.stdout.split())

    def test_a_program_sees_no_other_user_s_process_and_no_lock_of_the_node(self):
        """/proc of its own (own_proc): a classmate's program (another test user, here a sleep), the
        grader's processes and the node's are not in it, nor are the node's file locks (a lock
        this test holds); the node's /proc stays as it was. Under the filter too (-s)."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            os.chmod(root, 0o755)
            (root / "locked").write_text("x\n")
            classmate = self.start_sleeping_as(61120)
            try:
                with open(root / "locked") as held:
                    fcntl.lockf(held, fcntl.LOCK_SH)
                    self.assertIn(f":{os.stat(root / 'locked').st_ino} ", pathlib.Path("/proc/locks").read_text())
                    script = (f"test -e /proc/{classmate.pid} && echo sees-classmate; test -e /proc/{os.getpid()} && "
                              "echo sees-grader; test -e /proc/1 && echo sees-init; test -e /proc/self/status && "
                              "echo sees-itself; test -s /proc/locks || echo locks-empty; "
                              "grep -q . /proc/locks && echo locks-shown; true")
                    for options in ((), ("-s", f"learn:{root / 'log'}")):
                        done = self.run_as(61121, script, *options, cwd=root)
                        said = done.stdout.split()
                        self.assertIn("sees-itself", said, done.stderr)
                        for shown in ("sees-classmate", "sees-grader", "sees-init", "locks-shown"):
                            self.assertNotIn(shown, said, options)
                    done = self.run_as(61121, script, "-p", cwd=root)  # -p: the node's (a way back)
                    self.assertIn("sees-classmate", done.stdout.split(), done.stderr)
                    self.assertTrue(pathlib.Path(f"/proc/{classmate.pid}").exists())  # the node's, unchanged
                    self.assertNotIn("hidepid", pathlib.Path("/proc/self/mountinfo").read_text())
            finally:
                classmate.kill()
                classmate.wait()
                G.stop_every_process_of(61120, 10)

    def test_only_a_user_that_is_not_root(self):
        for bad in ("0:0", "0:5", "5:0", "61104", "x:y", "61104:", "-1:5", "4294967295:5"):
            done = subprocess.run([str(self.launcher), "-u", bad, "--", "true"], capture_output=True, text=True)
            self.assertEqual(done.returncode, 2, bad)
            self.assertIn("usage", done.stderr)

    def start_sleeping_as(self, uid):
        """A process of user `uid` (a sleep, in the sandbox without its filter), once it runs."""
        process = subprocess.Popen([str(self.launcher), "-u", f"{uid}:{uid}", "--", "/bin/sleep", "30"])
        for _ in range(500):
            if G.processes_of(uid):
                break
            time.sleep(0.01)
        return process

    def test_a_test_user_is_one_grading_s_alone(self):
        """Found by an adversarial review (2026-11-28): two gradings given one test user (two classes
        with one --test-uids, a grade-submission beside a class) could look into each other's
        folders. A grading holds its test user's lock for its lifetime, and a user that still runs
        a process (one left by a killed grading) is no test user."""
        first, second = G.Workspace(pathlib.Path("/nonexistent/a")), G.Workspace(pathlib.Path("/nonexistent/b"))
        G.choose_test_user(first, 61109)
        try:
            with self.assertRaises(ValueError) as taken:
                G.choose_test_user(second, 61109)
            self.assertIn("another grading's test user", str(taken.exception))
        finally:
            os.close(first.test_user_lock)
        G.choose_test_user(second, 61109)  # free again once the first grading ended
        os.close(second.test_user_lock)
        left = self.start_sleeping_as(61110)
        try:
            with self.assertRaises(ValueError) as running:  # (after waiting 10 s for it to end)
                G.choose_test_user(G.Workspace(pathlib.Path("/nonexistent/c")), 61110)
            self.assertIn("still runs processes", str(running.exception))
        finally:
            left.kill()
            left.wait()
        # A grading's end stops what its test user still runs (a program whose supervisor ctest killed
        # at a time limit exits a moment later), so that the worker's next grading finds none.
        ws = G.Workspace(pathlib.Path("/nonexistent/d"))
        G.choose_test_user(ws, 61111)
        left = self.start_sleeping_as(61111)
        try:
            G.release_test_user(ws)
            self.assertEqual(G.processes_of(61111), [])
            self.assertIsNone(ws.test_user_lock)
            G.choose_test_user(ws, 61111)
            G.release_test_user(ws)
        finally:
            left.kill()
            left.wait()

    def test_the_grader_gives_the_test_user_its_folders_and_falls_back_where_it_cannot_reach_the_build(self):
        with tempfile.TemporaryDirectory() as folder, mock.patch.dict(os.environ, {"COURSE_SCRATCH_GIB": "0.01"}):
            root = pathlib.Path(folder).resolve()
            os.chmod(root, 0o755)
            ws = G.Workspace(root / "work")
            ws.root.mkdir()
            G.choose_test_user(ws, 61105)
            self.assertEqual(ws.test_user, (61105, 61105))
            try:
                ws.scratch.mkdir()
                G.cap_scratch(ws)
                env = G.environment(ws)
                for path in (ws.scratch, ws.scratch / "tmp", ws.scratch / "home", ws.scratch / "cuda-cache"):
                    info = path.stat()
                    self.assertEqual((info.st_uid, info.st_gid, info.st_mode & 0o777), (61105, 61105, 0o700), path)
                self.assertEqual(env["TMPDIR"], str(ws.scratch / "tmp"))
                ws.build.mkdir(parents=True)
                program = ws.build / "student_ch06_transpose_tests"
                program.write_text("#!/bin/sh\n")
                os.chmod(program, 0o755)
                os.chown(ws.root, 0, 61105)
                os.chmod(ws.root, 0o750)
                G.confirm_test_user(ws)
                self.assertEqual(ws.test_user, (61105, 61105), ws.test_user_note)
                # A GPU device file that only root and its group may open (a driver's 0660): the tests
                # run as the grader rather than fail every GPU test (an adversarial review, 2026-11-28).
                device = root / "nvidia0"
                os.mknod(device, 0o660 | stat.S_IFCHR, os.makedev(1, 3))
                G.confirm_test_user(ws, devices=[str(device)])
                self.assertIsNone(ws.test_user)
                self.assertIn(f"cannot reach {device} ", ws.test_user_note)
                os.chmod(device, 0o666)
                ws.test_user = (61105, 61105)
                for path in (ws.scratch, ws.scratch / "tmp", ws.scratch / "home", ws.scratch / "cuda-cache"):
                    G.give_to_test_user(ws, path)  # (the fallback above took them back)
                G.confirm_test_user(ws, devices=[str(device)])
                self.assertEqual(ws.test_user, (61105, 61105), ws.test_user_note)
                # The MIG capabilities: read only, and only those a group or everyone may read (a
                # 0400 nvidia-cap1 is root's, on every GPU machine without MIG: 2 x H200, 2026-11-28).
                dev = root / "dev"
                (dev / "nvidia-caps").mkdir(parents=True)
                os.mknod(dev / "nvidia0", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
                os.chmod(dev / "nvidia0", 0o666)
                (dev / "nvidia-smi-like").write_text("")  # (no device file)
                for name, mode in (("nvidia-cap1", 0o400), ("nvidia-cap2", 0o444), ("nvidia-cap3", 0o440)):
                    os.mknod(dev / "nvidia-caps" / name, mode | stat.S_IFCHR, os.makedev(1, 3))
                os.chmod(dev / "nvidia-caps" / "nvidia-cap3", 0o440)
                os.chmod(dev / "nvidia-caps" / "nvidia-cap2", 0o444)
                files = G.driver_device_files(dev)
                self.assertEqual(files, [f"d:{dev}/nvidia0", f"f:{dev}/nvidia-caps/nvidia-cap2",
                                         f"f:{dev}/nvidia-caps/nvidia-cap3"])
                G.confirm_test_user(ws, devices=files[:2])
                self.assertEqual(ws.test_user, (61105, 61105), ws.test_user_note)
                G.confirm_test_user(ws, devices=files)
                self.assertIsNone(ws.test_user)
                self.assertIn(f"cannot reach {dev}/nvidia-caps/nvidia-cap3 ", ws.test_user_note)
                ws.test_user = (61105, 61105)
                for path in (ws.scratch, ws.scratch / "tmp", ws.scratch / "home", ws.scratch / "cuda-cache"):
                    G.give_to_test_user(ws, path)  # (the fallback above took them back)
                G.write_test_sandbox_args(ws)
                self.assertIn("-u 61105:61105", ws.sandbox_args.read_text().splitlines())
                os.chmod(ws.course, 0o700)  # (an umask of 077, a folder on the way only root may enter)
                G.confirm_test_user(ws)
                self.assertIsNone(ws.test_user)
                # The scratch folders are the grader's again: its programs, without a capability in the
                # sandbox, could not write the test user's (2 x H200, 2026-11-28: every case crashed).
                for path in (ws.scratch, ws.scratch / "tmp", ws.scratch / "home", ws.scratch / "cuda-cache"):
                    self.assertEqual(path.stat().st_uid, os.geteuid(), path)
                self.assertEqual(ws.test_user_note, f"the grader's: uid 61105 cannot reach {ws.course} (the folders on "
                                                    "the way must let others enter)")
                G.write_test_sandbox_args(ws)
                self.assertFalse(any(line.startswith("-u ") for line in ws.sandbox_args.read_text().splitlines()))
            finally:
                G.remove_tree(root / "work")
                os.close(ws.test_user_lock)
        ws = G.Workspace(pathlib.Path("/nonexistent"))
        G.choose_test_user(ws, None)
        self.assertIsNone(ws.test_user)
        with self.assertRaises(ValueError):
            G.choose_test_user(ws, 0)
        with self.assertRaises(ValueError) as taken:  # an account's number: its files would be the programs'
            G.choose_test_user(ws, os.getuid() or next(u.pw_uid for u in __import__("pwd").getpwall() if u.pw_uid))
        self.assertIn("no account or group uses", str(taken.exception))
        ws.sandbox = False
        G.choose_test_user(ws, 61106)
        self.assertIsNone(ws.test_user)
        self.assertIn("without the sandbox", ws.test_user_note)

    def test_a_pool_of_test_users_gives_each_grading_the_first_free_one(self):
        # (Slurm's tasks that share a node: no one numbers them among themselves)
        held = []
        try:
            for expected in (61120, 61121, 61122):
                ws = G.Workspace(pathlib.Path("/nonexistent"))
                G.choose_test_user(ws, 61120, 3)
                self.assertEqual((ws.test_user, ws.test_user_note), ((expected, expected), f"uid {expected}, gid "
                                                                      f"{expected} (its own)"))
                held.append(ws)
            with self.assertRaises(ValueError) as taken:
                G.choose_test_user(G.Workspace(pathlib.Path("/nonexistent")), 61120, 3)
            self.assertIn("every test user of uid 61120 to 61122 is another grading's", str(taken.exception))
            G.release_test_user(held.pop(1))  # a task ends: the next takes its user
            ws = G.Workspace(pathlib.Path("/nonexistent"))
            G.choose_test_user(ws, 61120, 3)
            self.assertEqual(ws.test_user, (61121, 61121))
            held.append(ws)
        finally:
            for ws in held:
                G.release_test_user(ws)
        done = subprocess.run([sys.executable, str(COURSE / "tools" / "grade-submission"), "/nonexistent", "-o",
                               "/nonexistent", "--test-uid-pool", "61120"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--test-uid-pool takes BASE:COUNT", done.stderr)

    def test_a_pool_takes_a_free_user_before_it_waits_and_a_released_user_is_closed_out(self):
        # (an adversarial review, 2026-11-28: a grading that waited on a user with a leftover while a
        # later one took the next was left with none; and a kept workspace stayed open to its user's
        # group, so the next grading given that user read the last one's solution)
        left = self.start_sleeping_as(61125)
        try:
            with tempfile.TemporaryDirectory() as folder:
                root = pathlib.Path(folder).resolve()
                os.chmod(root, 0o755)
                ws = G.Workspace(root / "work")
                ws.root.mkdir()
                started = time.monotonic()
                G.choose_test_user(ws, 61125, 2)
                self.assertEqual(ws.test_user, (61126, 61126))
                self.assertLess(time.monotonic() - started, G.LEFTOVER_SECONDS / 2)
                os.chown(ws.root, 0, 61126)
                os.chmod(ws.root, 0o750)
                ws.scratch.mkdir()
                os.chown(ws.scratch, 61126, 61126)
                os.chmod(ws.scratch, 0o700)
                G.release_test_user(ws)
                info = ws.root.stat()
                self.assertEqual((info.st_uid, info.st_gid, info.st_mode & 0o777), (os.geteuid(), os.getegid(), 0o700))
                self.assertEqual(ws.scratch.stat().st_uid, os.geteuid())
        finally:
            left.kill()
            left.wait()
            G.release_test_user(G.Workspace(pathlib.Path("/nonexistent")))

    def test_a_sandbox_that_cannot_write_its_folders_stops_the_grading(self):
        # (programs as root, without a capability, in folders of a test user's: every case crashed,
        # a reference scored 0 of 83 on the CPU, 2026-11-28; a grader's mistake is no student's zero)
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            os.chmod(root, 0o755)
            ws = G.Workspace(root / "work")
            (ws.root / "bin").mkdir(parents=True)
            shutil.copy(self.launcher, ws.launcher)
            ws.course.mkdir()
            for path in (ws.scratch, ws.records, *(ws.scratch / n for n in ("tmp", "home", "cuda-cache"))):
                path.mkdir(parents=True, exist_ok=True)
            ws.syscalls = "off"
            G.write_test_sandbox_args(ws)
            G.check_test_sandbox(ws)  # the grader's own folders: it writes them all, and leaves nothing
            self.assertEqual([p for p in ws.scratch.rglob("*") if p.is_file()], [])
            self.assertEqual(ws.proc_note, "its own, no file lock of the node, but the processes of the grader's "
                                           "user, whom the programs run as")  # (as root: own_proc)
            os.chown(ws.scratch / "home", 61108, 61108)
            os.chmod(ws.scratch / "home", 0o700)
            with self.assertRaises(OSError) as stopped:
                G.check_test_sandbox(ws)
            self.assertIn(f"the test programs' sandbox (the grader's user) cannot write {ws.scratch / 'home'}: nothing "
                          "was graded", str(stopped.exception))
            ws.test_user = (61108, 61108)  # as that user, it may
            G.write_test_sandbox_args(ws)
            os.chown(ws.scratch, 61108, 61108)
            for path in (ws.records, ws.scratch / "tmp", ws.scratch / "cuda-cache"):
                os.chown(path, 61108, 61108)
            G.check_test_sandbox(ws)
            self.assertEqual(ws.proc_note, "its own: no process of another user, no file lock of the node")
            with mock.patch.dict(os.environ, {"COURSE_SANDBOX_NODE_PROC": "1"}):
                G.write_test_sandbox_args(ws)
            G.check_test_sandbox(ws)
            self.assertEqual(ws.proc_note, "the node's")

    def test_a_class_that_its_test_users_cannot_enter_stops_before_it_grades(self):
        # (a class under mktemp -d's 0700 ran its tests as root in scratch folders of its test users,
        # where nothing could be written: 0 graded in 355 s on 2 x H200, 2026-11-28)
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            os.chmod(root, 0o700)
            subprocess.run([sys.executable, str(COURSE / "tools" / "make-class.py"), "make", str(root / "class"),
                            "--references", "1"], check=True, capture_output=True)
            done = subprocess.run([str(COURSE / "tools" / "grade-class"), str(root / "class"), "-o", str(root / "out"),
                                   "--test-uids", "61150", "--chapters", "06-transpose"],
                                  capture_output=True, text=True, timeout=120)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn(f"uid 61150 cannot enter {root}: the folders on the way", done.stderr + done.stdout)
            self.assertFalse((root / "out" / "ref-1").exists())

    def test_test_users_are_on_by_default_as_root_and_say_why_where_they_cannot_be(self):
        # --test-uids auto (the default): a class graded as root gets a test user per worker where it
        # can; where its folders keep them out, it warns and grades with the grader's user, where a
        # BASE given stops it (above).
        grade_class = load_tool("grade-class")
        self.assertEqual(grade_class.test_uids_of("auto", slurm=False), (grade_class.AUTO_TEST_UIDS, False))
        self.assertEqual(grade_class.test_uids_of("auto", slurm=True), (None, False))
        self.assertEqual(grade_class.test_uids_of("off", slurm=False), (None, False))
        self.assertEqual(grade_class.test_uids_of("61150", slurm=True), (61150, True))
        with self.assertRaises(ValueError):
            grade_class.test_uids_of("-3", slurm=False)
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            os.chmod(root, 0o700)
            subprocess.run([sys.executable, str(COURSE / "tools" / "make-class.py"), "make", str(root / "class"),
                            "--references", "1"], check=True, capture_output=True)
            # (the warning, where grade_here calls this: "WARNING: the test programs run as the grader's user")
            with self.assertRaisesRegex(ValueError, f"uid {grade_class.AUTO_TEST_UIDS} cannot enter {root}: "):
                grade_class.check_test_users(grade_class.AUTO_TEST_UIDS, 2, root / "out")
            os.chmod(root, 0o755)  # and where they can enter, they are had: the first free of the pool
            # (another grading holds the first: an adversarial review, 2026-11-28, found a class given one
            # user per worker graded as root beside another class, and a worker whose user was taken
            # failing every submission it took next)
            other = G.Workspace(pathlib.Path("/nonexistent/other"))
            G.hold_test_user(other, grade_class.AUTO_TEST_UIDS, 0)
            os.chmod(root / "class", 0o750)  # (open to others, the class says so: a WARNING)
            try:
                done = subprocess.run([str(COURSE / "tools" / "grade-class"), str(root / "class"), "-o",
                                       str(root / "out"), "--chapters", "01-measuring", "--gpus", "none"],
                                      capture_output=True, text=True, timeout=600)
            finally:
                os.close(other.test_user_lock)
            self.assertEqual(done.returncode, 0, done.stderr[-2000:])
            self.assertNotIn("WARNING", done.stderr)
            students = sorted(p.name for p in (root / "class").iterdir() if p.is_dir())  # (a release: no reference)
            self.assertTrue(students)
            for student in students:
                self.assertEqual(os.stat(root / "out" / student).st_mode & 0o777, 0o750)  # no other user reads them
                said = json.loads((root / "out" / student / "timing.json").read_text())["test_user"]
                self.assertRegex(said, r"^uid (\d+), gid \1 \(its own\)$")
                self.assertNotEqual(said, f"uid {grade_class.AUTO_TEST_UIDS}, gid {grade_class.AUTO_TEST_UIDS} "
                                          "(its own)")


class SandboxReview(CompiledSandbox, unittest.TestCase):
    """course-sandbox against an adversarial review (2026-11-28): hidden folders reached through
    links, set-user-ID files made in scratch, log lines split by a path, metadata changes of the
    program's own objects refused as faults."""

    def probe(self, root, source):
        (root / "probe.c").write_text(source)
        subprocess.run(["cc", "-O1", "-o", str(root / "probe"), str(root / "probe.c")], check=True)
        return root / "probe"

    def test_no_process_of_the_node_is_found_or_read_by_its_pid(self):
        """Found by an adversarial review (2026-11-28): sched_getaffinity (and sched_getparam,
        sched_getscheduler, get_robust_list) on every pid listed the node's processes, and read a
        classmate's CPU affinity, set on itself, as a channel. They run on the program's own
        process and threads only; any other pid is a process that is not there (ESRCH), logged."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            probe = self.probe(root, r"""
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
static volatile pid_t tid;
static void* thread(void* unused) { (void)unused; tid = (pid_t)syscall(SYS_gettid); for (;;) pause(); }
static void ask(const char* what, pid_t pid) {
  cpu_set_t set;
  struct sched_param param;
  void* head; size_t length;
  const int a = sched_getaffinity(pid, sizeof set, &set) == 0 ? 0 : errno;
  const int b = sched_getparam(pid, &param) == 0 ? 0 : errno;
  const int c = sched_getscheduler(pid) >= 0 ? 0 : errno;
  const int d = syscall(SYS_get_robust_list, pid, &head, &length) == 0 ? 0 : errno;
  printf("%s %d %d %d %d\n", what, a, b, c, d);
}
int main(int argc, char** argv) {
  pthread_t t;
  pthread_create(&t, NULL, thread, NULL);
  while (!tid) sched_yield();
  ask("zero", 0); ask("self", getpid()); ask("thread", tid);
  ask("outside", (pid_t)atoi(argv[1])); ask("init", 1);
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  printf("set-thread %d\n", pthread_setaffinity_np(t, sizeof set, &set));
  printf("set-outside %d\n", sched_setaffinity((pid_t)atoi(argv[1]), sizeof set, &set) == 0 ? 0 : errno);
  struct sched_param param;
  printf("negative %d\n", sched_getparam(-1, &param) == 0 ? 0 : errno);  // (the kernel's EINVAL)
  return 0;
}
""")
            subprocess.run(["cc", "-O1", "-pthread", "-o", str(probe), str(root / "probe.c")], check=True)
            log = root / "calls.log"
            done = subprocess.run([str(self.launcher), "-w", str(root), "-s", f"enforce:{log}", "--", str(probe),
                                   str(os.getpid())], capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            said = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()}
            for own in ("zero", "self", "thread"):
                self.assertEqual(said[own], ["0", "0", "0", "0"], (own, done.stdout))
            for other in ("outside", "init"):
                self.assertEqual(said[other], [str(errno.ESRCH)] * 4, (other, done.stdout))
            # (the third review: a thread's own CPUs, pthread_setaffinity_np, OpenMP's binding, were refused)
            self.assertEqual((said["set-thread"], said["set-outside"], said["negative"]),
                             (["0"], [str(errno.ESRCH)], [str(errno.EINVAL)]), done.stdout)
            logged = {int(line.split()[0]): int(line.split()[1]) for line in log.read_text().splitlines()
                      if line.split()[0].isdigit()}
            # (x86-64: sched_getaffinity 204, sched_getparam 143, sched_getscheduler 145, get_robust_list 274)
            self.assertEqual({nr: logged.get(nr) for nr in (204, 143, 145, 274, 203)},
                             {204: 2, 143: 2, 145: 2, 274: 2, 203: 1})  # (203: sched_setaffinity)

    def test_record_locks_on_its_own_files_only(self):
        """Found by an adversarial review (2026-11-28): a lock placed with F_OFD_SETLK on a file two
        gradings may read, at a chosen range, was read by the other with F_OFD_GETLK (a channel,
        /proc/locks hidden or not). fcntl's record locks run on the program's own files (its -w
        folders, a memfd) only; elsewhere they are refused and logged."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            (root / "scratch").mkdir()
            (root / "scratch" / "mine").write_text("x\n")
            (root / "shared").write_text("x\n")
            probe = self.probe(root, r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
static void try(const char* what, int fd) {
  struct flock lock = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 4242, .l_len = 7};
  const int set = fcntl(fd, F_OFD_SETLK, &lock) == 0 ? 0 : errno;
  struct flock asked = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  const int get = fcntl(fd, F_GETLK, &asked) == 0 ? 0 : errno;
  struct flock posix = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 1};
  const int setw = fcntl(fd, F_SETLKW, &posix) == 0 ? 0 : errno;
  printf("%s %d %d %d %d\n", what, set, get, setw, fcntl(fd, F_GETFD) >= 0 ? 0 : errno);
}
static char** paths;
static void* after_main(void* unused) {  // (the first thread has ended: its table is gone)
  (void)unused;
  try("late-own", open(paths[1], O_RDONLY));
  try("late-shared", open(paths[2], O_RDONLY));
  fflush(stdout);
  _exit(0);
}
int main(int argc, char** argv) {
  (void)argc;
  try("own", open(argv[1], O_RDONLY));
  try("shared", open(argv[2], O_RDONLY));
  int memory = memfd_create("m", 0);
  if (write(memory, "x", 1) != 1) return 1;
  try("memfd", memory);
  try("bad", 999);
  fflush(stdout);
  paths = argv;
  pthread_t thread;
  pthread_create(&thread, NULL, after_main, NULL);
  pthread_exit(NULL);
}
""")
            subprocess.run(["cc", "-O1", "-pthread", "-o", str(probe), str(root / "probe.c")], check=True)
            log = root / "calls.log"
            done = subprocess.run([str(self.launcher), "-w", str(root / "scratch"), "-s", f"enforce:{log}", "--",
                                   str(probe), str(root / "scratch" / "mine"), str(root / "shared")],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            said = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()}
            self.assertEqual(said["own"], ["0", "0", "0", "0"], done.stdout)
            self.assertEqual(said["memfd"], ["0", "0", "0", "0"], done.stdout)
            self.assertEqual(said["shared"], [str(errno.EPERM)] * 3 + ["0"], done.stdout)  # (F_GETFD still runs)
            # The third review (2026-11-28): with its first thread ended, a program's locks were let run
            # on any file (the check could not copy the descriptor from the first thread's table).
            self.assertEqual(said["late-own"], ["0", "0", "0", "0"], done.stdout)
            self.assertEqual(said["late-shared"], [str(errno.EPERM)] * 3 + ["0"], done.stdout)
            self.assertEqual(said["bad"][:3], [str(errno.EPERM)] * 3, done.stdout)  # (no copy, no call)
            self.assertIn(f"72 9 {probe}", log.read_text())  # fcntl (72 on x86-64): nine refused

    def test_a_link_on_the_way_to_a_hidden_folder_does_not_open_it(self):
        """A symbolic link to the hidden folder, or a hard link to a hidden file, in a folder on the
        way to the hidden one (anyone can plant one in /tmp) put the read rule on what it leads to:
        the hidden file became readable by its own path too. Such entries are skipped now."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            (root / "hidden").mkdir()
            (root / "hidden" / "secret.txt").write_text("secret\n")
            (root / "plain.txt").write_text("plain\n")
            (root / "zz-link").symlink_to("hidden")
            os.link(root / "hidden" / "secret.txt", root / "zz-hard")
            script = ("cat zz-link/secret.txt && echo read-link; cat zz-hard && echo read-hard; "
                      "cat hidden/secret.txt && echo read-hidden; cat plain.txt && echo read-plain; true")
            done = subprocess.run([str(self.launcher), "-r", "-h", str(root / "hidden"), "--", "sh", "-c", script],
                                  cwd=root, capture_output=True, text=True, timeout=60)
            said = done.stdout.split()
            self.assertIn("read-plain", said, done.stderr)
            for what in ("read-link", "read-hard", "read-hidden"):
                self.assertNotIn(what, said)
            self.assertNotIn("secret", said)

    SETID_PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
static void say(const char* what, long got) { printf("%s %s\n", what, got >= 0 ? "ok" : strerror(errno)); }
int main(int argc, char** argv) {
  char path[512];
  snprintf(path, sizeof path, "%s/suid", argv[1]);
  say("open-suid", open(path, O_WRONLY | O_CREAT, 04755));
  snprintf(path, sizeof path, "%s/sgid", argv[1]);
  say("openat-sgid", openat(AT_FDCWD, path, O_RDWR | O_CREAT | O_EXCL, 02755));
  say("tmpfile-suid", open(argv[1], O_TMPFILE | O_WRONLY, 04700));
  snprintf(path, sizeof path, "%s/creat", argv[1]);
  say("creat-suid", syscall(SYS_creat, path, 04755));
  snprintf(path, sizeof path, "%s/plain", argv[1]);
  say("open-plain", open(path, O_WRONLY | O_CREAT, 0755));
  snprintf(path, sizeof path, "%s/folder", argv[1]);
  say("mkdir-sgid", mkdir(path, 02755));
  return 0;
}
"""

    def test_no_set_id_file_is_made(self):
        """open or openat with O_CREAT (or O_TMPFILE) and a set-user-ID or set-group-ID mode made such a
        file in scratch, which outlives the grading (and the grader may be root). Refused now and logged
        ("refused-setid <path>"), which the grader names; creat is outside the list; a folder's set-group-ID
        bit is harmless."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            probe = self.probe(root, self.SETID_PROBE)
            ws = G.Workspace(root)
            scratch = root / "scratch"
            scratch.mkdir()
            done = subprocess.run([str(self.launcher), "-w", str(scratch), "-s", f"enforce:{ws.syscall_log}", "--",
                                   str(probe), str(scratch)], capture_output=True, text=True, timeout=60, cwd=scratch)
            self.assertEqual(done.returncode, 0, done.stderr)
            said = dict(line.split(" ", 1) for line in done.stdout.splitlines())
            for what in ("open-suid", "openat-sgid", "tmpfile-suid", "creat-suid"):
                self.assertEqual(said[what], "Operation not permitted", what)
            self.assertEqual(said["open-plain"], "ok")
            self.assertEqual(said["mkdir-sgid"], "ok")
            self.assertEqual(sorted(p.name for p in scratch.iterdir()), ["folder", "plain"])
            for path in scratch.iterdir():
                self.assertFalse(path.stat().st_mode & 0o4000, path)
            counts, _ = G.syscalls_outside(ws)
            for path in (scratch / "suid", scratch / "sgid", scratch):
                self.assertEqual(counts.get(f"make a set-user-ID file {path}"), 1, counts)
            names = G._syscall_names()
            if names:
                self.assertEqual(counts.get(names.get(85, "syscall 85")), 1, counts)  # creat: outside the list

    def test_a_set_id_line_is_named(self):
        import tempfile as T
        ws = G.Workspace(pathlib.Path(T.mkdtemp()))
        ws.syscall_log.write_text("refused-setid /scratch/suid /b/student_ch06_tests --gtest_filter=A.B\n"
                                  "refused-write /proc/self/mem /b/student_ch06_tests\n")
        counts, _ = G.syscalls_outside(ws)
        self.assertEqual(counts, {"make a set-user-ID file /scratch/suid": 1, "open for writing /proc/self/mem": 1})

    def test_a_path_cannot_split_a_log_line(self):
        """A path with U+2028 (bytes e2 80 a8) kept its bytes in the log, and the grader split lines
        there (splitlines): a second, forged fault in the student's report. The sandbox writes such
        bytes as '?' now, and the grader splits at newlines only."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            probe = self.probe(root, '#include <fcntl.h>\nint main(void) {\n'
                                     '  open("/dev/forged\\xe2\\x80\\xa8refused-write\\xc2\\x85/etc/shadow", O_WRONLY);\n'
                                     '  return 0;\n}\n')
            ws = G.Workspace(root)
            done = subprocess.run([str(self.launcher), "-w", str(root / "nothing"), "-s", f"enforce:{ws.syscall_log}",
                                   "--", str(probe)], capture_output=True, timeout=60, cwd=root)
            self.assertEqual(done.returncode, 0, done.stderr)
            written = ws.syscall_log.read_bytes()
            self.assertTrue(all(byte < 0x80 for byte in written), written)
            counts, _ = G.syscalls_outside(ws)
            self.assertEqual(list(counts), ["open for writing /dev/forged???refused-write??/etc/shadow"])
            # and a log of an older sandbox: one line, one fault
            ws.syscall_log.write_text("refused-write /dev/a\u2028refused-write /etc/passwd /b/t\n", encoding="utf-8")
            counts, _ = G.syscalls_outside(ws)
            self.assertEqual(list(counts), ["open for writing /dev/a\u2028refused-write"])

    PRIVATE_METADATA_PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
static void say(const char* what, int got) { printf("%s %s\n", what, got == 0 ? "ok" : strerror(errno)); }
int main(int argc, char** argv) {
  const struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
  struct stat info;
  int memfd = memfd_create("buffer", 0);
  say("fchmod-memfd", fchmod(memfd, 0640));
  say("futimens-memfd", futimens(memfd, times));
  fstat(memfd, &info);
  printf("memfd-mode %o\nmemfd-mtime %ld\n", info.st_mode & 07777, (long)info.st_mtime);
  int pipes[2];
  pipe(pipes);
  say("fchmod-pipe", fchmod(pipes[1], 0600));
  say("futimens-pipe", futimens(pipes[0], NULL));
  fstat(pipes[1], &info);
  printf("pipe-mode %o\n", info.st_mode & 07777);
  say("fchmod-eventfd", fchmod(eventfd(0, 0), 0666));  /* one inode for the node's eventfds: refused, not logged */
  char path[512], name[64];
  snprintf(path, sizeof path, "%s/viafd", argv[1]);
  int scratch = open(path, O_WRONLY | O_CREAT, 0600);
  snprintf(name, sizeof name, "/proc/self/fd/%d", scratch);
  say("utimensat-proc-fd-scratch", utimensat(AT_FDCWD, name, times, 0));
  int turn = open(argv[2], O_RDONLY);
  snprintf(name, sizeof name, "/proc/self/fd/%d", turn);
  printf("turn-fd %d\n", turn);
  say("utimensat-proc-fd-turn", utimensat(AT_FDCWD, name, times, 0));
  say("fchmod-proc-fd-turn", fchmod(open(name, O_RDONLY), 0600));
  return 0;
}
"""

    def test_the_programs_own_objects_change_and_no_fault_is_logged(self):
        """fchmod and futimens of a memfd or a pipe (the program's own, no path names them) were refused
        and logged, as was utimensat of /proc/self/fd/N of a file in scratch: false faults. Now they are
        made; a -R file through /proc/self/fd/N stays refused."""
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder).resolve()
            probe = self.probe(root, self.PRIVATE_METADATA_PROBE)
            scratch, turn = root / "scratch", root / "gpu-0.turn"
            scratch.mkdir()
            turn.write_text("")
            turn.chmod(0o644)
            os.utime(turn, (500000000, 500000000))
            log = root / "calls.log"
            done = subprocess.run([str(self.launcher), "-w", str(scratch), "-R", str(turn), "-s", f"enforce:{log}",
                                   "--", str(probe), str(scratch), str(turn)],
                                  capture_output=True, text=True, timeout=60, cwd=scratch)
            self.assertEqual(done.returncode, 0, done.stderr)
            said = dict(line.split(" ", 1) for line in done.stdout.splitlines())
            for what in ("fchmod-memfd", "futimens-memfd", "fchmod-pipe", "futimens-pipe", "utimensat-proc-fd-scratch"):
                self.assertEqual(said[what], "ok", what)
            self.assertEqual(said["memfd-mode"], "640")
            self.assertEqual(said["memfd-mtime"], "1000000000")
            self.assertEqual(said["pipe-mode"], "600")
            for what in ("fchmod-eventfd", "utimensat-proc-fd-turn", "fchmod-proc-fd-turn"):
                self.assertEqual(said[what], "Operation not permitted", what)
            self.assertEqual((scratch / "viafd").stat().st_mtime, 1000000000)
            self.assertEqual(turn.stat().st_mode & 0o7777, 0o644)
            self.assertEqual(turn.stat().st_mtime, 500000000)
            refused = sorted(line.split(" ")[1] for line in log.read_text().splitlines()
                             if line.startswith("refused-metadata "))
            self.assertEqual(refused, sorted([str(turn), f"/proc/self/fd/{said['turn-fd']}"]))


if __name__ == "__main__":
    unittest.main(verbosity=1)

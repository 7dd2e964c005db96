#!/usr/bin/env python3
"""Unit tests of the HTML reports (tools/course_grading/html_report.py): the perf lines the tests
print are read back with their numbers, each perf test's bar carries the student's rate, the
required rate, the baseline and the hardware limit, a test that was not a measurement says so,
and text from a test's output is escaped. On two real JUnit reports of an H100 run (the untouched
starters and the references, a few cases each: tests/grading/data/). No GPU, no build: run by the
test workflow (label unit). The pages are checked in a browser by tests/grading/check_report_page.py.

    python3 tests/grading/test_html_report.py
"""
import contextlib
import html.parser
import importlib.machinery
import importlib.util
import io
import json
import os
import pathlib
import re
import sys
import tempfile
import unittest
from unittest import mock

sys.dont_write_bytecode = True  # (the loaded scripts leave no __pycache__ in the course)

HERE = pathlib.Path(__file__).resolve().parent
COURSE = HERE.parent.parent
DATA = HERE / "data"
sys.path.insert(0, str(COURSE / "tools"))
from course_grading import html_report as H  # noqa: E402
from course_grading import results as R  # noqa: E402

POINTS = json.loads((COURSE / "grading" / "points.json").read_text())
STARTERS = DATA / "starters-grade-report.xml"
REFERENCES = DATA / "references-test-report.xml"


def load_script(name):
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), str(COURSE / "tools" / name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def as_student(results):
    """The references' results as if a student's (so that they are scored)."""
    for r in results:
        r.name = r.name.replace("solution.", "student.", 1)
    return results


class Tags(html.parser.HTMLParser):
    """The elements of a page, and its text."""

    def __init__(self, page):
        super().__init__()
        self.tags, self.text, self.attributes = [], [], []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]

    def handle_data(self, data):
        self.text.append(data)


def bar_of(page, what):
    """The SVG of the perf test whose description is `what`."""
    start = page.index(f'<div class="what">{what}</div>')
    return page[page.index("<svg", start):page.index("</svg>", start)]


class PerfLines(unittest.TestCase):
    def setUp(self):
        self.lines = {r.name.split(".", 2)[2]: R.perf_line(r.output) for r in R.read_junit(REFERENCES)}

    def test_a_ratio_to_the_copy_peak(self):
        perf = H.parse_perf(self.lines["RowSumsCoalescedPerf.NearTheCopyPeak"])
        self.assertEqual(perf["what"], "row_sums_coalesced 16384x16384")
        self.assertEqual((perf["measured"], perf["unit"], perf["ratio"]), (2852.7, "GB/s", 0.968))
        self.assertEqual((perf["baseline"], perf["baseline_name"]), (2946.7, "the device-to-device copy peak"))
        self.assertAlmostEqual(perf["required"], 0.7 * 2946.7)
        self.assertEqual((perf["limit"], perf["not_a_measurement"]), (2946.7, ""))  # the peak is the hardware's

    def test_cublas_is_a_limit_and_a_given_kernel_is_not(self):
        perf = H.parse_perf(self.lines["MatmulRegisterTiledStretchPerf.AtLeast0_4xCublasAt4096"])
        self.assertEqual((perf["unit"], perf["baseline"], perf["limit"]), ("TFLOP/s", 51.7, 51.7))
        given = H.parse_perf("matmul_tiled 4096^3: 8.5 TFLOP/s = 1.402 x the given matmul_naive (6.1 TFLOP/s); "
                             "required >= 1.300 [median of 8, spread 0.2%, 16.135 ms per call, host 16.189 ms]")
        self.assertIsNone(given["limit"])
        self.assertAlmostEqual(given["required"], 1.3 * 6.1)

    def test_the_theoretical_bandwidth_of_chapter_1(self):
        perf = H.parse_perf(self.lines["BandwidthPerf.CopyStaysBelowTheTheoreticalBandwidth"])
        self.assertEqual((perf["measured"], perf["limit"], perf["unit"]), (2994.73, 3352.32, "GB/s"))
        self.assertIsNone(perf["required"])

    def test_a_line_cut_short_and_a_baseline_name_in_parentheses(self):
        perf = H.parse_perf(self.lines["ChaseLaunchPerf.WithinTenPercentOfTheBestSweep"])  # "required ..." (ctest cut it)
        self.assertEqual(perf["baseline_name"], "the best of the sweep (block 1024)")
        self.assertEqual((perf["measured"], perf["baseline"], perf["required"]), (52.7, 52.7, None))

    def test_not_a_measurement_and_a_scaled_threshold(self):
        starters = {r.name.split(".", 2)[2]: r for r in R.read_junit(STARTERS)}
        perf = H.parse_perf(R.perf_line(starters["RowSumsCoalescedPerf.NearTheCopyPeak"].output))
        self.assertEqual(perf["not_a_measurement"], "the timed calls left a wrong result")
        scaled = H.parse_perf("t: 10.0 GB/s = 0.500 x copy peak (20.0 GB/s); required >= 0.600 (0.750 scaled by "
                              "COURSE_PERF_SCALE=0.8)")
        self.assertAlmostEqual(scaled["required"], 12.0)
        self.assertIsNone(H.parse_perf("Failed"))
        self.assertIsNone(H.parse_perf("x: nan GB/s = nan x copy peak (0.0 GB/s); required >= 0.700"))


class SubmissionPage(unittest.TestCase):
    def setUp(self):
        self.references = H.submission_page(R.score(as_student(R.read_junit(REFERENCES)), POINTS), [], "References")
        self.starters = H.submission_page(R.score(R.read_junit(STARTERS), POINTS), ["a note"], "Starters")

    def test_points_per_chapter_as_report_md(self):
        graded = R.score(R.read_junit(STARTERS), POINTS)
        self.assertIn(f"<strong>{R.points_line(R.totals(graded))}.</strong>", self.starters)
        chapters = R.chapter_totals(graded)
        c = chapters["04-coalescing"]
        self.assertIn(f'<td>{c["required"]} of {c["required_max"]}<span class="meter">', self.starters)
        self.assertIn('<section id="05-matmul"><h2>05-matmul</h2>', self.starters)
        stretch = R.chapter_totals(R.score(as_student(R.read_junit(REFERENCES)), POINTS))["05-matmul"]
        self.assertEqual((stretch["stretch"], stretch["stretch_max"]), (1, 1))
        self.assertIn("Required 0 of 0, stretch bonus 1 of 1, total 1 of 1.", self.references)

    def test_each_bar_has_the_rate_the_requirement_the_baseline_and_the_limit(self):
        bar = bar_of(self.references, "row_sums_coalesced 16384x16384")
        self.assertIn("yours: 2852.7 GB/s (0.968 x baseline)", bar)
        self.assertIn("required: 2062.7 GB/s (0.700 x baseline)", bar)
        self.assertIn("baseline = hardware limit: the device-to-device copy peak, 2946.7 GB/s", bar)
        # One scale: the bar's length and the marks' places are their values over the same maximum.
        length = float(re.search(r'class="rate" x="2" y="\d+" width="([0-9.]+)"', bar).group(1))
        required = float(re.search(r'class="required" x1="([0-9.]+)"', bar).group(1)) - 2
        limit = float(re.search(r'class="limit" x1="([0-9.]+)"', bar).group(1)) - 2
        self.assertAlmostEqual(length / limit, 2852.7 / 2946.7, places=3)
        self.assertAlmostEqual(required / limit, 0.7, places=3)
        self.assertIn('fill="#2e7d32"', bar)  # passed: green
        cublas = bar_of(self.references, "matmul_register_tiled 4096^3")
        self.assertIn("baseline = hardware limit: cuBLAS SGEMM (FP32), 51.7 TFLOP/s", cublas)
        dram = bar_of(self.references, "device-to-device copy")
        self.assertIn("yours: 2994.7 GB/s (0.893 x the limit)", dram)
        self.assertIn("hardware limit: the DRAM&#x27;s theoretical bandwidth, 3352.3 GB/s", dram)

    def test_not_a_measurement_is_shown_as_such(self):
        bar = bar_of(self.starters, "row_sums_coalesced 16384x16384")
        self.assertIn("NOT A MEASUREMENT: 364744.3 GB/s printed, not counted", bar)
        self.assertNotIn('class="rate"', bar)  # no bar for a rate that was not measured
        self.assertIn("required: 2066.7 GB/s (0.700 x baseline)", bar)  # the scale is the baseline's
        self.assertIn('NOT A MEASUREMENT: the timed calls left a wrong result</div>', self.starters)

    def test_failures_not_timed_and_not_graded(self):
        self.assertIn("not timed: 16777216 of 16777216 elements differ", self.starters)
        self.assertIn("NOT GRADED: needs two GPUs; this machine shows 1", self.starters)
        self.assertIn("04-coalescing.Sizes/AdvanceSoA.MatchesCpu/N31</strong>", self.starters)
        self.assertIn("<h3>Failed tests (2)</h3>", self.starters)  # 04: the perf test and the sizes

    def test_text_from_the_output_is_escaped(self):
        evil = "<script>alert('x')</script><img src=x onerror=alert(1)>"
        results = R.read_junit(STARTERS)
        for r in results:
            r.output = r.output.replace("[  PERF    ] row_sums_coalesced", f"[  PERF    ] {evil} row_sums_coalesced")
            r.output = r.output.replace("Expected: true", "Expected: true\n" + evil)
            r.reason = evil if r.outcome == "failed" else r.reason
        for page in (H.submission_page(R.score(results, POINTS), [evil], evil),
                     H.submission_page(H.unscored(results), [evil], "unscored")):
            tags = Tags(page)
            self.assertNotIn("script", tags.tags)
            self.assertNotIn("img", tags.tags)
            self.assertNotIn("onerror", tags.attributes)
            self.assertIn("&lt;script&gt;", page)
            self.assertIn(evil, "".join(tags.text))  # shown as text

    def test_a_diagnosis_is_shown_under_its_bar_and_escaped(self):
        results = R.read_junit(REFERENCES)
        line = "[ DIAGNOSIS] row_sums_coalesced 16384x16384: DRAM traffic 1.01 x the minimum; <b>x</b>\n"
        for r in results:
            if "RowSumsCoalescedPerf" in r.name:
                r.output = "[ DIAGNOSIS] forged: printed by the submission first\n" + r.output + line
        page = H.submission_page(R.score(as_student(results), POINTS), [], "References")
        self.assertIn('<div class="diagnosis">Diagnosis: DRAM traffic 1.01 x the minimum; &lt;b&gt;x&lt;/b&gt;</div>',
                      page)
        self.assertNotIn("forged", page)
        # A line printed before the judge's perf line (by code under test) is not the judge's.
        self.assertEqual(R.diagnosis_line("[ DIAGNOSIS] t: forged\n[  PERF    ] t: 1 GB/s = 1 x p (1 GB/s)\n"), "")
        self.assertEqual(R.diagnosis_line("no diagnosis"), "")
        self.assertEqual(R.diagnosis_of(line, "transpose_tiled 8192x8192"), "")  # another test's subject
        self.assertEqual(R.diagnosis_line("[ DIAGNOSIS] t: printed where no perf line came\n"), "")

    def test_a_page_needs_no_script_and_no_network(self):
        for page in (self.starters, self.references):
            self.assertNotIn("<script", page)
            self.assertNotRegex(page, r"(src|href)=\"https?:")
            self.assertTrue(page.startswith("<!DOCTYPE html>"))

    def test_without_points(self):
        page = H.submission_page(H.unscored(R.read_junit(REFERENCES)), [], "References")
        self.assertIn("<th>stretch passed</th>", page)
        self.assertIn("yours: 2852.7 GB/s", page)


@unittest.skipUnless((COURSE / "tools" / "check-fixtures.py").is_file(),
                     "the fixtures and their checker stay with the instructors (not in a student release)")
class CheckFixtures(unittest.TestCase):
    """tools/check-fixtures.py: with --diagnose, a fixture's `diagnosis:` line must be in the judge's
    [ DIAGNOSIS] line (after its perf line) of the tests it names, and without it is not checked;
    with --gpus, the fixtures run on every GPU side by side."""

    def test_a_diagnosis_expectation(self):
        check = load_script("check-fixtures.py")
        fixture = {("unpadded", "06-transpose"): {
            "chapter": "06-transpose", "name": "unpadded", "class": "threshold", "about": "", "may": [],
            "expect": [(re.compile("TransposeTiledPerf"), "Pad the tile")],
            "diagnosis": [(re.compile("TransposeTiledPerf"), "wavefronts")]}}
        test = "fixture.unpadded.06-transpose.TransposeTiledPerf.At8192"
        perf = "[  PERF    ] transpose_tiled 8192x8192: 1500.0 GB/s = 0.500 x copy peak (3000.0 GB/s)\n"
        said = perf + "[ DIAGNOSIS] transpose_tiled 8192x8192: each shared-memory load takes 32 wavefronts\nPad the tile"
        (row,) = check.verdicts(fixture, {test: ("failed", said)}, diagnose=True)
        self.assertEqual(row[4], "ok", row)
        forged = "[ DIAGNOSIS] transpose_tiled 8192x8192: 32 wavefronts\n" + perf + "Pad the tile"
        (row,) = check.verdicts(fixture, {test: ("failed", forged)}, diagnose=True)
        self.assertEqual(row[4], "MISMATCH")
        self.assertIn("diagnosis lacks 'wavefronts'", row[6][0])
        (row,) = check.verdicts(fixture, {test: ("failed", forged)})  # not asked for: not checked
        self.assertEqual(row[4], "ok")

    def test_fixtures_split_over_gpus(self):
        """--gpus: the one-GPU chapters' fixtures taken one at a time by each GPU from a list they
        share, each ctest seeing its GPU alone; chapter 11's after them with every GPU visible;
        every ctest's JUnit file read; with --deadline, the fixtures not started are named."""
        check = load_script("check-fixtures.py")
        fixtures = {(f"f{i}", chapter): {} for i, chapter in enumerate(
            ["04-coalescing", "04-coalescing", "06-transpose", "07-async-pipeline", "11-deploy-multi-gpu"])}
        phases = check.split_over_gpus(fixtures, ["0", "1"])
        self.assertEqual([[visible for visible, _ in phase] for phase in phases], [["0", "1"], ["0,1"]])
        self.assertIs(phases[0][0][1], phases[0][1][1])  # one list, shared
        self.assertEqual(set(phases[0][0][1]), {key for key in fixtures if key[1] != "11-deploy-multi-gpu"})
        self.assertEqual(phases[1][0][1], [("f4", "11-deploy-multi-gpu")])
        with tempfile.TemporaryDirectory() as folder:
            folder = pathlib.Path(folder)
            fake = folder / "ctest"  # writes a JUnit file naming the fixture it was asked to run and the GPUs it saw
            fake.write_text("#!/bin/sh\nwhile [ \"$1\" != -R ]; do shift; done\n"
                            "name=$(echo \"$2\" | sed 's/[^a-z0-9.-]//g; s/^fixture.//; s/[.]$//')\n"
                            "while [ \"$1\" != --output-junit ]; do shift; done\n"
                            "printf '<testsuite><testcase name=\"fixture.%s.T%s\" status=\"run\">"
                            "<system-out>ok</system-out></testcase></testsuite>' \"$name\" "
                            "\"$(echo $CUDA_VISIBLE_DEVICES | tr , _)\" >\"$2\"\n")
            fake.chmod(0o755)
            build = folder / "build"
            build.mkdir()
            with mock.patch.dict(os.environ, {"PATH": f"{folder}:{os.environ['PATH']}"}):
                junits, not_run = check.run_ctest(str(build), fixtures, str(build / "fixtures-report.xml"),
                                                  gpus=["0", "1"])
                self.assertEqual((len(junits), not_run), (5, []))
                results = check.read_results(junits, build / "test-reports")
                self.assertEqual({name.rsplit(".", 1)[0] for name in results},
                                 {f"fixture.{name}.{chapter}" for name, chapter in fixtures})
                self.assertIn("fixture.f4.11-deploy-multi-gpu.T0_1", results)
                self.assertTrue({"fixture.f0.04-coalescing.T0", "fixture.f0.04-coalescing.T1"} & set(results))
                junits, not_run = check.run_ctest(str(build), fixtures, str(build / "fixtures-report.xml"),
                                                  gpus=["0", "1"], deadline=0)
                self.assertEqual((junits, sorted(not_run)), ([], sorted(fixtures)))
        # On a GPU run a skipped test is a mismatch (a device that is not there skipped every GPU test,
        # and a fixture whose tests all skipped passed: an adversarial review, 2026-11-28).
        legitimate = {("legit", "04-coalescing"): {"chapter": "04-coalescing", "name": "legit", "class": "legitimate",
                                                   "about": "", "may": [], "expect": [], "diagnosis": []}}
        skipped = {"fixture.legit.04-coalescing.AdvanceSoA.Matches": ("skipped", "[  SKIPPED ] no CUDA device\n")}
        self.assertEqual(check.verdicts(legitimate, skipped)[0][4], "ok")  # (without a GPU, as CI)
        (row,) = check.verdicts(legitimate, skipped, gpu_run=True)
        self.assertEqual((row[4], row[6]), ("MISMATCH", ["AdvanceSoA.Matches skipped on a GPU run: [  SKIPPED ] no "
                                                         "CUDA device"]))
        with mock.patch.object(check, "gpu_list", lambda spec: ["0", "1"] if spec == "all" else spec.split(",")), \
                mock.patch.object(sys, "argv", ["check-fixtures.py", "--gpus", "0,5"]), \
                contextlib.redirect_stderr(io.StringIO()) as said:
            self.assertEqual(check.main(), 2)
        self.assertIn("no GPU 5 here (nvidia-smi lists 0, 1)", said.getvalue())


class ClassPage(unittest.TestCase):
    """tools/grade-class --collect writes class.html beside class.csv."""

    def test_collect_writes_the_class_page(self):
        grade_class = load_script("grade-class")
        with tempfile.TemporaryDirectory() as folder:
            outdir = pathlib.Path(folder) / "graded"
            students = {"ada": as_student(R.read_junit(REFERENCES)), "bob": R.read_junit(STARTERS),
                        "<eve>": R.read_junit(STARTERS)}
            chapters = ["01-measuring", "04-coalescing", "05-matmul", "08-execution-config", "11-deploy-multi-gpu"]
            for student, results in students.items():
                graded = R.score(results, POINTS)
                (outdir / student).mkdir(parents=True)
                (outdir / student / "results.json").write_text(json.dumps(R.gradescope_results(graded, [])))
                rows = R.chapter_totals(graded)
                (outdir / student / "timing.json").write_text(json.dumps({
                    "build_seconds": 1, "test_seconds": 1, "total_seconds": 2,
                    "chapters": {c: row["total"] for c, row in rows.items()},
                    "chapter_required_max": {c: row["required_max"] for c, row in rows.items()},
                    "chapter_stretch_max": {c: row["stretch_max"] for c, row in rows.items()}, **R.totals(graded)}))
            (outdir / "class.json").write_text(json.dumps({"students": [*students, "carl"], "chapters": chapters}))
            (outdir / "carl").mkdir()
            (outdir / "carl" / "refused.txt").write_text("refused: <a link>\n")
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(grade_class.collect(outdir), 0)
            page = (outdir / "class.html").read_text()
        self.assertIn("4 submissions, 3 graded; 1 not: carl (refused: &lt;a link&gt;).", page)
        self.assertIn("<h3>04-coalescing</h3>", page)
        self.assertIn("&lt;eve&gt;", page)
        self.assertNotIn("<eve>", page)
        start = page.index("<h3>04-coalescing.RowSumsCoalescedPerf.NearTheCopyPeak</h3>")
        part = page[start:page.index("<h3>", start + 5)]
        self.assertIn("required: 0.700 x", part)
        self.assertIn("ada: 0.968 x (2852.7 GB/s)", part)
        self.assertIn("1 measured, 0 below the required ratio; 2 not a measurement", part)
        self.assertEqual(part.count("<circle"), 1)
        self.assertIn("no measurement: 2 not timed", page)  # 05-matmul.MatmulTiledPerf: the starters'
        self.assertIn("ada: 0.893 x (2994.7 GB/s)", page)  # chapter 1: the copy against the DRAM's bandwidth
        self.assertNotIn("<script", page)


if __name__ == "__main__":
    unittest.main(verbosity=1)

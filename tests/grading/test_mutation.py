#!/usr/bin/env python3
"""Unit tests of the mutator (tools/course_grading/mutation.py, tools/mutate.py): every operator
applies where expected on small snippets, comments, strings and preprocessor lines stay
untouched, ids are stable, sampling is deterministic, make-class writes the class's layout,
report reads the verdicts, and `tools/mutate.py list` yields mutants in every chapter. No GPU,
no build: run by the test workflow (label unit).

    python3 tests/grading/test_mutation.py
"""
import contextlib
import io
import importlib.machinery
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # (the loaded scripts leave no __pycache__ in the course)

HERE = pathlib.Path(__file__).resolve().parent
COURSE = HERE.parent.parent
sys.path.insert(0, str(COURSE / "tools"))
from course_grading import mutation as M  # noqa: E402

loader = importlib.machinery.SourceFileLoader("mutate", str(COURSE / "tools" / "mutate.py"))
spec = importlib.util.spec_from_loader("mutate", loader)
mutate = importlib.util.module_from_spec(spec)
loader.exec_module(mutate)


def mutants(source):
    return M.mutants_of(source, "00-test", "x.cu")


def afters(source, operator):
    return [m.apply(source) for m in mutants(source) if m.operator == operator]


def one_line(source, operator):
    return [m.after.strip() for m in mutants(source) if m.operator == operator]


# The tests that mutate the real references need them: a student release has no solutions/.
NEEDS_SOLUTIONS = unittest.skipUnless((COURSE / "solutions").is_dir(),
                                      "the reference solutions are not in this copy (a student release)")


class Operators(unittest.TestCase):
    def test_narrow(self):
        source = "void f(size_t n) {\n  const size_t i = n * 2;\n  long long j = static_cast<size_t>(n);\n}\n"
        got = one_line(source, "narrow")
        self.assertIn("const int i = n * 2;", got)
        self.assertIn("int j = static_cast<size_t>(n);", got)
        self.assertIn("long long j = static_cast<int>(n);", got)
        self.assertNotIn("void f(int n) {", got)  # a parameter is not narrowed: the definition would not link

    def test_guards(self):
        source = ("__global__ void k(float* a, int n) {\n  int i = threadIdx.x;\n  if (i >= n) return;\n"
                  "  if (i < n && i > 2) a[i] = 0.5f;\n  float v = (i < n) ? a[i] : 1.0f;\n}\n")
        self.assertIn("if (false) return;", one_line(source, "guard-drop"))
        self.assertIn("if (true) a[i] = 0.5f;", one_line(source, "guard-true"))
        self.assertIn("float v = (true) ? a[i] : 1.0f;", one_line(source, "guard-true"))
        parts = one_line(source, "guard-part")
        self.assertIn("if (true && i > 2) a[i] = 0.5f;", parts)
        self.assertIn("if (i < n && true) a[i] = 0.5f;", parts)

    def test_or_chain_of_a_leaving_guard(self):
        source = "void f(int n, int m) {\n  if (n == 0 || m < 1) return;\n}\n"
        self.assertEqual(one_line(source, "guard-part"), ["if (false || m < 1) return;", "if (n == 0 || false) return;"])

    def test_off_by_one(self):
        source = "void f(int n) {\n  for (int i = 0; i < n - 1; ++i) g(i + 1);\n  if (n >= 4) g(n);\n}\n"
        got = one_line(source, "off-by-one")
        self.assertIn("for (int i = 0; i <= n - 1; ++i) g(i + 1);", got)
        self.assertIn("for (int i = 0; i < n; ++i) g(i + 1);", got)
        self.assertIn("for (int i = 0; i < n - 1; ++i) g(i);", got)
        self.assertIn("if (n > 4) g(n);", got)

    def test_templates_and_launches_are_no_comparisons(self):
        source = "void f(int n, cudaStream_t s) {\n  k<float><<<n, 32, 0, s>>>(static_cast<size_t>(n));\n}\n"
        self.assertEqual(one_line(source, "off-by-one"), [])
        self.assertEqual(one_line(source, "literal"), [])  # the launch's shared-memory 0 is left alone

    def test_clamp(self):
        source = "int f(int a, int b) {\n  return std::min(a, b + 1);\n}\n"
        self.assertEqual(one_line(source, "clamp"), ["return a;", "return b + 1;"])

    def test_literal(self):
        source = "void f() {\n  int a = 0; float b = 0.0f; int c = 10; unsigned d = 0xffu;\n}\n"
        self.assertEqual(one_line(source, "literal"), ["int a = 1; float b = 0.0f; int c = 10; unsigned d = 0xffu;"])

    def test_swap_args(self):
        source = "void f(int rows, int cols, cudaStream_t stream) {\n  g(rows, cols, stream);\n}\n"
        self.assertEqual(one_line(source, "swap-args"), ["g(cols, rows, stream);"])  # never with a stream

    def test_no_check(self):
        source = ("void f(float** p) {\n  cudaError_t e = cudaMalloc(p, 4);\n"
                  "  if (e != cudaSuccess) throw std::runtime_error(\"no\");\n  CUDA_CHECK(cudaMemset(*p, 0, 4));\n}\n")
        got = one_line(source, "no-check")
        self.assertIn('if (false) throw std::runtime_error("no");', got)
        self.assertIn("cudaMemset(*p, 0, 4);", got)

    def test_no_free(self):
        source = "void f(float* p, cudaStream_t s, cudaEvent_t e) {\n  cudaFree(p);\n  cudaStreamDestroy(s);\n" \
                 "  cudaEventDestroy(e);\n  cudaFreeHost(p);\n}\n"
        self.assertEqual(one_line(source, "no-free"), ["cudaSuccess;"] * 4)

    def test_stream0(self):
        source = ("void f(const cudaStream_t* streams, int i, cudaStream_t stream) {\n"
                  "  k<<<1, 32, 0, stream>>>();\n  cudaMemcpyAsync(a, b, 4, cudaMemcpyDefault, streams[i]);\n}\n")
        got = one_line(source, "stream0")
        self.assertIn("k<<<1, 32, 0, 0>>>();", got)
        self.assertIn("cudaMemcpyAsync(a, b, 4, cudaMemcpyDefault, streams[0]);", got)

    def test_no_sync(self):
        source = ("__global__ void k() {\n  __syncthreads();\n  __syncwarp(0xffffffffu);\n"
                  "  cuda::pipeline_consumer_wait_prior<2>(pipe);\n  pipe.consumer_wait();\n  bar.arrive_and_wait();\n}\n"
                  "void h(cudaStream_t a, cudaEvent_t e) {\n  cudaEventRecord(e, a);\n  cudaStreamWaitEvent(a, e, 0);\n}\n")
        got = one_line(source, "no-sync")
        self.assertEqual(got.count("(void)0;"), 5)
        self.assertEqual(got.count("cudaSuccess;"), 2)

    def test_static_only_in_host_functions(self):
        source = ("__global__ void k(int n) {\n  int i = n;\n}\nint h(int n) {\n  int x = n * 2;\n"
                  "  for (int i = 0; i < n; ++i) {\n    int y = i;\n  }\n  auto l = [&](int a) { int z = a; return z; };\n"
                  "  return x;\n}\n")
        self.assertEqual(one_line(source, "static"), ["static int x = n * 2;"])

    def test_arith_logic_dims(self):
        source = "__global__ void k(float* a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.y;\n" \
                 "  if (i < n && i > 0) a[i] = a[i] - 1.0f;\n}\n"
        arith = one_line(source, "arith")
        self.assertIn("int i = blockIdx.x / blockDim.x + threadIdx.y;", arith)
        self.assertIn("int i = blockIdx.x * blockDim.x - threadIdx.y;", arith)
        self.assertIn("if (i < n && i > 0) a[i] = a[i] + 1.0f;", arith)
        self.assertIn("if (i < n || i > 0) a[i] = a[i] - 1.0f;", one_line(source, "logic"))
        self.assertIn("int i = blockIdx.y * blockDim.x + threadIdx.y;", one_line(source, "dim-swap"))
        self.assertIn("int i = blockIdx.x * blockDim.x + threadIdx.x;", one_line(source, "dim-swap"))

    def test_every_operator_is_listed(self):
        self.assertEqual(set(M.OPERATORS), {"narrow", "guard-true", "guard-drop", "guard-part", "off-by-one", "clamp",
                                            "literal", "swap-args", "no-check", "no-free", "stream0", "no-sync",
                                            "static", "arith", "logic", "dim-swap"})
        for name in M.OPERATORS:
            self.assertIn(f"    {name}", M.__doc__)


class Untouched(unittest.TestCase):
    SOURCE = ('#include "x.h"  // if (i < n) return;\n#define LIMIT (1 + 1)\n'
              "// int a = 0; if (a < 1) return;\n/* size_t b = 0;\n   __syncthreads(); */\n"
              'const char* s = "if (i < n) return; a + b";\n'
              "#ifdef COURSE_REFERENCE_VARIANTS\nvoid variant(int n) { if (n < 0) return; }\n#else\n"
              "void live(int n) { if (n < 0) return; }\n#endif\n"
              "#ifndef COURSE_REFERENCE_VARIANTS\nvoid kept(int n) { if (n < 0) return; }\n#endif\n")

    def test_comments_strings_directives_and_variants(self):
        found = mutants(self.SOURCE)
        lines = {m.line for m in found}
        self.assertEqual(lines, {10, 13})  # the #else branch and the #ifndef branch only
        for m in found:
            mutated = m.apply(self.SOURCE).splitlines()
            original = self.SOURCE.splitlines()
            changed = [i + 1 for i, (a, b) in enumerate(zip(mutated, original)) if a != b]
            self.assertEqual(changed, [m.line])

    def test_mask_keeps_offsets(self):
        self.assertEqual(len(M.mask(self.SOURCE)), len(self.SOURCE))
        self.assertEqual(M.mask(self.SOURCE).count("\n"), self.SOURCE.count("\n"))


class Ids(unittest.TestCase):
    SOURCE = "void f(int n) {\n  if (n < 4) g(n);\n  if (n < 4) g(n);\n}\n"

    def test_ids_are_stable_and_unique(self):
        first = [m.id for m in mutants(self.SOURCE)]
        self.assertEqual(first, [m.id for m in mutants(self.SOURCE)])
        self.assertEqual(len(first), len(set(first)))
        moved = [m.id for m in mutants("// a new first line\n" + self.SOURCE)]
        self.assertEqual([M.loose(i) for i in first], [M.loose(i) for i in moved])
        self.assertTrue(all(i.startswith("00-test/x.cu:") for i in first))
        m = mutants(self.SOURCE)[0]
        self.assertRegex(m.id, r"^00-test/x\.cu:\d+:[a-z0-9-]+:\d+:[0-9a-f]{6}$")
        self.assertRegex(m.student, r"^[A-Za-z0-9._-]+$")

    def test_equivalent_by_id_or_moved_line(self):
        m = mutants(self.SOURCE)[0]
        listed = {m.id: "same"}
        self.assertEqual(M.equivalent_reason(m.id, listed), "same")
        moved = m.id.replace(f":{m.line}:", f":{m.line + 5}:", 1)
        self.assertEqual(M.equivalent_reason(moved, listed), "same")
        self.assertIsNone(M.equivalent_reason(m.id.replace(m.digest, "000000"), listed))
        with tempfile.TemporaryDirectory() as folder:
            path = pathlib.Path(folder) / "equivalent.txt"
            path.write_text(f"# comment\n\n{m.id}  the guard repeats the one above\n")
            self.assertEqual(M.read_equivalent(path), {m.id: "the guard repeats the one above"})

    @NEEDS_SOLUTIONS
    def test_sampling_is_deterministic_and_stratified(self):
        course = M.course_mutants(COURSE, ["05-matmul"])
        a = [m.id for m in M.sample(course, 12, seed=7)]
        self.assertEqual(a, [m.id for m in M.sample(course, 12, seed=7)])
        self.assertNotEqual(a, [m.id for m in M.sample(course, 12, seed=8)])
        self.assertEqual(len(a), 12)
        operators = {m.operator for m in M.sample(course, 12, seed=7)}
        self.assertEqual(len(operators), min(12, len({m.operator for m in course})))
        excluded = set(a[:3])
        self.assertFalse(excluded & {m.id for m in M.sample(course, 12, seed=7, excluded=excluded)})


@NEEDS_SOLUTIONS
class Course(unittest.TestCase):
    def test_list_yields_mutants_in_every_chapter(self):
        listing = subprocess.run([sys.executable, str(COURSE / "tools" / "mutate.py"), "list"], capture_output=True,
                                 text=True, timeout=120)
        self.assertEqual(listing.returncode, 0, listing.stderr)
        chapters = sorted(p.parent.name for p in (COURSE / "chapters").glob("*/*.cu")
                          if (COURSE / "solutions" / p.parent.name / p.name).exists())
        for chapter in set(chapters):
            self.assertRegex(listing.stdout, rf"mutate: {chapter}: [1-9]\d* mutants")

    def test_every_listed_equivalent_names_a_mutant_of_the_references(self):
        # A line whose mutant is gone (its line changed) must be checked again, not kept.
        listed = M.read_equivalent(COURSE / "tools" / "mutation" / "equivalent.txt")
        ids = {m.id for m in M.course_mutants(COURSE)}
        stale = [i for i in listed if i not in ids and not any(M.loose(i) == M.loose(j) for j in ids)]
        self.assertEqual(stale, [], "tools/mutation/equivalent.txt names mutants that no longer exist")
        self.assertTrue(all(listed.values()), "every equivalent says why")

    def test_every_course_mutant_changes_its_file(self):
        for chapter, name in M.mutated_files(COURSE):
            text = (COURSE / "solutions" / chapter / name).read_text()
            for m in M.mutants_of(text, chapter, name):
                self.assertNotEqual(m.apply(text), text, m.id)
                self.assertFalse(text.splitlines()[m.line - 1].lstrip().startswith("#"), m.id)

    def test_make_class_layout_and_report(self):
        with tempfile.TemporaryDirectory() as folder:
            out = pathlib.Path(folder) / "class"
            kinds = mutate.make_class(out, ["02-transfers", "08-execution-config"], per_chapter=3, seed=1,
                                      equivalent=pathlib.Path(folder) / "none.txt")
            students = sorted(p.name for p in out.iterdir() if p.is_dir())
            self.assertEqual(students, sorted(kinds))
            self.assertEqual(sum(k["kind"] == "control" for k in kinds.values()), 2)
            self.assertEqual(sum(k["kind"] == "mutant" for k in kinds.values()), 6)
            lines = (out / "chapters.txt").read_text().splitlines()
            self.assertEqual(sorted(line.split()[0] for line in lines), students)
            for student, what in kinds.items():
                chapter = what["chapter"]
                files = sorted(p.relative_to(out / student).as_posix() for p in (out / student).rglob("*")
                               if p.is_file())
                expected = sorted(f"chapters/{chapter}/{p.name}" for p in (COURSE / "chapters" / chapter).glob("*.cu")
                                  if (COURSE / "solutions" / chapter / p.name).exists())
                self.assertEqual(files, expected)
                changed = [f for f in expected if (out / student / f).read_text() !=
                           (COURSE / "solutions" / chapter / pathlib.PurePath(f).name).read_text()]
                self.assertEqual(len(changed), 0 if what["kind"] == "control" else 1, student)
            # The same seed, the same class.
            again = mutate.make_class(pathlib.Path(folder) / "again", ["02-transfers", "08-execution-config"],
                                      per_chapter=3, seed=1, equivalent=pathlib.Path(folder) / "none.txt")
            self.assertEqual(sorted(again), sorted(kinds))

            # Graded results as grade-class writes them: one killed, one survived, one stillborn.
            graded = pathlib.Path(folder) / "graded"
            mutants_of_02 = [s for s, k in kinds.items() if k["kind"] == "mutant" and k["chapter"] == "02-transfers"]

            def results(student, chapter, failed=(), not_graded=()):
                names = [f"{chapter}.Build.Compiles", f"{chapter}.A.One", f"{chapter}.A.Two"]
                tests = [{"name": n, "status": "failed" if n.split(".", 1)[1] in failed else "passed",
                          "tags": [chapter, "correctness"] + (["not graded"] if n.split(".", 1)[1] in not_graded else [])}
                         for n in names]
                (graded / student).mkdir(parents=True)
                (graded / student / "results.json").write_text(json.dumps({"tests": tests}))

            results("control-02-transfers", "02-transfers")
            results("control-08-execution-config", "08-execution-config", failed=["A.Two"])  # a flaky control
            results(mutants_of_02[0], "02-transfers", failed=["A.One"])
            results(mutants_of_02[1], "02-transfers")
            results(mutants_of_02[2], "02-transfers", failed=["Build.Compiles", "A.One"])
            mutants_of_08 = [s for s, k in kinds.items() if k["kind"] == "mutant" and k["chapter"] == "08-execution-config"]
            results(mutants_of_08[0], "08-execution-config", failed=["A.Two"])  # as the control: not a kill
            results(mutants_of_08[1], "08-execution-config", not_graded=["A.One", "A.Two"])
            equivalent = pathlib.Path(folder) / "equivalent.txt"
            equivalent.write_text(f"{kinds[mutants_of_02[1]]['id']}  the same\n")
            data, _ = mutate.report(graded, out, equivalent=equivalent)
            row = data["chapters"]["02-transfers"]
            self.assertEqual((row["mutants"], row["killed"], row["survived"], row["stillborn"], row["equivalent"]),
                             (3, 1, 0, 1, 1))
            self.assertEqual(row["score"], 1.0)
            row = data["chapters"]["08-execution-config"]
            self.assertEqual((row["survived"], row["undecided"], row["not graded"]), (1, 1, 1))
            self.assertTrue(any("control of 08-execution-config" in p for p in data["problems"]))
            self.assertIn("## Survivors", (graded / "mutation-report.md").read_text())

    def test_make_class_of_named_mutants(self):
        chosen = M.course_mutants(COURSE, ["08-execution-config"])[:2]
        with tempfile.TemporaryDirectory() as folder:
            kinds = mutate.make_class(pathlib.Path(folder) / "class", ids=[m.id for m in chosen])
            self.assertEqual(sorted(k["id"] for k in kinds.values() if k["kind"] == "mutant"),
                             sorted(m.id for m in chosen))
            with self.assertRaises(SystemExit):
                mutate.make_class(pathlib.Path(folder) / "other", ids=["08-execution-config/x.cu:1:arith:0:000000"])


class Merge(unittest.TestCase):
    """mutate.py merge: each submission's results from the last class that graded it."""

    def test_the_later_class_wins(self):
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            for cls, students in (("a", ("m-1", "m-2")), ("b", ("m-2", "m-3"))):
                for student in students:
                    (root / cls / student).mkdir(parents=True)
                    (root / cls / student / "results.json").write_text(f'{{"from": "{cls}"}}')
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(mutate.merge(root / "out", [root / "a", root / "b"]), 0)
            got = {d.name: json.loads((d / "results.json").read_text())["from"] for d in (root / "out").iterdir()}
            self.assertEqual(got, {"m-1": "a", "m-2": "b", "m-3": "b"})


class GradeClassChapters(unittest.TestCase):
    """grade-class --chapters-per-submission: the instructor's file, checked against the class."""

    def setUp(self):
        loader = importlib.machinery.SourceFileLoader("grade_class", str(COURSE / "tools" / "grade-class"))
        spec = importlib.util.spec_from_loader("grade_class", loader)
        self.grade_class = importlib.util.module_from_spec(spec)
        loader.exec_module(self.grade_class)

    def test_reads_each_students_chapters(self):
        with tempfile.TemporaryDirectory() as folder:
            path = pathlib.Path(folder) / "chapters.txt"
            path.write_text("# who is graded on what\nann 02-transfers\nbob 02-transfers,08-execution-config\n"
                            "zed 02-transfers\n")
            found = self.grade_class.read_chapters_per_submission(path, ["ann", "bob", "cy"],
                                                                  ["02-transfers", "08-execution-config"])
            self.assertEqual(found, {"ann": ["02-transfers"], "bob": ["02-transfers", "08-execution-config"]})
            path.write_text("ann 05-matmul\n")
            with self.assertRaises(ValueError):
                self.grade_class.read_chapters_per_submission(path, ["ann"], ["02-transfers"])

    def test_only_the_listed_submissions_get_their_own_chapters(self):
        import argparse
        args = argparse.Namespace(points="points.json", chapters="02-transfers,08-execution-config", perf_scale=None,
                                  timeouts=None, one_by_one=False, batch_rounds=6, profile=False, hold_gpu_turns=False,
                                  chapters_of={"ann": ["08-execution-config"]})
        options = self.grade_class.grading_options(args, "ann")
        self.assertEqual(options[options.index("--chapters") + 1], "08-execution-config")
        options = self.grade_class.grading_options(args, "bob")
        self.assertEqual(options[options.index("--chapters") + 1], "02-transfers,08-execution-config")
        # A class diagnoses only the perf tests that fail, unless told otherwise (--diagnosis, --no-diagnosis).
        self.assertEqual(options[options.index("--diagnosis") + 1], "shortfalls")
        args.diagnosis = "all"
        self.assertNotIn("--diagnosis", self.grade_class.grading_options(args, "bob"))
        args.no_diagnosis = True  # (grade-class --no-diagnosis reaches every grading)
        options = self.grade_class.grading_options(args, "bob")
        self.assertEqual(options[options.index("--diagnosis") + 1], "none")


if __name__ == "__main__":
    unittest.main(verbosity=1)

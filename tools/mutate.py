#!/usr/bin/env python3
"""A mutation score of the course's tests, measured: mutants of the reference solutions (one
small change at one site of a starter-named file, tools/course_grading/mutation.py lists the
operators), graded as a class, each on its own chapter only.

    tools/mutate.py list [--chapters A,B] [--operators]
    tools/mutate.py make-class DIR [--chapters A,B] [--per-chapter N] [--seed S] [--include-equivalent]
                               [--ids ID,ID,...]
    tools/mutate.py run DIR -o OUT [--markdown FILE] [grade-class options: --gpus, --timeouts, ...]
    tools/mutate.py report OUT --mutants DIR [--markdown FILE]
    tools/mutate.py merge OUT GRADED [GRADED...]

list: every mutant (id, operator, the line before and after) and the count per chapter.
make-class: DIR/<student>/chapters/<chapter>/<the chapter's starter files> for each sampled mutant
(the chapter's references, one of them mutated) and one control per chapter (the references
unchanged: it must get full marks). Up to N mutants per chapter (default 15), stratified by
operator, the same for the same seed; the mutants listed as equivalent are not drawn (unless
--include-equivalent); --ids grades the mutants named (e.g. a report's survivors, once tests
were added). DIR/mutants.json says what each submission is; DIR/chapters.txt says
which chapter each is graded on (grade-class --chapters-per-submission).
run: grades DIR with tools/grade-class (each submission on its chapter only), then reports.
Each grading stops at its first failure that stands, the tests that may run side by side
before those that measure (grade-class --fail-fast; --whole-gradings: every test): a mutant
needs one failed test to be killed, and the controls and survivors run every test anyway.
report: per chapter the mutants graded, stillborn (did not compile: Build.Compiles failed),
killed (a test that the chapter's control passed failed, or fewer points than the control),
survived, equivalent (listed in tools/mutation/equivalent.txt, lines `id  reason`; an id
matches without its line number when the line moved) and undecided (no test failed but some
were not graded, e.g. without a GPU) or not graded (the grading failed); score = killed /
(mutants - stillborn - equivalent - undecided - not graded), and each survivor with its
operator and its line before and after. The course's goal: >= 95% of the non-equivalent mutants
killed in every chapter. Writes OUT/mutation-report.json and .md (and --markdown FILE).
merge: one graded folder from several classes of the same sample (e.g. a class's survivors and
ungraded mutants graded again once tests were added): each submission's results.json from the
last GRADED that has it, so that `report OUT --mutants DIR` reports them together.
Exit status: 0, or 1 when a control lost points or a chapter's score is under --goal (with
--fail-under-goal).
"""
import argparse
import collections
import json
import re
import pathlib
import shutil
import subprocess
import sys

TOOLS = pathlib.Path(__file__).resolve().parent
COURSE = TOOLS.parent
sys.path.insert(0, str(TOOLS))
from course_grading import mutation as M  # noqa: E402
from course_grading import submission as S  # noqa: E402

EQUIVALENT = TOOLS / "mutation" / "equivalent.txt"


def chapters_of(value):
    return [c for c in (value or "").split(",") if c] or None


def command_list(args):
    mutants = M.course_mutants(COURSE, chapters_of(args.chapters))
    if args.operators:
        for name, what in M.OPERATORS.items():
            print(f"{name:12} {what}")
        return 0
    for m in mutants:
        print(f"{m.id}  {m.operator}\n    - {m.before.strip()}\n    + {m.after.strip()}")
    counts = collections.Counter(m.chapter for m in mutants)
    for chapter, count in sorted(counts.items()):
        print(f"mutate: {chapter}: {count} mutants")
    print(f"mutate: {len(mutants)} mutants in {len(counts)} chapters")
    return 0 if mutants else 1


def copy_chapter(into, chapter, mutant=None):
    """The chapter's starter files, as the references have them (one mutated), under
    into/chapters/<chapter>/."""
    for relative in S.starter_files(COURSE):
        if relative.parts[1] != chapter:
            continue
        source = COURSE / "solutions" / chapter / relative.name
        if not source.exists():
            continue
        target = into / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if mutant is not None and relative.name == mutant.file:
            target.write_text(mutant.apply(source.read_text()))
        else:
            shutil.copyfile(source, target)


def make_class(out, chapters=None, per_chapter=15, seed=1, include_equivalent=False, equivalent=EQUIVALENT, ids=None):
    mutants = M.course_mutants(COURSE, chapters)
    if ids:
        by_id = {m.id: m for m in mutants}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise SystemExit(f"mutate: no such mutant (any more): {', '.join(unknown)}")
        chosen = [by_id[i] for i in ids]
    else:
        listed = M.read_equivalent(equivalent)
        excluded = set() if include_equivalent else {m.id for m in mutants if M.equivalent_reason(m.id, listed)}
        chosen = M.sample(mutants, per_chapter, seed, excluded)
    out.mkdir(parents=True, exist_ok=True)
    kinds = {}
    for chapter in sorted({m.chapter for m in chosen}):
        control = f"control-{chapter}"
        copy_chapter(out / control, chapter)
        kinds[control] = {"kind": "control", "chapter": chapter}
    for m in chosen:
        copy_chapter(out / m.student, m.chapter, m)
        kinds[m.student] = {"kind": "mutant", **m.as_dict()}
    (out / "mutants.json").write_text(json.dumps({"seed": seed, "per_chapter": per_chapter, "submissions": kinds},
                                                 indent=2) + "\n")
    (out / "chapters.txt").write_text("".join(f"{s} {k['chapter']}\n" for s, k in kinds.items()))
    counts = collections.Counter(m.chapter for m in chosen)
    print(f"mutate: {len(chosen)} mutants ({', '.join(f'{c} {n}' for c, n in sorted(counts.items()))}) and "
          f"{len(counts)} controls in {out}")
    return kinds


PERF_TEST = re.compile(r"\.[A-Za-z0-9_]*Perf[A-Za-z0-9_]*\.")


def chapter_tests(results_file, chapter):
    tests = json.loads(results_file.read_text())["tests"]
    return [t for t in tests if t["name"].startswith(chapter + ".")]


def verdict(tests, control):
    """(verdict, the tests that tell) of a mutant's chapter tests against its control's
    ({name: status} of the control's graded tests, or None)."""
    graded = [t for t in tests if "not graded" not in t.get("tags", [])]
    failed = [t for t in graded if t["status"] == "failed"]
    if any(t["name"].endswith(".Build.Compiles") for t in failed):
        return "stillborn", [t["name"] for t in failed if t["name"].endswith(".Build.Compiles")]
    if control is not None:
        failed = [t for t in failed if control.get(t["name"]) != "failed"]
    if failed:
        return "killed", [t["name"] for t in failed]
    if len(graded) < len(tests):
        return "undecided", []
    return "survived", []


def report(out, mutants_dir, markdown=None, equivalent=EQUIVALENT, goal=0.95, echo=False):
    out, mutants_dir = pathlib.Path(out), pathlib.Path(mutants_dir)
    kinds = json.loads((mutants_dir / "mutants.json").read_text())["submissions"]
    listed = M.read_equivalent(equivalent)
    controls, problems = {}, []
    for student, what in kinds.items():
        if what["kind"] != "control":
            continue
        results = out / student / "results.json"
        if not results.exists():
            problems.append(f"the control of {what['chapter']} was not graded")
            continue
        tests = chapter_tests(results, what["chapter"])
        control = {t["name"]: t["status"] for t in tests if "not graded" not in t.get("tags", [])}
        controls[what["chapter"]] = control
        lost = sorted(n for n, s in control.items() if s == "failed")
        if lost:
            problems.append(f"the control of {what['chapter']} (the unchanged references) failed: {', '.join(lost)}")
    rows, entries = {}, []
    for student, what in sorted(kinds.items()):
        if what["kind"] != "mutant":
            continue
        chapter = what["chapter"]
        results = out / student / "results.json"
        log = out / student / "grade.log"
        if results.exists():
            result, tests = verdict(chapter_tests(results, chapter), controls.get(chapter))
        elif log.exists() and "stopped after the time limit" in log.read_text(errors="replace"):
            # Not a kill: a class held up by others (chapter 11's phases on every GPU, 2026-11-26)
            # stops innocent gradings too. A mutant that hangs is killed by its tests' own limits.
            result, tests = "not graded", ["(the grading ran past grade-class's --time-limit)"]
        else:
            result, tests = "not graded", []
        reason = M.equivalent_reason(what["id"], listed)
        if reason is not None and result == "survived":
            result = "equivalent"
        elif reason is not None and result == "killed":
            problems.append(f"{what['id']} is listed as equivalent ({reason}) but was killed by {tests[0]}")
        row = rows.setdefault(chapter, collections.Counter())
        row["mutants"] += 1
        row[result] += 1
        # A kill by a timing alone is real (a lost overlap, a serialised stream) but less sure than a
        # wrong value: a neighbour's load can slow a grading. Counted apart, so the reader can see it.
        if result == "killed" and all(PERF_TEST.search(t) for t in tests):
            row["by perf only"] += 1
        entries.append({**what, "student": student, "verdict": result, "tests": tests,
                        **({"reason": reason} if reason else {})})
    summary = {}
    for chapter, row in sorted(rows.items()):
        judged = row["mutants"] - row["stillborn"] - row["equivalent"] - row["undecided"] - row["not graded"]
        score = row["killed"] / judged if judged else None
        summary[chapter] = {**{k: row[k] for k in ("mutants", "stillborn", "killed", "by perf only", "survived",
                                                    "equivalent", "undecided", "not graded")}, "score": score}
    data = {"goal": goal, "chapters": summary, "mutants": entries, "problems": problems,
            "operators": M.OPERATORS}
    (out / "mutation-report.json").write_text(json.dumps(data, indent=2) + "\n")
    text = markdown_report(data)
    (out / "mutation-report.md").write_text(text)
    if markdown:
        pathlib.Path(markdown).write_text(text)
    if echo:
        print(text)
    under = [c for c, row in summary.items() if row["score"] is not None and row["score"] < goal]
    return data, under


def merge(out, graded):
    """OUT/<student>/results.json from the last of `graded` that has it; prints what came from where."""
    origin = {}
    for folder in graded:
        for results in sorted(folder.glob("*/results.json")):
            target = out / results.parent.name / "results.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(results, target)
            origin[results.parent.name] = folder
    for folder in graded:
        print(f"mutate: {sum(1 for f in origin.values() if f == folder)} gradings from {folder}")
    return 0


def markdown_report(data):
    goal = data["goal"]
    lines = ["# Mutation score", "",
             f"Mutants of the reference solutions, each graded on its chapter; goal: at least {goal:.0%} of the "
             "non-equivalent mutants killed in every chapter (score = killed / (mutants - stillborn - equivalent "
             "- undecided - not graded)); \"of them by perf only\": killed by a perf test alone.", "",
             "| chapter | mutants | stillborn | killed | of them by perf only | survived | equivalent | undecided | "
             "not graded | score |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for chapter, row in data["chapters"].items():
        score = "n/a" if row["score"] is None else f"{row['score']:.0%}" + (" **below goal**" if row["score"] < goal
                                                                               else "")
        lines.append(f"| {chapter} | {row['mutants']} | {row['stillborn']} | {row['killed']} | "
                     f"{row.get('by perf only', 0)} | {row['survived']} | "
                     f"{row['equivalent']} | {row['undecided']} | {row['not graded']} | {score} |")
    if data["problems"]:
        lines += ["", "## Problems", "", *[f"- {p}" for p in data["problems"]]]
    survivors = [m for m in data["mutants"] if m["verdict"] == "survived"]
    lines += ["", "## Survivors (each needs a test, or a line in tools/mutation/equivalent.txt saying why it is "
              "equivalent)", ""]
    for m in survivors:
        lines += [f"- `{m['id']}` ({m['operator']})", "  ```", *[f"  - {l}" for l in m["before"].splitlines()],
                  *[f"  + {l}" for l in m["after"].splitlines()], "  ```"]
    if not survivors:
        lines.append("none")
    lines += ["", "## Operators", "", *[f"- `{name}`: {what}" for name, what in data["operators"].items()]]
    return "\n".join(lines) + "\n"


def judge_commit():
    """Which tests grade the mutants: tools/grade-class judges with the course's committed tree
    (git HEAD), not the working tree. Says so, and warns when the working tree's tests, contracts or
    build differ from it (a class graded on a copy whose .git is older than its files measures
    the older tests: commit first, and check the commit printed here)."""
    top = TOOLS.parent
    head = subprocess.run(["git", "-C", str(top), "log", "-1", "--format=%h %s"], capture_output=True, text=True)
    if head.returncode != 0:
        return "the judge is this folder as it is (no git history)"
    changed = subprocess.run(["git", "-C", str(top), "status", "--porcelain", "--", "tests", "chapters", "cmake",
                              "CMakeLists.txt"], capture_output=True, text=True).stdout.strip()
    note = f"the judge is the committed tree at {head.stdout.strip()}"
    if changed:
        note += ("; WARNING: the working tree's tests, contracts or build differ from it and are not what "
                 "grades the mutants:\n" + changed)
    return note


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    lister = sub.add_parser("list")
    lister.add_argument("--chapters")
    lister.add_argument("--operators", action="store_true", help="list the operators instead")
    maker = sub.add_parser("make-class")
    maker.add_argument("dir")
    maker.add_argument("--chapters")
    maker.add_argument("--per-chapter", type=int, default=15)
    maker.add_argument("--seed", type=int, default=1)
    maker.add_argument("--include-equivalent", action="store_true")
    maker.add_argument("--ids", help="these mutants (ids, comma-separated; e.g. the survivors of a report) "
                                     "instead of a sample")
    runner = sub.add_parser("run", help="grade DIR (tools/grade-class; other options go to it), then report")
    runner.add_argument("dir")
    runner.add_argument("-o", "--outdir", required=True)
    runner.add_argument("--markdown")
    runner.add_argument("--goal", type=float, default=0.95)
    runner.add_argument("--fail-under-goal", action="store_true")
    runner.add_argument("--whole-gradings", action="store_true",
                        help="grade every test of each mutant (default: grade-class --fail-fast, the cheap tests "
                             "first and nothing after the first failure that stands: a kill needs one)")
    reporter = sub.add_parser("report")
    reporter.add_argument("outdir")
    reporter.add_argument("--mutants", required=True, help="the folder make-class wrote")
    reporter.add_argument("--markdown")
    reporter.add_argument("--goal", type=float, default=0.95)
    reporter.add_argument("--fail-under-goal", action="store_true")
    merger = sub.add_parser("merge")
    merger.add_argument("outdir")
    merger.add_argument("graded", nargs="+", help="graded folders, oldest first (a later one's results win)")
    args, rest = parser.parse_known_args()
    if rest and args.command != "run":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "list":
        return command_list(args)
    if args.command == "merge":
        return merge(pathlib.Path(args.outdir), [pathlib.Path(g) for g in args.graded])
    if args.command == "make-class":
        make_class(pathlib.Path(args.dir), chapters_of(args.chapters), args.per_chapter, args.seed,
                   args.include_equivalent, ids=[i for i in (args.ids or "").split(",") if i])
        return 0
    mutants_dir = pathlib.Path(args.dir if args.command == "run" else args.mutants)
    if args.command == "run":
        kinds = json.loads((mutants_dir / "mutants.json").read_text())["submissions"]
        chapters = sorted({k["chapter"] for k in kinds.values()})
        command = [sys.executable, str(TOOLS / "grade-class"), str(mutants_dir), "-o", args.outdir,
                   "--chapters", ",".join(chapters),
                   "--chapters-per-submission", str(mutants_dir / "chapters.txt"),
                   *([] if args.whole_gradings else ["--fail-fast"]), *rest]
        print("mutate: " + " ".join(command), flush=True)
        judge = judge_commit()
        print(f"mutate: {judge}", flush=True)
        graded = subprocess.run(command)
        if graded.returncode not in (0, 1):
            return graded.returncode
    data, under = report(args.outdir, mutants_dir, args.markdown, goal=args.goal, echo=True)
    if data["problems"] and any(p.startswith("the control") for p in data["problems"]):
        return 1
    return 1 if (under and args.fail_under_goal) else 0


if __name__ == "__main__":
    sys.exit(main())

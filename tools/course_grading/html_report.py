"""The reports as one self-contained HTML page each: inline CSS and SVG, no script, no network.

    submission_page(graded, notes, title)   a submission's report (tools/grade-submission: report.html;
                                            tools/grade-report: <build>/report/index.html)
    class_page(rows, chapters, chapter_max, perf, title)   a class's (tools/grade-class: class.html)

A submission's page shows per chapter its points (required, stretch bonus and total against their
maxima, as report.md), its perf tests, each as one bar on one linear scale from 0 (the student's
rate, the required rate = the required ratio x the baseline, the baseline, and the hardware limit
where the perf line names one) with its diagnosis when the test gave one (on by default;
COURSE_DIAGNOSE=0 turns it off, =shortfall keeps it for failures), and its failed tests with
what they say. Every text that comes
from a test's output (student code prints into it) is escaped: the page holds no HTML from it.
"""
import html
import re

from . import results as R

# ---------------------------------------------------------------- the perf line

# "<what>: <measured> <unit> = <ratio> x <baseline name> (<baseline> <unit>)" then
# "; required >= <ratio>[ (<ratio> scaled by COURSE_PERF_SCALE=<s>)][ [median of ...]]" and
# "; NOT A MEASUREMENT: <why>" when it cannot count (tests/support/src/perf.cpp, perf_line).
_RATIO_LINE = re.compile(r"^(?P<what>.*?): (?P<measured>\S+) (?P<unit>.+?) = (?P<ratio>\S+) x "
                         r"(?P<baseline_name>.*) \((?P<baseline>\S+) (?P=unit)\)$")
# Chapter 1's copy against the DRAM: "device-to-device copy 2994.73 GB/s, theoretical 3352.32 GB/s (...)".
_THEORETICAL_LINE = re.compile(r"^(?P<what>.*?) (?P<measured>[0-9.]+) (?P<unit>\S+), theoretical "
                               r"(?P<limit>[0-9.]+) (?P=unit)\b")
# Baselines that are what the hardware can do: a measured peak, or cuBLAS.
_LIMIT_BASELINES = ("copy peak", "cuBLAS", "pinned host-to-device copies")


def _number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value == value and abs(value) != float("inf") else None


def parse_perf(line):
    """A perf line (without its "[  PERF    ] ") as a dict, or None when it is not one: what,
    measured, unit, ratio, baseline, baseline_name, required_ratio (None when the line lost it),
    required (the rate: required_ratio x baseline), limit and limit_name (the hardware's, where the
    line names one: a baseline that is a peak or cuBLAS, or chapter 1's theoretical bandwidth, where
    the ratio is to the limit), not_a_measurement (why, or "")."""
    line = line.strip()
    head, _, why = line.partition("; NOT A MEASUREMENT: ")
    head, _, rest = head.partition("; required")
    match = _RATIO_LINE.match(head)
    if match:
        perf = {"what": match["what"], "unit": match["unit"], "measured": _number(match["measured"]),
                "ratio": _number(match["ratio"]), "baseline": _number(match["baseline"]),
                "baseline_name": match["baseline_name"], "required_ratio": None, "required": None,
                "limit": None, "limit_name": "", "not_a_measurement": why.strip()}
        required = re.match(r"\s*>=\s*([0-9.]+)", rest)
        if required:
            perf["required_ratio"] = _number(required.group(1))
            if perf["required_ratio"] is not None and perf["baseline"] is not None:
                perf["required"] = perf["required_ratio"] * perf["baseline"]
        if any(word in perf["baseline_name"] for word in _LIMIT_BASELINES):
            perf["limit"], perf["limit_name"] = perf["baseline"], perf["baseline_name"]
        if perf["measured"] is None or perf["baseline"] is None:
            return None
        return perf
    match = _THEORETICAL_LINE.match(line)
    if match:
        measured, limit = _number(match["measured"]), _number(match["limit"])
        return {"what": match["what"], "unit": match["unit"], "measured": measured,
                "ratio": measured / limit if measured is not None and limit else None, "baseline": None, "baseline_name": "", "required_ratio": None, "required": None,
                "limit": limit, "limit_name": "the DRAM's theoretical bandwidth",
                "not_a_measurement": why.strip()}
    return None


def perf_of(output):
    """The parsed perf line of a graded test's output (its first line that parses), or None."""
    for line in output.splitlines():
        perf = parse_perf(line)
        if perf:
            return perf
    return None


def unscored(results):
    """Graded-like entries (R.score's, without points) of any tests: for a run of other roles than
    the student's, or without a points file."""
    entries = []
    for r in results:
        text = R.judge_perf_line(r)
        text = (text + "\n") if text else ""
        if r.outcome == "failed":
            text += "\n".join([r.reason, *R.gist(r.output, lines=12)])
        elif r.outcome == "skipped":
            text = "NOT GRADED: " + r.reason
        entries.append({"name": r.name, "chapter": r.chapter, "kind": r.kind, "stretch": r.stretch,
                        "outcome": "not graded" if r.outcome == "skipped" else r.outcome, "output": text})
    return entries


# ---------------------------------------------------------------- drawing

def esc(text):
    return html.escape(str(text), quote=True)


def fmt(value):
    if value is None:
        return "?"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3g}"


CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 980px;
       color: #1d2430; background: #fff; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 4px; } h2 { font-size: 1.25em; margin: 28px 0 6px;
     border-bottom: 2px solid #dfe3ea; padding-bottom: 3px; } h3 { font-size: 1em; margin: 14px 0 2px; }
table { border-collapse: collapse; margin: 8px 0; } td, th { padding: 3px 10px; text-align: right; }
th { background: #eef1f6; } td:first-child, th:first-child { text-align: left; }
tr.total td { font-weight: 600; border-top: 2px solid #c7ceda; }
.meter { display: inline-block; width: 90px; height: 9px; background: #e6e9ef; border-radius: 4px;
         vertical-align: middle; margin-left: 6px; overflow: hidden; }
.meter span { display: block; height: 100%; background: #2e7d32; }
.meter.stretch span { background: #6a1b9a; }
.passed { color: #2e7d32; } .failed { color: #c62828; } .notgraded { color: #6b7280; }
.badge { font-size: .8em; font-weight: 600; padding: 1px 7px; border-radius: 9px; border: 1px solid; margin-left: 6px; }
.perf { margin: 10px 0 16px; } .perf .what { color: #4b5563; font-size: .92em; }
.notmeasured { color: #c62828; font-weight: 600; }
.diagnosis { margin-top: 0.2em; }
details { margin: 3px 0; } summary { cursor: pointer; font-size: .92em; }
pre { background: #f6f7f9; border: 1px solid #e3e6eb; padding: 6px 9px; white-space: pre-wrap; font-size: .85em;
      margin: 4px 0 12px; }
ul.notes { color: #4b5563; font-size: .92em; } svg text { font-family: ui-monospace, monospace; font-size: 11px; }
.legend span { margin-right: 16px; font-size: .85em; } .legend i { display: inline-block; width: 12px; height: 10px;
  margin-right: 4px; vertical-align: middle; }
"""

WIDTH = 760
CHAR = 6.7  # px per character of the 11 px monospace labels (an estimate, for placing them)
COLOURS = {"passed": "#2e7d32", "failed": "#c62828", "not graded": "#9ca3af", "required": "#ef6c00",
           "baseline": "#1565c0", "limit": "#6a1b9a", "track": "#e6e9ef"}


def _label(x, y, text, colour):
    """A label near x, kept inside the drawing (it has a row of its own)."""
    width = CHAR * len(text)
    left = max(2.0, min(x - width / 2, WIDTH - 2 - width))
    return f'<text x="{left:.1f}" y="{y}" fill="{colour}">{esc(text)}</text>'


def perf_bar(perf, outcome):
    """One perf test as an SVG: the student's rate as a bar, the required rate, the baseline and the
    hardware limit as marks, on one linear scale from 0, each labelled with its value and unit."""
    unit = perf["unit"]
    measured_counts = not perf["not_a_measurement"]
    marks = []  # (kind, value, label)
    if perf["required"] is not None:
        marks.append(("required", perf["required"],
                      f"required: {fmt(perf['required'])} {unit} ({perf['required_ratio']:.3f} x baseline)"))
    if perf["baseline"] is not None:
        is_limit = perf["limit"] is not None and perf["limit"] == perf["baseline"]
        marks.append(("limit" if is_limit else "baseline", perf["baseline"],
                      f"{'baseline = hardware limit' if is_limit else 'baseline'}: {perf['baseline_name']}, "
                      f"{fmt(perf['baseline'])} {unit}"))
    if perf["limit"] is not None and perf["limit"] != perf["baseline"]:
        marks.append(("limit", perf["limit"], f"hardware limit: {perf['limit_name']}, {fmt(perf['limit'])} {unit}"))
    values = [v for _, v, _ in marks] + ([perf["measured"]] if measured_counts else [])
    top = max([v for v in values if v is not None and v > 0] or [1.0]) * 1.08
    scale = (WIDTH - 4) / top

    def x(value):
        return 2 + max(0.0, min(value, top)) * scale

    bar_y, bar_h = 22, 18
    height = bar_y + bar_h + 16 * len(marks) + 12
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{esc(perf_text(perf))}">',
             f'<rect x="2" y="{bar_y}" width="{WIDTH - 4}" height="{bar_h}" fill="{COLOURS["track"]}"/>']
    if measured_counts:
        colour = COLOURS.get(outcome, COLOURS["not graded"])
        parts.append(f'<rect class="rate" x="2" y="{bar_y}" width="{x(perf["measured"]) - 2:.1f}" height="{bar_h}" '
                     f'fill="{colour}"/>')
        ratio = (f" ({perf['ratio']:.3f} x {'baseline' if perf['baseline'] is not None else 'the limit'})"
                 if perf["ratio"] is not None else "")
        parts.append(_label(x(perf["measured"]), 15, f"yours: {fmt(perf['measured'])} {unit}{ratio}", colour))
    else:
        parts.append(f'<rect x="2" y="{bar_y}" width="{WIDTH - 4}" height="{bar_h}" fill="none" '
                     f'stroke="{COLOURS["failed"]}" stroke-dasharray="5 4"/>')
        parts.append(f'<text x="8" y="{bar_y + 13}" fill="{COLOURS["failed"]}">'
                     f'{esc("NOT A MEASUREMENT: " + fmt(perf["measured"]) + " " + unit + " printed, not counted")}</text>')
    for row, (kind, value, text) in enumerate(marks):
        y = bar_y + bar_h + 14 + 16 * row
        colour = COLOURS[kind]
        dash = ' stroke-dasharray="4 3"' if kind == "required" else ""
        parts.append(f'<line class="{kind}" x1="{x(value):.1f}" y1="{bar_y - 3}" x2="{x(value):.1f}" y2="{y - 10}" '
                     f'stroke="{colour}" stroke-width="2"{dash}/>')
        parts.append(_label(x(value), y, text, colour))
    parts.append("</svg>")
    return "".join(parts)


def perf_text(perf):
    """The perf result in words (the SVG's accessible label)."""
    words = [f"{perf['what']}: {fmt(perf['measured'])} {perf['unit']}"]
    if perf["not_a_measurement"]:
        words.append(f"NOT A MEASUREMENT ({perf['not_a_measurement']})")
    if perf["required"] is not None:
        words.append(f"required {fmt(perf['required'])} {perf['unit']}")
    if perf["baseline"] is not None:
        words.append(f"baseline {perf['baseline_name']} {fmt(perf['baseline'])} {perf['unit']}")
    if perf["limit"] is not None:
        words.append(f"hardware limit {perf['limit_name']} {fmt(perf['limit'])} {perf['unit']}")
    return "; ".join(words)


def _first_words(output):
    """What a failed test says first: its first line that is more than ctest's "Failed"."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return next((line for line in lines if line != "Failed"), lines[0] if lines else "")


def _badge(outcome):
    css = outcome.replace(" ", "")
    return f'<span class="badge {css}">{esc(outcome.upper())}</span>'


def _meter(value, most, stretch=False):
    share = 100.0 * value / most if most else 0.0
    return f'<span class="meter{" stretch" if stretch else ""}"><span style="width:{share:.0f}%"></span></span>'


def _page(title, body):
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>\n{body}\n</body></html>\n")


LEGEND = ('<p class="legend"><span><i style="background:#2e7d32"></i>your rate (passed)</span>'
          '<span><i style="background:#c62828"></i>your rate (failed)</span>'
          '<span><i style="background:#ef6c00"></i>required rate</span>'
          '<span><i style="background:#1565c0"></i>baseline</span>'
          '<span><i style="background:#6a1b9a"></i>hardware limit</span> '
          '<span>each bar on a linear scale from 0</span></p>')


# ---------------------------------------------------------------- a submission's page

def submission_page(graded, notes=(), title="Grade"):
    """The page of one submission: `graded` is R.score's entries (with points) or unscored's (without)."""
    scored = bool(graded) and all("max_score" in t for t in graded)
    chapters = {}
    for t in graded:
        chapters.setdefault(t["chapter"], []).append(t)
    body = [f"<h1>{esc(title)}</h1>"]
    if scored:
        row = R.totals(graded)
        body.append(f"<p><strong>{esc(R.points_line(row))}.</strong></p>")
    if notes:
        body.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    body.append(_overview(chapters, scored))
    if any(t["kind"] == "perf" for t in graded):
        body.append(LEGEND)
    for chapter, tests in sorted(chapters.items()):
        body.append(_chapter_section(chapter, tests, scored))
    if not graded:
        body.append("<p>No test ran.</p>")
    return _page(title, "\n".join(body))


def _overview(chapters, scored):
    if scored:
        out = ["<table><tr><th>chapter</th><th>required</th><th>stretch bonus</th><th>total</th><th>passed</th>"
               "<th>failed</th><th>not graded</th></tr>"]
        per = R.chapter_totals([t for tests in chapters.values() for t in tests])
        for chapter, c in sorted(per.items()):
            out.append(f'<tr><td><a href="#{esc(chapter)}">{esc(chapter)}</a></td>'
                       f"<td>{c['required']} of {c['required_max']}{_meter(c['required'], c['required_max'])}</td>"
                       f"<td>{c['stretch']} of {c['stretch_max']}{_meter(c['stretch'], c['stretch_max'], True)}</td>"
                       f"<td>{c['total']} of {c['max']}</td><td>{c['passed']}</td><td>{c['failed']}</td>"
                       f"<td>{c['not graded']}</td></tr>")
        row = R.totals([t for tests in chapters.values() for t in tests])
        out.append(f'<tr class="total"><td>total</td><td>{row["required"]} of {row["required_max"]}</td>'
                   f'<td>{row["stretch"]} of {row["stretch_max"]}</td><td>{row["total"]} of {row["max"]}</td>'
                   f"<td></td><td></td><td></td></tr></table>")
        return "".join(out)
    out = ["<table><tr><th>chapter</th><th>passed</th><th>failed</th><th>not graded</th><th>stretch passed</th></tr>"]
    for chapter, tests in sorted(chapters.items()):
        required = [t for t in tests if not t["stretch"]]
        stretch = [t for t in tests if t["stretch"]]
        count = lambda ts, o: sum(t["outcome"] == o for t in ts)  # noqa: E731
        out.append(f'<tr><td><a href="#{esc(chapter)}">{esc(chapter)}</a></td><td>{count(required, "passed")}</td>'
                   f'<td>{count(required, "failed")}</td><td>{count(required, "not graded")}</td>'
                   f'<td>{count(stretch, "passed")} of {len(stretch)}</td></tr>')
    return "".join(out) + "</table>"


def _chapter_section(chapter, tests, scored):
    out = [f'<section id="{esc(chapter)}"><h2>{esc(chapter)}</h2>']
    if scored:
        c = R.totals(tests)
        out.append(f"<p>Required {c['required']} of {c['required_max']}, stretch bonus {c['stretch']} of "
                   f"{c['stretch_max']}, total {c['total']} of {c['max']}.</p>")
    perf_tests = [t for t in tests if t["kind"] == "perf"]
    if perf_tests:
        out.append("<h3>Performance</h3>")
    for t in perf_tests:
        name = t["name"].split(chapter + ".", 1)[-1]
        perf = perf_of(t["output"])
        head = (f'<div class="perf"><div><strong>{esc(name)}</strong>{_badge(t["outcome"])}'
                f'{" <em>(stretch, optional)</em>" if t["stretch"] else ""}</div>')
        if perf:
            why = (f'<div class="notmeasured">NOT A MEASUREMENT: {esc(perf["not_a_measurement"])}</div>'
                   if perf["not_a_measurement"] else "")
            diagnosis = R.diagnosis_of(t["output"], perf["what"])
            said = f'<div class="diagnosis">Diagnosis: {esc(diagnosis)}</div>' if diagnosis else ""
            out.append(f'{head}<div class="what">{esc(perf["what"])}</div>{why}{perf_bar(perf, t["outcome"])}'
                       f'{said}</div>')
        elif t["outcome"] == "not graded":
            out.append(f'{head}<div class="what">{esc(t["output"])}</div></div>')
        else:
            first = _first_words(t["output"])
            out.append(f'{head}<div class="what">not timed{": " + esc(first) if first else ""}</div></div>')
    failed = [t for t in tests if t["outcome"] == "failed"]
    if failed:
        out.append(f"<h3>Failed tests ({len(failed)})</h3>")
        for t in failed:
            out.append(f'<details><summary><strong class="failed">{esc(t["name"])}</strong>'
                       f'{" <em>(stretch, optional)</em>" if t["stretch"] else ""}: {esc(_first_words(t["output"]))}'
                       f'</summary><pre>{esc(t["output"].strip())}</pre></details>')
    out.append("</section>")
    return "\n".join(out)


# ---------------------------------------------------------------- a class's page

def class_perf(results_by_student):
    """{test name: [(student, parsed perf or None, outcome)]} of the perf tests of a class, from each
    student's results.json ({student: its dict})."""
    found = {}
    for student, results in results_by_student.items():
        for t in results.get("tests", []):
            tags = t.get("tags", [])
            if "perf" not in tags:
                continue
            outcome = "not graded" if "not graded" in tags else t.get("status", "failed")
            found.setdefault(t["name"], []).append((student, perf_of(t.get("output", "")), outcome))
    return found


def _strip(values, most, marks=(), unit="", width=WIDTH, off_scale=0):
    """A dot per value (stacked where they meet) on a linear axis from 0 to `most`, with vertical
    marks [(value, label, colour)]."""
    columns = {}
    dots = []
    scale = (width - 40) / most if most else 0
    for value, colour, tip in values:
        column = round(min(value, most) * scale / 9)
        level = columns.get(column, 0)
        columns[column] = level + 1
        dots.append((20 + column * 9, level, colour, tip))
    end = (f"{most:g}" if float(most).is_integer() else fmt(most)) + unit
    levels = max(columns.values() or [1])
    base = 14 + 9 * levels
    height = base + 20 + 14 * len(marks)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           f'<line x1="20" y1="{base}" x2="{width - 20}" y2="{base}" stroke="#9ca3af"/>',
           f'<text x="20" y="{base + 13}" fill="#6b7280">0</text>',
           f'<text x="{width - 20 - CHAR * len(end):.1f}" y="{base + 13}" fill="#6b7280">{esc(end)}</text>']
    for x, level, colour, tip in dots:
        out.append(f'<circle cx="{x}" cy="{base - 5 - 9 * level}" r="4" fill="{colour}"><title>{esc(tip)}</title></circle>')
    for row, (value, label, colour) in enumerate(marks):
        x = 20 + min(value, most) * scale
        y = base + 27 + 14 * row
        out.append(f'<line x1="{x:.1f}" y1="6" x2="{x:.1f}" y2="{y - 10}" stroke="{colour}" stroke-width="2" '
                   f'stroke-dasharray="4 3"/>')
        out.append(_label(x, y, label, colour))
    if off_scale:
        out.append(f'<text x="{width - 20 - CHAR * 12}" y="10" fill="#6b7280">{off_scale} off scale &#8594;</text>')
    out.append("</svg>")
    return "".join(out)


def class_page(rows, chapters, chapter_max, perf, title="Class"):
    """The class's page: per chapter the students' points (a dot each, on 0 to the chapter's most),
    and per perf test the students' ratios to the baseline against the required ratio (tests
    that were not a measurement, not timed or not graded counted apart). `rows` are
    class.csv's rows, `chapter_max` {chapter: the most a student could score}, `perf` class_perf's."""
    graded = [r for r in rows if not r.get("status")]
    body = [f"<h1>{esc(title)}</h1>",
            f"<p>{len(rows)} submissions, {len(graded)} graded"
            + (f"; {len(rows) - len(graded)} not: "
               + ", ".join(f"{esc(r['student'])} ({esc(r['status'])})" for r in rows if r.get("status")) if
               len(graded) < len(rows) else "") + ".</p>"]
    if graded:
        totals = [(r.get("total", 0), "#1565c0", f"{r['student']}: {r.get('total', 0)} of {r.get('max', 0)}")
                  for r in graded]
        most = max([r.get("max", 0) for r in graded] + [1])
        body += ["<h2>Total points</h2>", _strip(totals, most, unit=" points")]
    body.append("<h2>Points per chapter</h2>")
    for chapter in chapters:
        most = chapter_max.get(chapter, 0)
        values = [(r["chapters"].get(chapter, 0) or 0, "#2e7d32", f"{r['student']}: {r['chapters'].get(chapter, 0)}")
                  for r in graded if chapter in r.get("chapters", {})]
        if not values:
            continue
        scores = sorted(v for v, _, _ in values)
        body.append(f"<h3>{esc(chapter)}</h3><div class=\"what\">median {scores[len(scores) // 2]} of {most}</div>")
        body.append(_strip(values, max(most, scores[-1], 1), unit=" points"))
    if perf:
        body.append("<h2>Performance: each student's ratio to the baseline</h2>")
    for name, entries in sorted(perf.items()):
        measured = [(s, p, o) for s, p, o in entries if p and not p["not_a_measurement"] and p["ratio"] is not None]
        required = next((p["required_ratio"] for _, p, _ in entries if p and p["required_ratio"] is not None), None)
        apart = {"not a measurement": sum(1 for _, p, _ in entries if p and p["not_a_measurement"]),
                 "not timed": sum(1 for _, p, o in entries if not p and o != "not graded"),
                 "not graded": sum(1 for _, p, o in entries if not p and o == "not graded")}
        body.append(f"<h3>{esc(name)}</h3>")
        what = next((p for _, p, _ in entries if p), None)
        if what:
            body.append(f'<div class="what">{esc(what["what"])}, against {esc(what["baseline_name"] or what["limit_name"])}</div>')
        words = ", ".join(f"{n} {k}" for k, n in apart.items() if n)
        if measured:
            ratios = [p["ratio"] for _, p, _ in measured]
            most = max(ratios + [required or 0]) * 1.1
            if required:
                most = min(most, required * 4)  # a few far ahead should not squash the rest
            off = sum(r > most for r in ratios)
            dots = [(p["ratio"], COLOURS["passed"] if o == "passed" else COLOURS["failed"],
                     f"{s}: {p['ratio']:.3f} x ({fmt(p['measured'])} {p['unit']})") for s, p, o in measured]
            marks = [(required, f"required: {required:.3f} x", COLOURS["required"])] if required else []
            if any(p["limit"] is not None and p["limit"] == p["baseline"] for _, p, _ in measured) and most >= 1:
                marks.append((1.0, "1 x = the hardware limit", COLOURS["limit"]))
            body.append(_strip(dots, most, marks, unit=" x", off_scale=off))
            below = sum(1 for _, p, _ in measured if required and p["ratio"] < required)
            body.append(f'<div class="what">{len(measured)} measured, {below} below the required ratio'
                        f'{"; " + words if words else ""}</div>')
        else:
            body.append(f'<div class="what">no measurement{": " + words if words else ""}</div>')
    return _page(title, "\n".join(body))

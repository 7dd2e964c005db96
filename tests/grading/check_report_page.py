#!/usr/bin/env python3
"""Checks the HTML reports the way a reader meets them, in headless Chromium.

  check_report_page.py <folder>

Writes a submission's page (the untouched starters of tests/grading/data, with a test output that
prints a <script> and an <img onerror>), the references' page and a class page of both into
<folder>, then for each: Chromium's DOM after loading holds no element from the output (no
script, no img: the text is shown as text), and its screenshot (<folder>/<page>.png) is not blank
(many colours, and the bars' green, red or the marks' orange drawn). Exit status 0 only if all
hold; each problem is printed on its own line. Run by the docs workflow (label docs).
"""
import html.parser
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import zlib

sys.dont_write_bytecode = True
HERE = pathlib.Path(__file__).resolve().parent
COURSE = HERE.parent.parent
sys.path.insert(0, str(COURSE / "tools"))
from course_grading import html_report as H  # noqa: E402
from course_grading import results as R  # noqa: E402

EVIL = "<script>document.body.innerHTML='pwned'</script><img src=x onerror=alert(1)>"


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def pixels(path):
    """(width, height, rows of RGB(A) tuples) of an 8-bit RGB or RGBA PNG (Chromium's screenshots)."""
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, chunks, header = 8, [], None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        at += 12 + length
    width, height, depth, colour = header[:4]
    assert depth == 8 and colour in (2, 6), f"a PNG of depth {depth}, colour type {colour}"
    size = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * size
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, size)])
        previous = line
    return width, height, rows


class Elements(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.tags, self.text = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def pages(folder):
    points = json.loads((COURSE / "grading" / "points.json").read_text())
    starters = R.read_junit(HERE / "data" / "starters-grade-report.xml")
    for r in starters:
        r.output = r.output.replace("Expected: true", "Expected: true\n" + EVIL)
    references = R.read_junit(HERE / "data" / "references-test-report.xml")
    for r in references:
        r.name = r.name.replace("solution.", "student.", 1)
    graded = {"starters": R.score(starters, points), "references": R.score(references, points)}
    written = {}
    for name, tests in graded.items():
        written[name] = folder / f"report-{name}.html"
        written[name].write_text(H.submission_page(tests, [f"from tests/grading/data ({name})"], f"Grade ({name})"))
    rows, chapter_max = [], {}
    for name, tests in graded.items():
        per = R.chapter_totals(tests)
        rows.append({"student": name, "chapters": {c: row["total"] for c, row in per.items()}, **R.totals(tests)})
        for c, row in per.items():
            chapter_max[c] = max(chapter_max.get(c, 0), row["max"])
    perf = H.class_perf({name: R.gradescope_results(tests, []) for name, tests in graded.items()})
    written["class"] = folder / "report-class.html"
    written["class"].write_text(H.class_page(rows, sorted(chapter_max), chapter_max, perf, "Class (tests/grading/data)"))
    return written


def check(browser, name, page, problems):
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-dev-shm-usage",
            "--window-size=1100,1600"]
    url = page.resolve().as_uri()
    dom = subprocess.run([*base, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    elements = Elements(dom.stdout)
    if not dom.stdout.strip():
        problems.append(f"{name}: Chromium gave no DOM ({dom.stderr.strip()[-300:]})")
    if "script" in elements.tags or "img" in elements.tags:
        problems.append(f"{name}: an element from a test's output is in the page")
    if name == "starters" and EVIL not in "".join(elements.text):
        problems.append(f"{name}: the test output's <script> is not shown as text")
    if "svg" not in elements.tags:
        problems.append(f"{name}: no SVG drawing")
    shot = page.with_suffix(".png")
    shot.unlink(missing_ok=True)
    run = subprocess.run([*base, f"--screenshot={shot}", url], capture_output=True, text=True, timeout=120)
    if not shot.exists():
        problems.append(f"{name}: no screenshot ({run.stderr.strip()[-300:]})")
        return
    width, height, rows = pixels(shot)
    colours = {}
    for row in rows:
        for pixel in row:
            colours[pixel] = colours.get(pixel, 0) + 1
    background = max(colours.values())
    drawn = sum(count for pixel, count in colours.items() if count != background)
    wanted = {"starters": [(0xc6, 0x28, 0x28), (0xef, 0x6c, 0x00)], "references": [(0x2e, 0x7d, 0x32)],
              "class": [(0x2e, 0x7d, 0x32)]}[name]
    print(f"{name}: {shot} ({width}x{height}, {len(colours)} colours, {100 * drawn / (width * height):.1f}% drawn)")
    if len(colours) < 20 or drawn < 0.02 * width * height:
        problems.append(f"{name}: the screenshot is (nearly) blank")
    for colour in wanted:
        if colours.get(colour, 0) < 50:
            problems.append(f"{name}: nothing drawn in #{bytes(colour).hex()} (the bars did not render?)")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = pathlib.Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    browser = chromium()
    if not browser:
        sys.exit("no Chromium here (Debian: apt-get install chromium; tools/install-deps.sh --docs)")
    problems = []
    for name, page in pages(folder).items():
        check(browser, name, page, problems)
    for problem in problems:
        print("PROBLEM:", problem)
    print(f"{1 if not problems else 0} passed, {1 if problems else 0} failed")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    os.environ.setdefault("HOME", "/tmp")
    main()

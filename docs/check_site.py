#!/usr/bin/env python3
"""Checks the built site the way a reader meets it, in headless Chromium.

  check_site.py <html-dir> <screenshot.png>

* every internal link of every page resolves (the file exists, and so does the #anchor);
* no page shows Markdown or HTML as text (** around a code span, a heading's <tt>);
* the home page and every chapter page load, have their text, render every formula with the
  local MathJax (no error, nothing left as raw TeX) and load every image;
* a screenshot of one chapter page is kept at <screenshot.png>.
Exit status 0 only if everything holds; each problem is printed on its own line.
"""
import glob
import html.parser
import os
import sys
import time
import urllib.parse


class LinkCollector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) and tag in ("a", "img", "script", "link", "iframe"):
                self.links.append(attrs[key])


def parse(path):
    collector = LinkCollector()
    with open(path, encoding="utf-8", errors="replace") as f:
        collector.feed(f.read())
    return collector


def check_links(root):
    problems, parsed = [], {}
    pages = sorted(glob.glob(os.path.join(root, "*.html")))
    for page in pages:
        parsed[page] = parse(page)
    for page in pages:
        for link in parsed[page].links:
            url = urllib.parse.urlparse(link)
            if url.scheme in ("http", "https", "mailto", "javascript", "data") or link.startswith("#!"):
                if url.scheme in ("http", "https") and "mathjax" in link.lower():
                    problems.append(f"{os.path.basename(page)}: MathJax loaded from the network: {link}")
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(page), urllib.parse.unquote(url.path))) if url.path else page
            if not os.path.exists(target):
                problems.append(f"{os.path.basename(page)}: broken link {link}")
                continue
            if url.fragment and target.endswith(".html"):
                ids = parsed[target].ids if target in parsed else parse(target).ids
                if url.fragment not in ids:
                    problems.append(f"{os.path.basename(page)}: missing anchor {link}")
    return pages, problems


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--allow-file-access-from-files", "--window-size=1280,2000"):
        options.add_argument(arg)
    for candidate in ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"):
        if os.path.exists(candidate):
            options.binary_location = candidate
            break
    driver_path = next((p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if os.path.exists(p)), None)
    service = Service(executable_path=driver_path) if driver_path else Service()
    return webdriver.Chrome(service=service, options=options)


PAGE_STATE = """
const math = window.MathJax && window.MathJax.Hub;
const pending = math ? (math.queue.pending || math.queue.running) : 0;
const images = Array.from(document.images);
// Doxygen embeds SVG figures as <object>: loaded means an <svg> document inside.
const figures = Array.from(document.querySelectorAll('object[data]'));
const figureLoaded = o => { try { const d = o.contentDocument;
  return !!(d && d.documentElement && d.documentElement.nodeName.toLowerCase() === 'svg'); } catch (e) { return false; } };
return {
  figures: figures.length,
  brokenFigures: figures.filter(o => !figureLoaded(o)).map(o => o.getAttribute('data')),
  ready: document.readyState === 'complete' && !pending,
  hasMathJax: !!math,
  text: (document.querySelector('div.contents') || document.body).innerText.length,
  brokenImages: images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.getAttribute('src')),
  images: images.length,
  rendered: document.querySelectorAll('.MathJax_SVG, .MathJax_SVG_Display').length,
  mathErrors: document.querySelectorAll('.MathJax_Error, [data-mjx-error]').length
              + (document.body.innerText.includes('Math Processing Error') ? 1 : 0),
  rawTeX: (document.querySelector('div.contents') || document.body).innerText.includes('\\\\frac'),
  // Markdown or HTML that the site shows as text (** around a code span, a heading's <tt>):
  // the page's text without its code, formulas and scripts.
  literal: (() => {
    const c = (document.querySelector('div.contents') || document.body).cloneNode(true);
    c.querySelectorAll('pre, code, .fragment, script, style, svg, .MathJax_SVG, .MathJax_SVG_Display, mjx-container')
      .forEach(e => e.remove());
    const found = c.textContent.match(/\\*\\*[^*\\n]{1,60}\\*\\*|<\\/?(tt|b|code|em|strong)>|`[^`\\n]{1,40}`/g);
    return found ? found.slice(0, 3) : [];
  })(),
};
"""


def check_page(driver, path, problems):
    name = os.path.basename(path)
    driver.get("file://" + os.path.abspath(path))
    deadline = time.time() + 60
    state = driver.execute_script(PAGE_STATE)
    while not state["ready"] and time.time() < deadline:
        time.sleep(0.25)
        state = driver.execute_script(PAGE_STATE)
    if not state["ready"]:
        problems.append(f"{name}: did not finish loading (MathJax still busy?)")
    if state["text"] < 200:
        problems.append(f"{name}: almost no text ({state['text']} characters)")
    for src in state["brokenImages"]:
        problems.append(f"{name}: image did not load: {src}")
    for src in state["brokenFigures"]:
        problems.append(f"{name}: figure did not load: {src}")
    if state["mathErrors"]:
        problems.append(f"{name}: {state['mathErrors']} formula(s) failed to render")
    if state["rawTeX"]:
        problems.append(f"{name}: raw TeX left in the text")
    for snippet in state.get("literal") or []:
        problems.append(f"{name}: Markdown or HTML shown as text: {snippet!r}")
    return state


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root, screenshot = sys.argv[1], sys.argv[2]
    if not os.path.exists(os.path.join(root, "index.html")):
        sys.exit(f"no site at {root}: build it first (cmake --build --preset docs)")
    pages, problems = check_links(root)
    chapters = sorted(p for p in pages if os.path.basename(p).startswith("chapter_"))
    if not chapters:
        problems.append("no chapter pages (chapter_*.html) in the site")
    driver = browser()
    try:
        for page in [os.path.join(root, "index.html")] + chapters:
            state = check_page(driver, page, problems)
            print(f"{os.path.basename(page)}: {state['text']} characters, {state['images']} image(s), "
                  f"{state['figures']} figure(s), {state['rendered']} formula(s) rendered")
        # Formulas exist on these chapters: they must have been rendered.
        for page in chapters:
            with open(page, encoding="utf-8") as f:
                has_formulas = "\\(" in f.read() or "\\[" in open(page, encoding="utf-8").read()
            if has_formulas:
                driver.get("file://" + os.path.abspath(page))
                time.sleep(0.5)
                state = check_page(driver, page, [])
                if state["rendered"] == 0:
                    problems.append(f"{os.path.basename(page)}: has formulas, none rendered")
        shot = next((p for p in chapters if "transpose" in p), chapters[0] if chapters else None)
        if shot:
            driver.get("file://" + os.path.abspath(shot))
            time.sleep(1.0)
            os.makedirs(os.path.dirname(os.path.abspath(screenshot)), exist_ok=True)
            driver.save_screenshot(screenshot)
            print(f"screenshot of {os.path.basename(shot)}: {screenshot}")
    finally:
        driver.quit()
    for problem in problems:
        print("PROBLEM:", problem)
    print(f"{len(pages)} pages, {len(chapters)} chapter pages, {len(problems)} problem(s)")
    print(f"{1 if not problems else 0} passed, {1 if problems else 0} failed")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

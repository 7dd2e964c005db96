#!/usr/bin/env python3
"""Doxygen input filter for the course's Markdown (README.md files).

The READMEs are written for GitHub; Doxygen needs a few things said its way:
  * each chapter README becomes a page with a stable label (chapter_06_transpose), and
    README.md at the top becomes the main page;
  * $...$ and $$...$$ formulas become \\f$...\\f$ and \\f[...\\f];
  * links to chapter READMEs become \\ref to those pages; links to figures under docs/figures
    become \\image commands (Doxygen copies the images into the site);
  * the measured-on note of the figures is kept as it is;
  * bold text is written <b>...</b> (Doxygen leaves ** around a code span as it is), and code
    spans in headings lose their backticks (Doxygen shows a heading's <tt> as text).
Usage (by Doxygen): md_filter.py <file>
"""
import os
import re
import sys

CHAPTER_README = re.compile(r"(?:^|/)chapters/(\d\d)-([\w-]+)/README\.md$")


def chapter_label(number: str, name: str) -> str:
    return f"chapter_{number}_{name.replace('-', '_')}"


def label_for(path: str):
    path = path.replace(os.sep, "/")
    m = CHAPTER_README.search(path)
    if m:
        return chapter_label(m.group(1), m.group(2))
    if os.path.basename(path) == "README.md" and "/chapters/" not in path:
        return None  # the main page (USE_MDFILE_AS_MAINPAGE)
    return None


def convert_math(text: str) -> str:
    # Display math first ($$...$$, possibly over several lines), then inline $...$.
    text = re.sub(r"\$\$(.+?)\$\$", lambda m: "\\f[" + m.group(1).strip() + "\\f]", text, flags=re.S)
    return re.sub(r"(?<![\\$\w])\$([^$\n`]+?)\$(?![\w$])", lambda m: "\\f$" + m.group(1) + "\\f$", text)


def convert_links(text: str) -> str:
    def image(m):
        caption, target = m.group(1), m.group(2)
        name = os.path.basename(target)
        return f'\\image html {name} "{caption}"'

    text = re.sub(r"!\[([^\]]*)\]\(([^)\s]*docs/figures/[^)\s]+)\)", image, text)

    def chapter_link(m):
        label_text, target = m.group(1), m.group(2)
        c = re.search(r"(\d\d)-([\w-]+)/(?:README\.md)?$", target)
        if c:
            return f'\\ref {chapter_label(c.group(1), c.group(2))} "{label_text}"'
        return m.group(0)

    return re.sub(r"\[([^\]]+)\]\(((?:\.\./)*(?:chapters/)?\d\d-[\w-]+/(?:README\.md)?)\)", chapter_link, text)


def bold_and_headings(text: str) -> str:
    """**...** as <b>...</b> on one line, and headings without backticks (outside code blocks)."""
    parts = re.split(r"(```.*?```)", text, flags=re.S)
    out = []
    for part in parts:
        if not part.startswith("```"):
            part = re.sub(r"\*\*([^*\n]+?)\*\*", r"<b>\1</b>", part)
            part = re.sub(r"^(#{1,6} [^\n]*)$", lambda m: m.group(1).replace("`", ""), part, flags=re.M)
        out.append(part)
    return "".join(out)


def protect_code(text: str, transform) -> str:
    # Leave fenced code blocks and inline code spans untouched.
    parts = re.split(r"(```.*?```|`[^`\n]*`)", text, flags=re.S)
    return "".join(p if p.startswith("`") else transform(p) for p in parts)


def main() -> None:
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = bold_and_headings(protect_code(text, lambda t: convert_links(convert_math(t))))
    label = label_for(path)
    if label:
        # "# Title" -> "# Title {#label}" on the first heading only.
        text = re.sub(r"^(# [^\n]+)$", lambda m: f"{m.group(1)} {{#{label}}}", text, count=1, flags=re.M)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()

"""Read README.md and the manual in docs/: pages, sections under a heading, code blocks.

The tests that run or check the documentation's code blocks use these helpers, so a block is
found by its page and the heading above it, not by its position in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOT_RUN = re.compile(r"^<!-- not run: .+ -->$")  # the last line above a block's fence
_FENCE = re.compile(r"^```(\w*)\s*$")
_HEADING = re.compile(r"^(#{1,6}) ")


@dataclass(frozen=True)
class Block:
    """A fenced code block of a page: where it is, its language, its text and its marker."""

    page: str
    heading: str
    lang: str
    code: str
    line: int
    not_run: bool


def pages() -> list[str]:
    """Return README.md and every page of docs/, as paths relative to the repository root."""
    return ["README.md", *sorted(str(p.relative_to(ROOT)) for p in DOCS.rglob("*.md"))]


def read(page: str) -> str:
    """Return the text of ``page`` (a path relative to the repository root)."""
    return (ROOT / page).read_text(encoding="utf-8")


def section(page: str, heading: str) -> str:
    """Return the text under the line ``heading`` of ``page``, up to the next heading as high.

    Raises an AssertionError naming the page and the heading when the page lacks it.
    """
    lines = read(page).splitlines()
    level = len(heading) - len(heading.lstrip("#"))
    fence = False
    start: int | None = None
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            fence = not fence
        if fence:
            continue
        if start is None:
            if line == heading:
                start = index + 1
            continue
        found = _HEADING.match(line)
        if found and len(found.group(1)) <= level:
            return "\n".join(lines[start:index])
    assert start is not None, f"{page} has no heading {heading!r}"
    return "\n".join(lines[start:])


def blocks(page: str) -> list[Block]:
    """Return every fenced code block of ``page`` with the heading it sits under."""
    lines = read(page).splitlines()
    found: list[Block] = []
    heading = ""
    open_at: int | None = None
    lang = ""
    for index, line in enumerate(lines):
        fence = _FENCE.match(line)
        if open_at is None and fence:
            open_at, lang = index, fence.group(1)
        elif open_at is not None and line.startswith("```"):
            before = next((b for b in reversed(lines[:open_at]) if b.strip()), "")
            code = "\n".join(lines[open_at + 1 : index]) + "\n"
            found.append(Block(page, heading, lang, code, open_at + 1, bool(NOT_RUN.match(before))))
            open_at = None
        elif open_at is None and _HEADING.match(line):
            heading = line
    return found


def block(page: str, heading: str, lang: str = "python") -> str:
    """Return the code of the first ``lang`` block under ``heading`` of ``page``."""
    for found in blocks(page):
        if found.heading == heading and found.lang == lang:
            return found.code
    raise AssertionError(f"{page} has no {lang} block under {heading!r}")

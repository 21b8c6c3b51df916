"""README.md stays a page a newcomer finishes, and no link in it or in docs/ leads nowhere.

Reference material lives in docs/; the README keeps the two commands, the walk-throughs, what the
verdict means, the times and a list of the reference pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

# [text](target) and [text](target "title"); images too. Code spans are dropped first, so a
# `[x](y)` shown as code is not a link.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)
INSTALL_AND_GATE = "python3 -m venv .venv && . .venv/bin/activate && python -m pip install -e '.[gate]' && pwh gate"
INSTALL_AND_TEST = (
    "python3 -m venv .venv && . .venv/bin/activate && python -m pip install -e '.[test,loopx]' && python -m pytest -n auto --dist loadfile"
)


def relative_links(page: Path) -> list[str]:
    """Every link target in ``page`` that names a file of this repository (no scheme, no bare
    anchor), without its ``#anchor``."""
    text = CODE.sub("", page.read_text("utf-8"))
    targets = [m.group(1) for m in LINK.finditer(text)]
    return [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.I) and not t.startswith("#")]


def dead_links(page: Path) -> list[str]:
    return [t for t in relative_links(page) if not (page.parent / t).exists()]


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of ``page``'s headings: lower case, punctuation dropped, spaces
    to hyphens."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", page.read_text("utf-8"), flags=re.DOTALL), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def dead_anchors(page: Path) -> list[str]:
    """Links to a heading of a Markdown page (``#x`` or ``other.md#x``) that no heading makes."""
    text = CODE.sub("", page.read_text("utf-8"))
    dead = []
    for target in (m.group(1) for m in LINK.finditer(text)):
        path, _, anchor = target.partition("#")
        to = page if not path else page.parent / path
        if anchor and to.suffix == ".md" and to.exists() and anchor not in anchors(to):
            dead.append(target)
    return dead


def test_the_readme_is_under_400_lines() -> None:
    lines = README.read_text("utf-8").splitlines()
    assert len(lines) < 400, f"README.md has {len(lines)} lines: move reference material to docs/"


def test_the_readme_opens_with_its_two_commands_verbatim() -> None:
    head = README.read_text("utf-8").split("\n## ", 1)[0]
    assert INSTALL_AND_GATE in head and INSTALL_AND_TEST in head
    assert INSTALL_AND_TEST in (ROOT / ".ci" / "run").read_text("utf-8"), ".ci/run runs the README's test command verbatim"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert dead_links(page) == []
    assert dead_anchors(page) == []


def test_the_readme_links_every_docs_page() -> None:
    linked = {(README.parent / t).resolve() for t in relative_links(README)}
    assert [p.name for p in PAGES[1:] if p.resolve() not in linked] == []


def test_a_dead_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("x", "utf-8")
    page = tmp_path / "page.md"
    page.write_text("[ok](there.md#a) [gone](missing.md) [web](https://example.org/x) [anchor](#here) `[code](nowhere.md)`\n", "utf-8")
    assert dead_links(page) == ["missing.md"]
    (tmp_path / "there.md").write_text("# A\n## The `pwh gate`: two, verdicts\n", "utf-8")
    page.write_text("[a](there.md#a) [b](there.md#the-pwh-gate-two-verdicts) [c](there.md#gone) [d](#a)\n", "utf-8")
    assert dead_anchors(page) == ["there.md#gone", "#a"]

"""The matrix page a maintainer reads (``pwh report A.json B.json C.json --html``, and the packet's
``index.html``), rendered from three real gate runs and loaded in a real headless Chromium
(``tests/harness/_chromium.py``), judged by what the page does: which rows and scenarios come
first, what colour each cell is, where each cell's link lands, and that the browser reports no
error.

Three short, real gate runs feed it: the reference (M01, M03, M06, HST-1), LoopX (M03, M06,
HST-1) and a broken adapter (``admits_uncommitted``: M03, M06). M03 and M06 then differ between
the columns; M01 (the reference's alone) and HST-1 (the broken adapter lacks it) are alike, and M01
comes before the differing rows in the rulebook, so the page shows the differences first only
when it sorts them first.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from pwh._core.schemas import validator
from pwh._harness.gate import run_gate
from pwh._harness.report.matrix import matrix
from pwh._harness.report.matrix_page import matrix_html
from tests.harness._chromium import Chromium, Page, chromium_path

# `extended` (CI runs it after the test command): three gate runs and a browser; the matrix page's order and links are also held, without a browser, by tests/harness/test_matrix_report.py.
pytestmark = pytest.mark.extended

BROKEN = "tests.broken_suts:admits_uncommitted"  # fails twelve of M03's scenarios for real, in seconds
RUNS = {"reference": ["M01", "M03", "M06", "HST-1"], "loopx": ["M03", "M06", "HST-1"], BROKEN: ["M03", "M06"]}
HOSTILE = '<script>document.title="pwned"</script><b>bold?</b>\u202e'


@pytest.fixture(scope="module")
def verdicts() -> list[tuple[str, dict[str, Any]]]:
    with ThreadPoolExecutor(3) as pool:
        runs = {sut: pool.submit(run_gate, sut, rows=rows, progress=False) for sut, rows in RUNS.items()}
        found = [(f"{sut.rsplit(':', 1)[-1]}.json", run.result().verdict()) for sut, run in runs.items()]
    for _, v in found:
        assert validator("gate_verdict").is_valid(v)
    return found


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium (/usr/bin/chromium or chromium on PATH): apt-get install chromium to look at the matrix page in a browser")
    started = Chromium(exe, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield started
    finally:
        started.close()
        assert started.proc.returncode is not None, "chromium outlived the test"
        assert started.survivors() == [], f"chromium left processes behind: {started.survivors()}"


def open_page(browser: Chromium, path: Path) -> Page:
    """A tab on ``path`` that records what the page says on its console (Runtime and Log events)."""
    page = browser.page(1400, 1000)
    browser.call("Runtime.enable", session=page.session)
    browser.call("Log.enable", session=page.session)
    page.open(path)
    return page


def console_errors(browser: Chromium, page: Page) -> list[Any]:
    """Errors the page reported (an exception, console.error, a failed load), as events the
    browser sent that no call waited for."""
    page.eval("0")  # one more round trip: every event sent before it is in
    pending: list[dict[str, Any]] = browser._pending
    return [
        m.get("params")
        for m in pending
        if m.get("sessionId") == page.session
        and (
            m.get("method") == "Runtime.exceptionThrown"
            or (m.get("method") == "Runtime.consoleAPICalled" and m["params"].get("type") in ("error", "assert"))
            or (m.get("method") == "Log.entryAdded" and m["params"]["entry"].get("level") == "error")
        )
    ]


@pytest.fixture(scope="module")
def data(verdicts: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return matrix(verdicts)


@pytest.fixture(scope="module")
def page(data: dict[str, Any], browser: Chromium, tmp_path_factory: pytest.TempPathFactory) -> Page:
    path = tmp_path_factory.mktemp("matrix") / "matrix.html"
    path.write_text(matrix_html(data), "utf-8")
    return open_page(browser, path)


def rgb(css: str) -> tuple[int, int, int]:
    parts = css[css.index("(") + 1 : css.index(")")].split(",")
    r, g, b = (int(float(p)) for p in parts[:3])
    return r, g, b


def test_the_three_verdicts_differ_as_the_page_needs(data: dict[str, Any]) -> None:
    """The runs give what the browser checks rely on (a change of the matrix or an adapter would
    show here first, not as a puzzling page failure)."""
    differs = {r["row"]: r["differs"] for r in data["rows"]}
    assert set(differs) == {"M01", "M03", "M06", "HST-1"} and differs["M03"] and differs["M06"] and not differs["M01"], differs
    statuses = {c["status"] for x in data["scenarios"] for c in x["cells"] if c}
    assert {"pass", "fail", "divergence", "skip"} <= statuses, statuses
    assert data["differing_scenarios"] and any(not x["differs"] for x in data["scenarios"])


def test_the_rows_and_scenarios_that_differ_come_first(page: Page, data: dict[str, Any]) -> None:
    rows = page.eval("[...document.querySelectorAll('#rows tbody tr')].map(tr => tr.id || tr.textContent.trim())")
    rulebook = ["M01", "M03", "M06", "HST-1"]
    differ = [f"row-{r}" for r in rulebook if next(x for x in data["rows"] if x["row"] == r)["differs"]]
    alike = [f"row-{r}" for r in rulebook if f"row-{r}" not in differ]
    # M01 is alike and first in the rulebook: it comes after every row that differs
    assert "row-M01" in alike and len(differ) >= 2
    assert rows[:-1] == [f"rows that differ ({len(differ)})", *differ, f"rows alike ({len(alike)})", *alike], rows
    assert rows[-1].startswith("verdict")
    # the scenarios: every one in the first table differs, every one folded below is alike
    seen = page.eval(
        """['#scenarios-differ + table', '#scenarios-alike table'].map(sel =>
             [...document.querySelectorAll(sel + ' tbody tr')].map(tr =>
               [...tr.querySelectorAll('td')].slice(1).map(td => td.className)))"""
    )
    differ, alike = seen
    assert len(differ) == data["differing_scenarios"] and len(alike) == len(data["scenarios"]) - len(differ)
    assert all(len(set(c) - {"absent"}) > 1 for c in differ), differ
    assert all(len(set(c) - {"absent"}) == 1 for c in alike), alike
    folded = page.eval(
        "({open: document.querySelector('#scenarios-alike').open, y: document.querySelector('#scenarios-alike').getBoundingClientRect().top, first: document.querySelector('#scenarios-differ').getBoundingClientRect().top})"
    )
    assert folded["open"] is False and folded["first"] < folded["y"], folded


def test_cells_are_coloured_by_status_as_the_single_report_colours_them(page: Page) -> None:
    cells = page.eval(
        """Object.fromEntries(['pass', 'fail', 'divergence', 'skip', 'absent'].map(k => {
             const td = document.querySelector('table.matrix td.' + k);
             const s = td && getComputedStyle(td);
             return [k, s && {bg: s.backgroundColor, color: s.color, weight: Number(s.fontWeight),
                              link: td.querySelector('a') ? getComputedStyle(td.querySelector('a')).color : null}];
           }))"""
    )
    assert all(cells.values()), cells
    r, g, b = rgb(cells["fail"]["bg"])
    assert r > g + 10 and r > b + 10, cells["fail"]  # red
    r, g, b = rgb(cells["pass"]["bg"])
    assert g > r + 10 and g > b + 10, cells["pass"]  # green
    r, g, b = rgb(cells["divergence"]["bg"])
    assert r > b + 30 and g > b + 30, cells["divergence"]  # amber
    r, g, b = rgb(cells["skip"]["bg"])
    assert max(r, g, b) - min(r, g, b) < 25 and r < 250, cells["skip"]  # grey, not white
    assert len({cells[k]["bg"] for k in ("pass", "fail", "divergence", "skip")}) == 4
    assert cells["fail"]["weight"] > cells["pass"]["weight"]
    # the words are the single report's colours: a FAIL cell is coloured as the FAIL badge of a card
    badges = page.eval(
        """Object.fromEntries(['pass', 'fail', 'divergence', 'skip'].map(k => {
             const e = document.querySelector('#cards .status.' + k); return [k, e && getComputedStyle(e).color]; }))"""
    )
    for kind in ("fail", "divergence", "skip"):
        assert badges[kind] and cells[kind]["color"] == badges[kind], (kind, cells[kind], badges[kind])
        if cells[kind]["link"]:
            assert cells[kind]["link"] == badges[kind], (kind, cells[kind])  # a link keeps the status colour
    # every status a cell shows has a colour of its own in every table
    kinds = page.eval(
        "[...new Set([...document.querySelectorAll('table.matrix td')].map(td => td.className.split(' ')[0]))].filter(k => k)"
    )
    for kind in kinds:
        if kind in ("pass", "fail", "divergence", "skip"):
            bgs = page.eval(
                f"[...new Set([...document.querySelectorAll('table.matrix td.{kind}')].map(td => getComputedStyle(td).backgroundColor))]"
            )
            assert bgs == [cells[kind]["bg"]], (kind, bgs)


LINKS = """[...document.querySelectorAll('table.matrix td a[href^="#"]')].map(a => {
  const td = a.closest('td'), tr = a.closest('tr');
  const column = [...tr.children].indexOf(td) - (tr.closest('.scenarios') ? 2 : 1);
  const target = document.getElementById(a.getAttribute('href').slice(1));
  const card = target && target.closest('.group');
  const name = target && (target.querySelector('.name') || (card && card.querySelector('.name')));
  return {kind: td.className.split(' ')[0], column, scenario: !!tr.closest('.scenarios'),
          row: tr.querySelector('th').textContent.trim(),
          name: tr.querySelector('.name') ? tr.querySelector('.name').textContent : null,
          params: tr.querySelector('.params') ? tr.querySelector('.params').textContent.slice(1, -1) : '',
          found: !!target, section: target && target.closest('section.cards') ? target.closest('section.cards').id : null,
          card: card ? card.className : null, cardName: name ? name.textContent : null,
          text: target ? target.textContent : '', cardText: card ? card.textContent : ''};
})"""


def test_every_cell_link_lands_on_that_verdicts_card_for_that_scenario(page: Page, data: dict[str, Any]) -> None:
    links = page.eval(LINKS)
    scenario_links = [x for x in links if x["scenario"]]
    row_links = [x for x in links if not x["scenario"]]
    wanted = sum(1 for x in data["scenarios"] for c in x["cells"] if c and c["status"] in ("fail", "divergence", "skip", "self-fail"))
    assert len(scenario_links) == wanted and row_links, (len(scenario_links), wanted)
    card_of = {"fail": "group fail", "divergence": "group divergence", "skip": "group skip", "self-fail": "group self-fail"}
    for x in links:
        assert x["found"], x  # the anchor is on this page
        assert x["section"] == f"c{x['column'] + 1}", x  # in the cards of that cell's column
        assert x["card"] and x["card"].split(" ")[:2] == card_of[x["kind"]].split(" ") or not x["scenario"], x
        if x["scenario"]:
            assert x["cardName"] == x["name"], x  # the card of that very scenario
            assert x["params"] in x["text"], x  # and, for an outline, that example
        else:
            assert x["row"].rstrip(" *") in x["cardText"], x  # a row's cell: a card of that row
    # every other in-page link resolves too (headers to their cards, a card's row link to the matrix row)
    dangling = page.eval(
        "[...document.querySelectorAll('a[href^=\"#\"]')].map(a => a.getAttribute('href')).filter(h => !document.getElementById(h.slice(1)))"
    )
    assert dangling == []
    assert page.eval("document.querySelectorAll('a[href]:not([href^=\"#\"])').length") == 0  # nothing outside the page


def test_following_a_link_shows_the_card(page: Page) -> None:
    moved = page.eval(
        """(() => { const a = document.querySelector('#scenarios-differ + table td.fail a'); a.click();
             const t = document.querySelector(':target');
             return {hash: location.hash, same: t === document.getElementById(a.getAttribute('href').slice(1)),
                     top: t.getBoundingClientRect().top, h: innerHeight, visible: t.checkVisibility()}; })()"""
    )
    assert moved["same"] and moved["visible"] and 0 <= moved["top"] < moved["h"], moved


def test_the_page_needs_nothing_else_and_reports_no_error(page: Page, browser: Chromium) -> None:
    assert page.eval("document.querySelectorAll('script, link, img, iframe, object, embed').length") == 0
    assert page.eval("document.title") == "pwh report — 3 verdicts, row × SUT"
    assert console_errors(browser, page) == []


def test_a_hostile_sut_name_and_scenario_stay_text(verdicts: list[tuple[str, dict[str, Any]]], browser: Chromium, tmp_path: Path) -> None:
    hostile = copy.deepcopy(verdicts)
    third = hostile[2][1]
    third["sut"] = HOSTILE
    failing = next(x for x in third["scenarios"] if x["rfc"] == "fail")
    failing["scenario"] += HOSTILE
    failing["seen"] += HOSTILE
    assert validator("gate_verdict").is_valid(json.loads(json.dumps(third)))
    path = tmp_path / "hostile.html"
    path.write_text(matrix_html(matrix(hostile)), "utf-8")
    page = open_page(browser, path)
    assert page.eval("document.querySelectorAll('script, b').length") == 0 and page.eval("document.title").startswith("pwh report")
    text = page.eval("document.body.textContent")
    shown = HOSTILE.replace("\u202e", "\\u202e")  # a bidi override is shown escaped, never acted on
    assert "\u202e" not in text and text.count(shown) >= 4, text.count(shown)  # header, legend, card heading, scenario, card
    assert console_errors(browser, page) == []

"""The HTML gate report as a maintainer sees it: rendered from real gate runs and loaded in a real
headless Chromium (Debian's ``/usr/bin/chromium``, driven over the DevTools protocol on a pipe by
``tests/harness/_chromium.py``), judged by what the page shows: colours and weights, what is above
what, what is folded away, what links where, how tall the page is.

Two real, short gate runs feed it: the reference on M06 (passing, partial) and a broken adapter on
M03 (eight real failures, partial). A whole failing verdict of ~400 scenarios is made from the M03
run's own scenarios, spread over every row with whole outlines failing (as a broken SUT fails
them), so the page's length is measured without a long gate. A packet built from the M03 run
checks the report's feature links reach the packet's own copy of the features.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from pwh._core.schemas import schema_rejections, validator
from pwh._harness.gate import GateRun, run_gate
from pwh._harness.judging import rows_of, summarize
from pwh._harness.packet import verify_packet
from pwh._harness.packet.build import build_packet
from pwh._harness.report import cucumber_json, html_report
from pwh._harness.rules import RULE_IDS
from tests.harness._chromium import Chromium, Page, chromium_path

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "tests.broken_suts:admits_uncommitted"  # fails twelve of M03's 37 scenarios for real, in a few seconds
SKIPPING = "tests.hollow_suts:unsupported"  # says Unsupported to every call: every scenario skips
HOSTILE = '<script>document.title="pwned"</script><b>bold?</b>'
PACKET_HREF = "../../features/"  # what the packet's results/<sut>/report.html links with

# --------------------------------------------------------------------------------------------
# Verdicts and pages
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs() -> dict[str, GateRun]:
    with ThreadPoolExecutor(3) as pool:
        passing = pool.submit(run_gate, "reference", progress=False, rows=["M06"])
        failing = pool.submit(run_gate, BROKEN, progress=False, rows=["M03"])
        skipping = pool.submit(run_gate, SKIPPING, progress=False, rows=["M06"])
        return {"passing": passing.result(), "failing": failing.result(), "skipping": skipping.result()}


def _fail(x: dict[str, Any], place: int, n: int) -> None:
    """Make a scenario fail at its first Then step, as a check of the SUT failing does: one
    outline's examples fail the same check (clause, expected), each seeing its own value."""
    at = next((k for k, s in enumerate(x["steps"]) if s["keyword"] == "Then"), len(x["steps"]) - 1)
    x["steps"] = [{**s, "status": "passed" if k < at else "failed" if k == at else "not run"} for k, s in enumerate(x["steps"])]
    x.update(outcome="failed", rfc="fail", profile="fail", counts_for="sut", divergences=[], clause=f"§10: check {place}")
    x.update(expected=f"hook a.case{place} to end as an isolated failure", seen=f"status proposed (example {n})")
    x["failed_step"] = f"{x['steps'][at]['keyword']} {x['steps'][at]['text']}"


def _pass(x: dict[str, Any]) -> None:
    for key in ("expected", "seen", "clause", "failed_step", "reason"):
        x.pop(key, None)
    x["steps"] = [{**s, "status": "passed"} for s in x["steps"]]
    x.update(outcome="passed", rfc="pass", profile="pass", divergences=[])


def many(verdict: dict[str, Any]) -> dict[str, Any]:
    """A whole verdict of ~400 scenarios over every row, ~50 of them failing (whole outlines at a
    time), with profile divergences, skips and self-checks: the real M03 scenarios, fifteen times."""
    scenarios = []
    places: dict[tuple[int, str, int], str] = {}  # every example of one outline has its row, as in a feature file
    for k in range(15):
        for s in verdict["scenarios"]:
            x = copy.deepcopy(s)
            x["id"] = f"{s['id']}~{k}"
            x["tags"] = [places.setdefault((k, s["feature"], s["line"]), RULE_IDS[len(places) % len(RULE_IDS)])]
            if k and x["outcome"] == "failed":
                _pass(x)
            scenarios.append(x)
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for x in scenarios:
        groups.setdefault((x["tags"][0], x["feature"], x["line"]), []).append(x)
    failed = sum(1 for x in scenarios if x["outcome"] == "failed")
    for g, members in enumerate(groups.values()):
        if members[0]["outcome"] == "failed":
            continue
        if g % 4 == 1 and failed < 47:
            for x in members:
                failed += 1
                _fail(x, g, failed)
        elif g % 17 == 2:
            for x in members:
                x.update(
                    profile="divergence",
                    divergences=[{"expected": "code producer_timed_out", "seen": "code timeout", "reading": "pwh's code names"}],
                )
        elif g % 11 == 5:
            for x in members:
                x.update(outcome="skipped", rfc="skip", profile="skip", reason="unsupported by the SUT: the case cannot be put to it")
                x["steps"] = [{**s, "status": ["passed", "skipped"][k] if k < 2 else "not run"} for k, s in enumerate(x["steps"])]
        elif g % 13 == 7:
            for x in members:
                x.update(counts_for="testbed", seam="testbed")
    for kind in ("fail", "skip", "pass", "divergence"):  # text from the verdict, wherever each kind shows it
        x = next(x for x in scenarios if x["profile"] == kind and x["counts_for"] == "sut")
        x["scenario"] += HOSTILE
        x["params"] += HOSTILE
        x["steps"][0]["text"] += HOSTILE
        for key in ("expected", "seen", "clause", "reason"):
            if key in x:
                x[key] += HOSTILE
        for d in x["divergences"]:
            d["reading"] += HOSTILE
    rows = rows_of(scenarios, None)
    out = {**verdict, "rows": rows, "summary": summarize(rows, scenarios, False), "scenarios": scenarios}
    out.pop("selected_rows", None)
    out["run"] = {**verdict["run"], "rows": "all", "partial": False, "selection": None}
    bad = schema_rejections(validator("gate_verdict"), out, "invalid")
    assert not bad, bad[:3]
    return out


@pytest.fixture(scope="module")
def verdicts(runs: dict[str, GateRun]) -> dict[str, dict[str, Any]]:
    failing = runs["failing"].verdict()
    return {"passing": runs["passing"].verdict(), "failing": failing, "many": many(failing), "skipping": runs["skipping"].verdict()}


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    exe = chromium_path()
    if exe is None:  # only the tests that look at the page skip; the verdict's and pwh report's still run
        pytest.skip("no Chromium (/usr/bin/chromium or chromium on PATH): apt-get install chromium to look at the HTML report in a browser")
    started = Chromium(exe, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield started
    finally:
        started.close()
        assert started.proc.returncode is not None, "chromium outlived the test"
        assert started.survivors() == [], f"chromium left processes behind: {started.survivors()}"


@pytest.fixture(scope="module")
def pages(verdicts: dict[str, dict[str, Any]], browser: Chromium, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Page]:
    """Each verdict's report, written where a packet keeps it (results/<sut>/report.html) and open in a tab."""
    out = {}
    root = tmp_path_factory.mktemp("reports")
    for name, verdict in verdicts.items():
        path = root / name / "results" / "sut" / "report.html"
        path.parent.mkdir(parents=True)
        path.write_text(html_report(verdict, features_href=PACKET_HREF if name == "many" else None), "utf-8")
        page = browser.page(1280, 900)
        page.open(path)
        out[name] = page
    return out


def rgb(css: str) -> tuple[int, ...]:
    found = re.match(r"rgba?\((\d+), (\d+), (\d+)", css)
    assert found, css
    return tuple(int(v) for v in found.groups())


STYLE = """(sel => [...document.querySelectorAll(sel)].map(e => {
  const s = getComputedStyle(e);
  return {text: e.textContent.trim(), color: s.color, weight: Number(s.fontWeight), visible: e.checkVisibility()};
}))"""


# --------------------------------------------------------------------------------------------
# The verdict carries each scenario's steps
# --------------------------------------------------------------------------------------------


def test_every_scenario_carries_its_steps_in_order_as_they_ran(verdicts: dict[str, dict[str, Any]]) -> None:
    failing, skipping = verdicts["failing"], verdicts["skipping"]
    assert validator("gate_verdict").is_valid(failing) and validator("gate_verdict").is_valid(skipping)
    assert sum(1 for s in failing["scenarios"] if s["outcome"] == "failed") == 12
    assert skipping["scenarios"] and all(s["outcome"] == "skipped" for s in skipping["scenarios"])
    for s in failing["scenarios"] + skipping["scenarios"]:
        statuses = [step["status"] for step in s["steps"]]
        assert s["steps"] and all(set(step) == {"keyword", "text", "line", "status"} for step in s["steps"]), s["id"]
        assert [step["line"] for step in s["steps"]] == sorted(step["line"] for step in s["steps"])
        if s["outcome"] == "passed":
            assert set(statuses) == {"passed"}, s["id"]
        else:  # one step failed (or found the case inexpressible: skipped), passes before it, nothing run after it
            stop = "failed" if s["outcome"] == "failed" else "skipped"
            at = statuses.index(stop)
            assert statuses == ["passed"] * at + [stop] + ["not run"] * (len(statuses) - at - 1), (s["id"], statuses)
            assert s["failed_step"] == f"{s['steps'][at]['keyword']} {s['steps'][at]['text']}"
    # Cucumber has no "not run": those steps are skipped there, as before.
    cucumber = cucumber_json(failing)
    assert '"not run"' not in cucumber and '"status": "failed"' in cucumber


# --------------------------------------------------------------------------------------------
# What a person sees
# --------------------------------------------------------------------------------------------


def test_status_is_shown_by_colour_weight_and_word(pages: dict[str, Page]) -> None:
    page = pages["many"]
    rows = {kind: page.eval(f"{STYLE}('#rows td .status.{kind}')") for kind in ("fail", "pass", "skip")}
    rows["self-check"] = page.eval(f"{STYLE}('details.passing .status.self-check')")
    assert all(rows.values()), {k: len(v) for k, v in rows.items()}  # every kind is in the rows table (self-checks: in the lists)
    fail, ok, skip, own = (rows[k][0] for k in ("fail", "pass", "skip", "self-check"))
    assert (fail["text"], ok["text"], skip["text"], own["text"]) == ("FAIL", "pass", "skip", "self-check")  # the word stays
    r, g, b = rgb(fail["color"])
    assert r > 150 and g < 80 and b < 80 and fail["weight"] >= 700, fail  # FAIL: red and bold
    r, g, b = rgb(ok["color"])
    assert g > r + 40 and g > b + 40 and ok["weight"] < fail["weight"], ok  # pass: green, lighter
    assert max(rgb(skip["color"])) - min(rgb(skip["color"])) < 30 and skip["weight"] < fail["weight"], skip  # skip: grey
    assert len({rgb(x["color"]) for x in (fail, ok, skip, own)}) == 4  # self-check: a colour of its own
    divergence = page.eval(f"{STYLE}('.group.divergence .status.divergence')")[0]
    r, g, b = rgb(divergence["color"])
    assert r > g > b and r > 120 and b < 60, divergence  # amber
    # In the scenario lists too, the same classes carry the same look.
    listed = page.eval(f"{STYLE}('#failures .scenario.fail .status.fail')")
    assert listed and all(x["color"] == fail["color"] and x["weight"] == fail["weight"] and x["text"] == "FAIL" for x in listed)
    aligned = page.eval("[...document.querySelectorAll('#rows td.num')].map(e => getComputedStyle(e).textAlign)")
    assert aligned and set(aligned) == {"right"}
    assert len(aligned) == 6 * len(RULE_IDS)


def test_failures_come_first_and_passing_scenarios_are_folded_away(pages: dict[str, Page], verdicts: dict[str, dict[str, Any]]) -> None:
    page = pages["many"]
    order = page.eval("[...document.querySelectorAll('body > header, body > section')].map(e => e.id || e.tagName)")
    assert order[:3] == ["HEADER", "rows", "failures"], order
    tops = page.eval(
        "({fails: [...document.querySelectorAll('#failures .scenario.fail')].map(e => e.getBoundingClientRect().bottom),"
        " passing: document.querySelector('details.passing').getBoundingClientRect().top,"
        " skips: document.querySelector('#skipped').getBoundingClientRect().top})"
    )
    failing = sum(1 for s in verdicts["many"]["scenarios"] if s["rfc"] == "fail")
    assert len(tops["fails"]) == failing and max(tops["fails"]) < tops["skips"] < tops["passing"], tops
    # Every passing scenario is inside a closed <details>, out of sight; none is listed anywhere else.
    passing = page.eval(
        "[...document.querySelectorAll('.status.pass')].filter(e => !e.closest('#rows, header, details.passing > summary'))"
        ".map(e => ({closed: !!e.closest('details.passing:not([open])'), visible: e.checkVisibility()}))"
    )
    wanted = sum(1 for s in verdicts["many"]["scenarios"] if s["rfc"] == "pass" and s["profile"] == "pass" and s["counts_for"] == "sut")
    assert len(passing) == wanted and all(p["closed"] and not p["visible"] for p in passing), passing[:3]
    counts = page.eval("[...document.querySelectorAll('details.passing > summary')].map(e => e.textContent)")
    assert len(counts) == len(RULE_IDS) and all(re.search(r"\b\d+ passing\b", c) for c in counts), counts[:3]


def test_a_failing_scenarios_steps_are_open_with_the_failing_step_marked(pages: dict[str, Page]) -> None:
    for name in ("failing", "many"):
        seen = pages[name].eval(
            """[...document.querySelectorAll('#failures .group.fail')].map(g => {
              const steps = g.querySelector(':scope > details.steps');
              const failed = steps && steps.querySelector('.step.failed');
              const passed = steps && steps.querySelector('.step.passed');
              return {open: !!steps && steps.open, failed: !!failed && failed.checkVisibility(),
                      word: failed ? failed.querySelector('.state').textContent : '',
                      marked: !!failed && !!passed && getComputedStyle(failed).backgroundColor !== getComputedStyle(passed).backgroundColor
                              && Number(getComputedStyle(failed).fontWeight) > Number(getComputedStyle(passed).fontWeight)};
            })"""
        )
        assert seen and all(g == {"open": True, "failed": True, "word": "FAILED", "marked": True} for g in seen), (name, seen)
    # The other steps stay one click away: a skip's and a pass's steps are in closed <details>.
    closed = pages["many"].eval(
        "['#skipped', 'details.passing'].map(s => [...document.querySelectorAll(s + ' details.steps')].every(d => !d.open))"
    )
    assert closed == [True, True]


def test_failures_name_row_scenario_example_place_expected_seen_and_clause(
    pages: dict[str, Page], verdicts: dict[str, dict[str, Any]]
) -> None:
    page = pages["failing"]
    text = page.eval("document.querySelector('#failures').innerText")
    for s in verdicts["failing"]["scenarios"]:
        if s["outcome"] == "failed":
            for part in (s["tags"][0], s["scenario"], f"{s['feature']}:{s['line']}", s["expected"], s["seen"], s["clause"]):
                assert part in text, part


def test_a_partial_verdict_says_so_at_the_top_and_a_whole_one_does_not(pages: dict[str, Page]) -> None:
    for name in ("passing", "failing"):
        banner = pages[name].eval(
            "(() => { const b = document.querySelector('.banner.partial'); return b && "
            "{visible: b.checkVisibility(), text: b.innerText, top: b.getBoundingClientRect().top, h: innerHeight}; })()"
        )
        assert banner and banner["visible"] and banner["text"].startswith("PARTIAL verdict (a row filter)"), (name, banner)
        assert banner["top"] < banner["h"] / 3, banner  # at the top, without scrolling
    assert pages["many"].eval("document.querySelector('.banner.partial')") is None
    assert "PARTIAL" not in pages["many"].eval("document.body.innerText")


def test_the_header_says_what_the_verdict_covers(pages: dict[str, Page], verdicts: dict[str, dict[str, Any]]) -> None:
    v = verdicts["failing"]
    header = pages["failing"].eval("document.querySelector('header').innerText")
    run = v["run"]
    wanted = [v["sut"], "RFC verdict: FAIL", "profile: FAIL", "rows M03", run["features_digest"], run["generated_at"], run["pwh_version"]]
    if run["pwh_commit"]:
        wanted.append(run["pwh_commit"])
    assert all(w in header for w in wanted), [w for w in wanted if w not in header]


def test_feature_lines_link_to_the_features_and_only_when_asked(pages: dict[str, Page], verdicts: dict[str, dict[str, Any]]) -> None:
    links = pages["many"].eval("[...document.querySelectorAll('#failures a.where')].map(a => [a.textContent, a.getAttribute('href')])")
    assert links
    for label, href in links:
        feature, line = label.rsplit(":", 1)
        assert feature.startswith("features/") and href == f"{PACKET_HREF}{feature.removeprefix('features/')}#L{line}", (label, href)
    failing = {f"{s['feature']}:{s['line']}" for s in verdicts["many"]["scenarios"] if s["rfc"] == "fail"}
    assert {label for label, _ in links} >= failing
    # Without a prefix nothing links to a file: pwh gate --report and pwh report do not guess.
    assert pages["failing"].eval("document.querySelectorAll('a[href]:not([href^=\"#\"])').length") == 0
    assert pages["failing"].eval("document.querySelectorAll('code.where').length") > 0


def test_the_page_stays_short_for_a_failing_verdict(pages: dict[str, Page], verdicts: dict[str, dict[str, Any]]) -> None:
    v = verdicts["many"]
    failing = sum(1 for s in v["scenarios"] if s["rfc"] == "fail")
    assert len(v["scenarios"]) >= 400 and 45 <= failing <= 60, (len(v["scenarios"]), failing)
    height = pages["many"].eval("document.body.scrollHeight")
    # Each failure is a card shown open; everything that passed is folded away, so the page grows
    # with the failures, never with the hundreds of passing scenarios.
    assert height < 2000 + 140 * failing, f"{height} px for {len(v['scenarios'])} scenarios, {failing} failing"


def test_everything_interpolated_is_escaped_and_the_page_needs_nothing_else(
    pages: dict[str, Page], verdicts: dict[str, dict[str, Any]]
) -> None:
    page = pages["many"]
    assert page.eval("document.querySelectorAll('script, b, link, img, iframe, object, embed').length") == 0
    assert page.eval("document.title") == "pwh gate report — " + verdicts["many"]["sut"]
    assert page.eval("document.body.textContent").count(HOSTILE) >= 4 * 4  # name, example, step, a fact: as text
    text = html_report(verdicts["many"], features_href=PACKET_HREF)
    assert "<script" not in text and "http:" not in text and "https:" not in text and "url(" not in text


def test_the_same_verdict_gives_the_same_bytes_and_no_host_path(verdicts: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    for verdict in verdicts.values():
        once = html_report(verdict, features_href=PACKET_HREF)
        assert once == html_report(json.loads(json.dumps(verdict)), features_href=PACKET_HREF)
        assert str(ROOT) not in once and "/tmp/" not in once and os.path.expanduser("~") + "/" not in once


def test_a_verdict_from_before_steps_and_covers_still_renders(verdicts: dict[str, dict[str, Any]]) -> None:
    old = copy.deepcopy(verdicts["failing"])
    del old["run"]
    for s in old["scenarios"]:
        del s["steps"]
    text = html_report(old)
    assert "steps: not recorded in this verdict" in text and "PARTIAL" not in text and '<details class="steps"' not in text


# --------------------------------------------------------------------------------------------
# Where the report is written: pwh report, and the packet
# --------------------------------------------------------------------------------------------


def test_pwh_report_writes_the_html_of_a_saved_verdict(verdicts: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    saved = tmp_path / "v.json"
    saved.write_text(json.dumps(verdicts["many"]), "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pwh", "report", str(saved), "--html", str(tmp_path / "out" / "r.html")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0 and done.stdout == "wrote r.html\n", done.stdout + done.stderr  # the file, said
    assert (tmp_path / "out" / "r.html").read_text("utf-8") == html_report(verdicts["many"])  # no links: it cannot know where


def test_a_packets_report_links_reach_its_own_copy_of_the_features(
    runs: dict[str, GateRun], request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    out = tmp_path / "packet"
    build_packet(out, [BROKEN, "reference"], gate=lambda sut, **_: dataclasses.replace(runs["failing"], sut=sut))
    report = verify_packet(out)
    assert report.ok, report.render()  # verify renders report.html as build does, links and all
    browser: Chromium = request.getfixturevalue("browser")  # the links are followed where Chromium is
    page = browser.page()
    page.open(out / "results" / "tests.broken_suts-admits_uncommitted" / "report.html")
    hrefs = page.eval("[...document.querySelectorAll('a.where')].map(a => a.href)")
    assert hrefs
    for href in hrefs:
        url = urlparse(href)
        target = Path(unquote(url.path))
        assert url.scheme == "file" and url.fragment.startswith("L") and target.is_file(), href
        assert target.resolve().is_relative_to((out / "features").resolve()), href
        lines = target.read_text("utf-8").splitlines()
        line = int(url.fragment[1:])
        assert 0 < line <= len(lines) and lines[line - 1].strip().startswith("Scenario"), href  # the scenario's own line

"""``pwh report A.json B.json ...``: several saved verdicts as one row × SUT table, built here
from small synthetic verdicts (no gate run): what each cell says, the column order, the headers,
escaping of a hostile SUT name in every medium, and a bad file's one-line refusal."""

from __future__ import annotations

import copy
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pwh._harness.report.matrix import column_changes, matrix, matrix_markdown, matrix_table
from pwh._harness.report.matrix_page import matrix_html
from pwh._harness.verdicts import load_verdict

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = 'evil<script>alert(1)</script>"&\x1b[31m|`x'


def row(rfc: str, profile: str | None = None) -> dict[str, Any]:
    zero = {"scenarios": 0, "passed": 0, "failed": 0}
    return {
        "status": rfc,
        "rfc": rfc,
        "profile": profile or rfc,
        "scenarios": 1,
        "passed": int(rfc == "pass"),
        "failed": int(rfc == "fail"),
        "skipped": int(rfc == "skip"),
        "divergences": int((profile or rfc) == "divergence"),
        "self_checks": zero,
    }


def verdict(sut: str, version: str | None, rows: dict[str, dict[str, Any]], outcome: str = "fail") -> dict[str, Any]:
    counts = {k: sum(1 for r in rows.values() if r["rfc"] == k) for k in ("pass", "fail", "skip")}
    v: dict[str, Any] = {
        "schema_version": "pwh_gate_verdict_v1",
        "pwh_version": "0.1.0",
        "sut": sut,
        "rows": rows,
        "summary": {
            "rows": len(rows),
            "passed": counts["pass"],
            "failed": counts["fail"],
            "skipped": counts["skip"],
            "self_check_rows": 0,
            "scenarios": len(rows),
            "sut_scenarios": len(rows),
            "verdict": outcome,
            "rfc": outcome,
            "profile": outcome,
            "divergences": 0,
            "self_checks": {"scenarios": 0, "passed": 0, "failed": 0},
        },
        "scenarios": [],
        "run": {
            "rows": "all",
            "partial": False,
            "pwh_version": "0.1.0",
            "pwh_commit": None,
            "features_digest": None,
            "sut_version": version,
            "generated_at": "2026-01-01T00:00:00Z",
            "selection": None,
        },
    }
    return v


def save(tmp_path: Path, name: str, v: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(v), "utf-8")
    assert load_verdict(str(path)) == v  # the synthetic verdict is a valid one
    return path


def pwh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pwh", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


OLD = verdict("loopx@1.4.2", "1.4.2", {"M06": row("pass"), "M02": row("fail"), "HST-2": row("fail")})
NEW = verdict("loopx@2.1.1", "2.1.1", {"M02": row("fail"), "M06": row("pass"), "HST-2": row("pass", "divergence")})
PART = verdict("reference", None, {"M06": row("pass")}, outcome="pass")
PART["run"].update(rows=["M06"], partial=True)


def cell(rfc: str, profile: str | None = None, failed: int | None = None) -> dict[str, Any]:
    """A matrix cell of a :func:`row` (one scenario)."""
    return {
        "rfc": rfc,
        "profile": profile or rfc,
        "scenarios": 1,
        "failed": int(rfc == "fail") if failed is None else failed,
        "skipped": int(rfc == "skip"),
    }


REF = verdict("reference", "0.1.0", {"M02": row("pass"), "M06": row("pass"), "HST-2": row("pass")}, outcome="pass")


def test_one_row_per_rulebook_row_in_order_and_a_column_per_verdict_in_the_order_given() -> None:
    data = matrix([("old.json", OLD), ("ref.json", REF), ("part.json", PART)])
    # the rows that differ between the columns first, then those alike; each group in the rulebook's order, not the files'
    assert [(r["row"], r["differs"]) for r in data["rows"]] == [("M02", True), ("HST-2", True), ("M06", False)]
    assert data["order"] == "given"  # not all releases of one SUT
    assert [(c["sut"], c["sut_version"]) for c in data["columns"]] == [
        ("loopx@1.4.2", "1.4.2"),
        ("reference", "0.1.0"),
        ("reference", None),
    ]
    hst = data["rows"][1]["cells"]
    assert hst == [cell("fail"), cell("pass"), None]
    reversed_ = matrix([("part.json", PART), ("ref.json", REF), ("old.json", OLD)])
    assert [c["file"] for c in reversed_["columns"]] == ["part.json", "ref.json", "old.json"]
    assert reversed_["rows"][1]["row"] == "HST-2" and reversed_["rows"][1]["cells"][2] == cell("fail")


def release(version: str, rows: dict[str, dict[str, Any]], sut: str | None = None) -> dict[str, Any]:
    return verdict(sut or f"loopx@{version}", version, rows)


def test_releases_of_one_sut_are_columns_in_release_order_whatever_order_the_files_came_in() -> None:
    given = ["2.1.1", "1.10.0", "1.2.4", "1.4.2", "1.2.4"]
    data = matrix([(f"{v}-{i}.json", release(v, {"M06": row("pass")})) for i, v in enumerate(given)])
    assert data["order"] == "version"
    assert [c["file"] for c in data["columns"]] == ["1.2.4-2.json", "1.2.4-4.json", "1.4.2-3.json", "1.10.0-1.json", "2.1.1-0.json"]
    # the adapter's stated version counts: the default SUT "loopx" is a release too
    main = verdict("loopx", "2.1.1", {"M06": row("pass")})
    data = matrix([("main.json", main), ("old.json", release("1.4.2", {"M06": row("pass")}))])
    assert data["order"] == "version" and [c["file"] for c in data["columns"]] == ["old.json", "main.json"]


@pytest.mark.parametrize(
    "columns",
    [
        [("loopx@2.1.1", "2.1.1"), ("other@1.0.0", "1.0.0")],  # two SUTs
        [("loopx@2.1.1", "2.1.1"), ("loopx", None)],  # a release number unknown
        [("loopx@2.1.1", "2.1.1"), ("loopx@1.0.0", "1.0.0.dev1+local")],  # stated, not a plain number
        [("loopx@2.1.1", "2.1.1"), ("m:f", None)],
    ],
)
def test_anything_else_keeps_the_order_given(columns: list[tuple[str, str | None]]) -> None:
    data = matrix([(f"{i}.json", verdict(sut, version, {"M06": row("pass")})) for i, (sut, version) in enumerate(columns)])
    assert data["order"] == "given" and [c["file"] for c in data["columns"]] == ["0.json", "1.json"]


def test_a_row_whose_result_changes_between_releases_is_marked_and_each_change_is_named() -> None:
    fail3 = dict(row("fail"), scenarios=3, failed=3)
    fail1 = dict(row("fail"), scenarios=3, failed=1)
    skips = dict(row("fail"), scenarios=3, failed=1, skipped=2)  # a seam the release lacks: fewer ran
    data = matrix(
        [
            ("a.json", release("1.0.0", {"M02": row("pass"), "M06": row("fail"), "HST-2": fail3, "M04": row("pass"), "M07": skips})),
            ("b.json", release("1.2.4", {"M02": row("fail"), "M06": row("pass"), "HST-2": fail1, "M07": fail1})),  # M04 not run
            ("c.json", release("1.4.2", {"M02": row("fail"), "M06": row("pass", "divergence"), "HST-2": fail1, "M04": row("skip")})),
            ("d.json", release("2.0.0", {"M02": row("fail"), "M06": row("pass", "divergence"), "HST-2": fail1, "M04": row("skip")})),
        ]
    )
    changes = {r["row"]: r["changes"] for r in data["rows"]}
    assert changes["M02"] == [{"column": 1, "since": 0, "kind": "broke"}]
    assert changes["M06"] == [{"column": 1, "since": 0, "kind": "fixed"}, {"column": 2, "since": 1, "kind": "changed"}]
    assert changes["HST-2"] == [{"column": 1, "since": 0, "kind": "changed"}]  # same statuses, 3 → 1 failing
    assert changes["M04"] == [{"column": 2, "since": 0, "kind": "changed"}]  # against the last column that ran it
    assert changes["M07"] == [{"column": 1, "since": 0, "kind": "changed"}]  # the same failures, 2 → 0 skipped
    steps = column_changes(data)
    assert [(s["column"], [c["row"] for c in s["changes"]]) for s in steps] == [
        (1, ["M02", "M06", "M07", "HST-2"]),
        (2, ["M04", "M06"]),
        (3, []),
    ]
    text = matrix_table(data)
    lines = text.splitlines()
    assert next(ln for ln in lines if ln.startswith("M02")).split()[:2] == ["M02", "*"]
    assert next(ln for ln in lines if ln.startswith("M01") or ln.startswith("M03") or ln.startswith("M04")).split()[:2] == ["M04", "*"]
    after = lines[lines.index(next(ln for ln in lines if ln.startswith("what changed"))) + 1 :]
    assert after[0] == "[1] loopx@1.0.0 → [2] loopx@1.2.4:"
    assert after[1].split() == ["broke", "M02", "pass/pass", "→", "FAIL/FAIL", "(1", "of", "1", "failing)"]
    assert after[2].split()[:2] == ["fixed", "M06"] and "FAIL/FAIL (1 of 3 failing, 2 skipped) → FAIL/FAIL (1 of 3 failing)" in after[3]
    assert "FAIL/FAIL (3 of 3 failing) → FAIL/FAIL (1 of 3 failing)" in after[4]
    assert "since [1]" in next(ln for ln in after if " M04 " in ln) and after[-2:] == ["[3] loopx@1.4.2 → [4] loopx@2.0.0:", "  nothing"]
    md = matrix_markdown(data)
    assert "| M02 \\* |" in md and "| M01 |" not in md and "- **loopx@1.4.2 → loopx@2.0.0**: nothing" in md
    assert "  - broke M02: pass/pass → FAIL/FAIL (1 of 1 failing)" in md
    page = matrix_html(data)
    assert (
        '<tr class="changes" id="row-M02"><th>M02</th><td class="pass">pass/pass</td><td class="fail moved" title="was pass/pass in loopx@1.0.0">'
        in page
    )
    assert '<span class="broke">broke</span> <strong>M02</strong>' in page and "loopx@1.4.2 → loopx@2.0.0: nothing" in page


def test_the_terminal_table_shows_each_cell_as_rfc_and_profile_with_sut_and_version_headers() -> None:
    text = matrix_table(matrix([("old.json", OLD), ("new.json", NEW), ("part.json", PART)]))
    lines = text.splitlines()
    head = next(ln for ln in lines if ln.startswith("row "))
    assert head.index("loopx@1.4.2") < head.index("loopx@2.1.1") < head.index("reference")
    versions = lines[lines.index(head) + 1]
    assert versions.index("1.4.2") < versions.index("2.1.1") < versions.index("(version not stated)")
    hst = next(ln for ln in lines if ln.startswith("HST-2"))
    assert hst.split()[1:5] == ["*", "FAIL/FAIL", "pass/differs", "—"]  # * : it changes from one column to the next
    m06 = next(ln for ln in lines if ln.startswith("M06"))
    assert m06.split()[1:4] == ["pass/pass", "pass/pass", "pass/pass"]
    assert "fixed    HST-2   FAIL/FAIL (1 of 1 failing) → pass/differs" in text
    assert "FAIL/FAIL" in next(ln for ln in lines if ln.startswith("verdict")) and "PASS/PASS PARTIAL" in text
    assert "[3] part.json: SUT reference (version not stated)" in text and "partial run" in text


def test_a_hostile_sut_name_is_escaped_in_every_medium() -> None:
    bad = verdict(HOSTILE, "<b>1</b>", {"M06": row("pass")})
    data = matrix([("x.json", OLD), ("<i>y</i>.json", bad)])
    page = matrix_html(data)
    assert "<script>" not in page and "<b>1</b>" not in page and "<i>y</i>" not in page and "\x1b" not in page
    assert html.escape(HOSTILE.replace("\x1b", "\\x1b"), quote=True) in page and "&lt;b&gt;1&lt;/b&gt;" in page
    assert page.startswith("<!doctype html>") and page.count("<table") == 1  # the rows' (these verdicts have no scenarios)
    md = matrix_markdown(data)
    assert "<script>" not in md and "\x1b" not in md and "evil&lt;script&gt;" in md and "\\|" in md
    header = next(ln for ln in md.splitlines() if ln.startswith("| row |"))
    assert header.count(" | ") == 3  # the name's | is escaped: still four cells
    text = matrix_table(data)
    assert "\x1b" not in text and "\\x1b" in text


def test_pwh_report_renders_several_verdicts_as_one_table(tmp_path: Path) -> None:
    a, b = save(tmp_path, "a.json", OLD), save(tmp_path, "b.json", NEW)
    done = pwh("report", str(a), str(b))
    assert done.returncode == 0, done.stderr
    assert "row × SUT" in done.stdout and done.stdout.index("loopx@1.4.2") < done.stdout.index("loopx@2.1.1")
    out = tmp_path / "m"
    done = pwh("report", str(b), str(a), "--json", f"{out}.json", "--html", f"{out}.html", "--md", f"{out}.md")
    assert done.returncode == 0 and done.stdout == "wrote m.md\nwrote m.html\nwrote m.json\n", done.stderr
    data = json.loads(Path(f"{out}.json").read_text("utf-8"))
    # two releases of one SUT, given newest first: shown in release order
    assert data["schema_version"] == "pwh_verdict_matrix_v1" and [c["sut"] for c in data["columns"]] == ["loopx@1.4.2", "loopx@2.1.1"]
    assert data["order"] == "version" and [r["changes"] for r in data["rows"] if r["row"] == "HST-2"] == [
        [{"column": 1, "since": 0, "kind": "fixed"}]
    ]
    assert Path(f"{out}.html").read_text("utf-8").startswith("<!doctype html>")
    assert "| row | loopx@1.4.2<br>1.4.2 | loopx@2.1.1<br>2.1.1 | case |" in Path(f"{out}.md").read_text("utf-8")


def test_one_verdict_keeps_the_single_verdict_report(tmp_path: Path) -> None:
    a = save(tmp_path, "a.json", OLD)
    done = pwh("report", str(a))
    assert done.returncode == 0 and done.stdout.startswith("pwh gate — SUT: loopx@1.4.2") and "row × SUT" not in done.stdout


@pytest.mark.parametrize(
    ("content", "says"), [(None, "cannot read"), ("{not json", "is not JSON"), ('{"x": 1}', "is not a pwh gate verdict")]
)
def test_a_bad_file_among_several_is_one_line_naming_it_and_exit_2(tmp_path: Path, content: str | None, says: str) -> None:
    good = save(tmp_path, "good.json", OLD)
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, "utf-8")
    out = tmp_path / "m.html"
    done = pwh("report", str(good), str(bad), "--html", str(out))
    assert done.returncode == 2 and says in done.stderr and "bad.json" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()


def test_junit_is_for_one_verdict(tmp_path: Path) -> None:
    a = save(tmp_path, "a.json", OLD)
    done = pwh("report", str(a), str(a), "--junit", str(tmp_path / "j.xml"))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "--junit" in done.stderr


def test_one_verdict_can_also_be_written_as_table_data(tmp_path: Path) -> None:
    a = save(tmp_path, "a.json", NEW)
    done = pwh("report", str(a), "--json", str(tmp_path / "m.json"))
    assert done.returncode == 0 and done.stdout == "wrote m.json\n", done.stderr
    data = json.loads((tmp_path / "m.json").read_text("utf-8"))
    assert [c["sut"] for c in data["columns"]] == ["loopx@2.1.1"] and data["rows"][2]["cells"] == [cell("pass", "divergence")]


def test_verdicts_made_with_another_pwh_or_other_features_say_so_in_every_medium() -> None:
    a, b = release("1.4.2", {"M06": row("pass")}), release("2.1.1", {"M06": row("pass")})
    assert matrix([("a.json", a), ("b.json", b)])["harness_differs"] == []
    b["run"]["features_digest"] = "sha256:other"
    data = matrix([("a.json", a), ("b.json", b)])
    assert data["harness_differs"] == ["feature files"]
    note = "the feature files differ between these verdicts: a change between two columns may be pwh's, not the SUT's"
    assert note in matrix_table(data) and note in matrix_markdown(data) and note.replace("'", "&#x27;") in matrix_html(data)
    b["run"]["pwh_commit"] = "abc"
    assert matrix([("a.json", a), ("b.json", b)])["harness_differs"] == ["feature files", "pwh commit"]


# --------------------------------------------------------------------------------------------
# Differences first, scenario × SUT, cells linking to the failure cards
# --------------------------------------------------------------------------------------------


def scenario(row_id: str, line: int, name: str, rfc: str, *, params: str = "", profile: str | None = None) -> dict[str, Any]:
    """One scenario of a verdict, as the gate records it (no steps: a card says so)."""
    divergent = profile == "divergence"
    return {
        "id": f"{name} {params}".strip(),
        "tags": [row_id],
        "feature": f"features/{row_id.lower()}.feature",
        "line": line,
        "scenario": name,
        "params": params,
        "outcome": {"pass": "passed", "fail": "failed", "skip": "skipped"}[rfc],
        "rfc": rfc,
        "profile": profile or rfc,
        "counts_for": "sut",
        "seam": "dispatcher",
        "divergences": [{"expected": "code a", "seen": "code b", "reading": "pwh's code names"}] if divergent else [],
        **({"expected": "isolated failure", "seen": "proposed", "clause": "§10"} if rfc == "fail" else {}),
        **({"reason": "unsupported by the SUT"} if rfc == "skip" else {}),
    }


def with_scenarios(sut: str, scenarios: list[dict[str, Any]]) -> dict[str, Any]:
    """A verdict whose rows are what its scenarios make them (as the gate computes them)."""
    from pwh._harness.judging import rows_of, summarize

    rows = rows_of(scenarios, sorted({t for x in scenarios for t in x["tags"]}))
    v = verdict(sut, None, rows)
    v.update(scenarios=scenarios, summary=summarize(rows, scenarios, False))
    return v


def three() -> list[tuple[str, dict[str, Any]]]:
    """The reference passes everything; one adapter fails an M03 example and skips an M06
    scenario; another diverges on that M03 example and lacks an M06 scenario."""
    ref = [
        scenario("M03", 6, "receipt not committed", "pass", params="appended"),
        scenario("M03", 6, "receipt not committed", "pass", params="repaired"),
        scenario("M06", 4, "second delivery", "pass"),
        scenario("M06", 20, "third delivery", "pass"),
    ]
    one = copy.deepcopy(ref)
    one[0] = scenario("M03", 6, "receipt not committed", "fail", params="appended")
    one[3] = scenario("M06", 20, "third delivery", "skip")
    other = copy.deepcopy(ref)[:3]
    other[0] = scenario("M03", 6, "receipt not committed", "pass", params="appended", profile="divergence")
    return [
        ("ref.json", with_scenarios("reference", ref)),
        ("one.json", with_scenarios("one", one)),
        ("two.json", with_scenarios("two", other)),
    ]


def test_rows_and_scenarios_that_differ_come_first_in_every_medium() -> None:
    data = matrix(three())
    assert data["row_order"] == "differs_first" and data["differing_rows"] == 2 and data["differing_scenarios"] == 2
    assert [(r["row"], r["differs"]) for r in data["rows"]] == [("M03", True), ("M06", True)]
    got = [(x["row"], x["line"], x["params"], x["differs"], [c and c["status"] for c in x["cells"]]) for x in data["scenarios"]]
    assert got == [
        ("M03", 6, "appended", True, ["pass", "fail", "divergence"]),
        ("M06", 20, "", True, ["pass", "skip", None]),  # absent from the third: "—", and no difference by itself
        ("M03", 6, "repaired", False, ["pass", "pass", "pass"]),
        ("M06", 4, "", False, ["pass", "pass", "pass"]),
    ]
    assert data["scenarios"][0]["cells"][1] == {"status": "fail", "index": 0}  # where it is in that verdict
    # a row alike everywhere goes after those that differ, whatever the rulebook says
    same = three()
    same[1][1]["rows"]["M06"] = same[0][1]["rows"]["M06"]
    same[2][1]["rows"]["M06"] = same[0][1]["rows"]["M06"]
    same_data = matrix(same)
    assert [(r["row"], r["differs"]) for r in same_data["rows"]] == [("M03", True), ("M06", False)]
    text = matrix_table(data)
    assert text.index("rows that differ (2)") < text.index("M03 *") < text.index("rows alike (0)")
    assert "scenarios that differ (2 of 4;" in text and text.index("[appended] receipt not committed") < text.index("third delivery")
    assert "pass  FAIL  differs" in text and "repaired" not in text  # the terminal lists only the differing scenarios
    md = matrix_markdown(data)
    assert md.index("| **scenarios that differ (2)** |") < md.index("[appended]") < md.index("| **scenarios alike (2)** |")
    assert md.index("| **scenarios alike (2)** |") < md.index("[repaired]") and "| pass | skip | — |" in md
    page = matrix_html(data)
    assert page.index('id="scenarios-differ"') < page.index("[appended]") < page.index('id="scenarios-alike"') < page.index("[repaired]")
    back = json.loads(json.dumps(data))
    assert [r["row"] for r in back["rows"]] == ["M03", "M06"] and back["scenarios"] == data["scenarios"]
    # every field a reader of the v1 JSON used is still there, with its meaning
    assert {"schema_version", "order", "harness_differs", "columns", "rows"} <= set(back)
    assert all({"row", "case", "cells", "changes"} <= set(r) for r in back["rows"])


def test_the_terminal_lists_a_few_differing_scenarios_a_row_and_counts_the_rest() -> None:
    ref = [scenario("M03", 6, "outline", "pass", params=f"ex{n}") for n in range(8)]
    bad = [scenario("M03", 6, "outline", "fail", params=f"ex{n}") for n in range(8)]
    data = matrix([("a.json", with_scenarios("reference", ref)), ("b.json", with_scenarios("bad", bad))])
    text = matrix_table(data)
    assert sum(1 for ln in text.splitlines() if "[ex" in ln) == 5 and "… and 3 more differing in M03" in text
    assert matrix_markdown(data).count("[ex") == 8 and matrix_html(data).count('<tr class="scenario">') == 8


def test_each_failing_differing_or_skipped_cell_links_to_its_verdicts_card_on_the_page() -> None:
    data = matrix(three())
    page = matrix_html(data)
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids))  # every anchor once on the page, the three verdicts' cards together
    hrefs = re.findall(r' href="#([^"]+)"', page)
    assert hrefs and set(hrefs) <= set(ids)
    # the failing M03 example of column 2 is scenario 0 of its verdict: its card is c2-sc-0
    assert '<td class="fail"><a href="#c2-sc-0">FAIL</a></td>' in page and ' id="c2-sc-0"' in page
    assert (
        '<td class="divergence"><a href="#c3-sc-0">differs</a></td>' in page and '<td class="skip"><a href="#c2-sc-3">skip</a></td>' in page
    )
    assert '<td class="absent">—</td>' in page and '<td class="pass">pass</td>' in page  # a pass links nowhere
    # a row's cell links to the row's most severe card in that column
    m03 = re.search(r'<tr class="changes" id="row-M03">.*?</tr>', page)
    assert m03 and 'href="#c2-sc-0"' in m03.group() and 'href="#c3-sc-0"' in m03.group()
    # the cards' own links stay on the page: to their column's anchors, or to the matrix's row
    assert 'href="#row-M03"' in page.split('<section id="cards">')[1]
    # read back from JSON there are no verdicts, so no cards and no links into them
    bare = matrix_html(json.loads(json.dumps(data)))
    assert '<section id="cards">' not in bare and "#c2-" not in bare
    assert page == matrix_html(matrix(three()))  # the same verdicts, the same bytes


def test_hostile_scenario_text_is_escaped_in_the_scenario_table_and_the_cards() -> None:
    verdicts = three()
    x = verdicts[1][1]["scenarios"][0]
    x["scenario"] += HOSTILE
    x["params"] += HOSTILE
    x["seen"] += HOSTILE
    data = matrix(verdicts)
    page = matrix_html(data)
    assert "<script>" not in page and "\x1b" not in page and page.count(html.escape(HOSTILE.replace("\x1b", "\\x1b"), quote=True)) >= 3
    for text in (matrix_table(data), matrix_markdown(data)):
        assert "\x1b" not in text and "<script>" not in text

"""``pwh report A.json B.json ...``: several saved verdicts as one row × SUT table, built here
from small synthetic verdicts (no gate run): what each cell says, the column order, the headers,
escaping of a hostile SUT name in every medium, and a bad file's one-line refusal."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pwh._harness.report.matrix import column_changes, matrix, matrix_html, matrix_markdown, matrix_table
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
    assert [r["row"] for r in data["rows"]] == ["M02", "M06", "HST-2"]  # the rulebook's order, not the files'
    assert data["order"] == "given"  # not all releases of one SUT
    assert [(c["sut"], c["sut_version"]) for c in data["columns"]] == [
        ("loopx@1.4.2", "1.4.2"),
        ("reference", "0.1.0"),
        ("reference", None),
    ]
    hst = data["rows"][2]["cells"]
    assert hst == [cell("fail"), cell("pass"), None]
    reversed_ = matrix([("part.json", PART), ("ref.json", REF), ("old.json", OLD)])
    assert [c["file"] for c in reversed_["columns"]] == ["part.json", "ref.json", "old.json"]
    assert reversed_["rows"][2]["cells"][2] == cell("fail")


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
        '<tr class="changes"><th>M02</th><td class="pass">pass/pass</td><td class="fail moved" title="was pass/pass in loopx@1.0.0">'
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
    assert page.startswith("<!doctype html>") and page.count("<table>") == 1
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

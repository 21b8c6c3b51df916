"""Every report format renders from the saved verdict alone: the bytes a live gate run gives
(``pwh gate --junit/--cucumber/--md/--html``, the packet's results) are the bytes the same
verdict gives once written by ``pwh gate --json`` and loaded back (``pwh report``).

Four real, short gate runs feed it, between them every kind of scenario a report shows: the
reference on M06 with coverage (passing, partial, a coverage section), a broken adapter on M03
(real RFC failures), a hollow adapter on M06 (every scenario skipped) and the reference with its
codes renamed on M03 (profile divergences). Cucumber JSON, which once took the live run's steps
beside the verdict, now reads the steps the verdict records (``scenarios[].steps``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from pwh._core.schemas import schema_rejections, validator
from pwh._harness.gate import GateRun, run_gate
from pwh._harness.report import cucumber_json, html_report, junit_xml, markdown_report, verdict_json, verdict_table
from pwh._harness.report.matrix import matrix, matrix_json, matrix_markdown, matrix_table
from pwh._harness.report.matrix_page import matrix_html
from pwh._harness.verdicts import load_verdict

ROOT = Path(__file__).resolve().parents[2]
RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "passing": ("reference", {"rows": ["M06"], "coverage": True}),
    "failing": ("tests.broken_suts:admits_uncommitted", {"rows": ["M03"]}),
    "skipping": ("tests.hollow_suts:unsupported", {"rows": ["M06"]}),
    "differing": ("tests.hollow_suts:renamed_codes", {"rows": ["M03"]}),
}

# Every renderer of one verdict, by name: what `pwh gate` and `pwh report` write, and the packet.
RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "table": verdict_table,
    "table, no failures, no covers": lambda v: verdict_table(v, failures=False, covers=False),
    "table, rows only": lambda v: verdict_table(v, rows=sorted(v["rows"])),
    "json": verdict_json,
    "junit": junit_xml,
    "markdown": markdown_report,
    "html": html_report,
    "html, features linked": lambda v: html_report(v, features_href="../../features/"),
    "cucumber": cucumber_json,
}


@pytest.fixture(scope="module")
def runs() -> dict[str, GateRun]:
    with ThreadPoolExecutor(2) as pool:
        started = {name: pool.submit(run_gate, sut, progress=False, **kw) for name, (sut, kw) in RUNS.items()}
        return {name: future.result() for name, future in started.items()}


@pytest.fixture(scope="module")
def saved(runs: dict[str, GateRun], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each run's verdict as `pwh gate --json` writes it, loaded back as `pwh report` loads it."""
    folder = tmp_path_factory.mktemp("verdicts")
    out = {}
    for name, run in runs.items():
        path = folder / f"{name}.json"
        path.write_text(verdict_json(run.verdict()), encoding="utf-8")
        out[name] = load_verdict(str(path))
    return out


def test_the_runs_show_every_kind_of_scenario(runs: dict[str, GateRun]) -> None:
    verdicts = {name: run.verdict() for name, run in runs.items()}
    outcomes = {s["outcome"] for v in verdicts.values() for s in v["scenarios"]}
    assert outcomes == {"passed", "failed", "skipped"}
    assert any(s["profile"] == "divergence" for s in verdicts["differing"]["scenarios"])
    assert "coverage" in verdicts["passing"] and verdicts["passing"]["run"]["partial"]
    assert all(s.get("steps") for v in verdicts.values() for s in v["scenarios"])


@pytest.mark.parametrize("run_name", sorted(RUNS))
@pytest.mark.parametrize("renderer", sorted(RENDERERS))
def test_every_format_renders_the_saved_verdict_to_the_live_runs_bytes(
    runs: dict[str, GateRun], saved: dict[str, dict[str, Any]], run_name: str, renderer: str
) -> None:
    render = RENDERERS[renderer]
    live = render(runs[run_name].verdict()).encode("utf-8")
    again = render(saved[run_name]).encode("utf-8")
    assert live == again
    assert len(live) > 200


def test_cucumber_from_the_saved_verdict_is_what_the_live_run_gives(runs: dict[str, GateRun], saved: dict[str, dict[str, Any]]) -> None:
    """The verdict records the live run's steps, so the saved verdict alone gives the same file as
    the live one."""
    for name, run in runs.items():
        live_steps = {s["id"]: s.get("steps", []) for s in run.scenarios}
        assert {s["id"]: s.get("steps", []) for s in saved[name]["scenarios"]} == live_steps
        assert cucumber_json(run.verdict()) == cucumber_json(saved[name])
        features = json.loads(cucumber_json(saved[name]))
        steps = [step for f in features for e in f["elements"] for step in e["steps"]]
        assert steps and sum(len(s["steps"]) for s in saved[name]["scenarios"]) == len(steps)
        failing = [step for step in steps if step["result"]["status"] == "failed"]
        assert bool(failing) == (name == "failing")


def test_a_verdict_without_steps_still_loads_and_renders(saved: dict[str, dict[str, Any]]) -> None:
    """Steps are optional in the schema: a verdict written before pwh recorded them is still a
    verdict, and its Cucumber scenarios have no steps."""
    old = json.loads(json.dumps(saved["failing"]))
    for s in old["scenarios"]:
        s.pop("steps", None)
    assert not schema_rejections(validator("gate_verdict"), old, "invalid")
    features = json.loads(cucumber_json(old))
    assert [e["steps"] for f in features for e in f["elements"]] == [[] for _ in old["scenarios"]]
    assert "not recorded in this verdict" in html_report(old)


def test_the_matrix_of_several_verdicts_renders_from_the_saved_ones(runs: dict[str, GateRun], saved: dict[str, dict[str, Any]]) -> None:
    live = matrix([(name, run.verdict()) for name, run in runs.items()])
    again = matrix([(name, saved[name]) for name in runs])
    for render in (matrix_table, matrix_json, matrix_markdown, matrix_html):
        assert render(live) == render(again)


def test_the_stylesheet_is_the_packages_report_css(saved: dict[str, dict[str, Any]]) -> None:
    """The HTML page inlines report.css (package data, shipped in the wheel), its lines joined."""
    css = resources.files("pwh._harness.report").joinpath("report.css").read_text(encoding="utf-8")
    assert css.count("\n") > 20 and all(line == line.strip() for line in css.splitlines())
    assert f"<style>{''.join(css.splitlines())}</style>" in html_report(saved["passing"])
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    assert '"pwh._harness.report" = ["report.css"]' in pyproject and '"pwh._harness.report",' in pyproject


def test_no_report_module_is_long() -> None:
    for path in sorted((ROOT / "pwh" / "_harness" / "report").glob("*.py")):
        assert len(path.read_text("utf-8").splitlines()) <= 500, path.name

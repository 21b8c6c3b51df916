"""One `pwh gate --sut loopx` run and the checks made of it, shared by tests/suts/test_loopx.py
(a few rows, in the test command) and tests/suts/test_loopx_whole_matrix.py (every row, marked
``slow``): the same checks at two scales."""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pwh._harness.divergences import README_BEGIN, README_END, observed_divergences, render
from pwh._harness.rules import RULE_IDS
from pwh._suts.loopx.runtime import PID_LOG_ENV, pid_alive

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "pwh" / "divergences" / "loopx-2.1.1.json"
REGENERATE = "pwh gate --sut loopx --json v.json; pwh divergences v.json pwh/divergences/loopx-2.1.1.json --readme docs/loopx.md; rm v.json"
SEED003 = [r for r in RULE_IDS if r.startswith(("PRV-", "HST-", "FT-", "REC-"))]


def run_loopx_gate(out: Path, rows: Sequence[str] | None) -> dict[str, Any]:
    """``pwh gate --sut loopx`` (``--rows ROWS`` unless None: every row), its verdict and the
    LoopX runtime PIDs it started. The timeout is a hang guard only (a whole run takes minutes)."""
    pid_log = out / "pids.txt"
    selection = ["--rows", ",".join(rows)] if rows is not None else []
    proc = subprocess.run(
        [sys.executable, "-m", "pwh", "gate", "--sut", "loopx", "--quiet", *selection, "--json", str(out / "v.json")],
        cwd=ROOT,
        env={**os.environ, PID_LOG_ENV: str(pid_log)},
        capture_output=True,
        text=True,
        timeout=1800,
        stdin=subprocess.DEVNULL,
    )
    verdict = json.loads((out / "v.json").read_text("utf-8")) if (out / "v.json").exists() else None
    pids = [int(line) for line in pid_log.read_text().split()] if pid_log.exists() else []
    return {"proc": proc, "verdict": verdict, "pids": pids, "rows": list(rows) if rows is not None else list(RULE_IDS)}


def assert_judges_its_rows(run: dict[str, Any]) -> None:
    proc, verdict = run["proc"], run["verdict"]
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert verdict is not None and verdict["sut"] == "loopx"
    assert sorted(verdict["rows"]) == sorted(run["rows"])
    assert "collection_errors" not in verdict
    assert all(r["scenarios"] >= 1 for r in verdict["rows"].values())
    assert "Traceback" not in proc.stdout + proc.stderr


def assert_seed003_rows_run_through_loopxs_own_primary_turn_code(run: dict[str, Any]) -> None:
    """Every seed-003 row a turn-seam operation reaches judges LoopX's registry, request builder
    and host validator; recovery by readback and a Turn's provider resolution (no LoopX entry a
    Python caller reaches) stay self-checks."""
    rows = run["verdict"]["rows"]
    seed003 = {r for r in rows if r in SEED003}
    assert seed003 == set(SEED003), "the run must hold every seed-003 row"
    through_loopx = {r for r in seed003 if rows[r]["seams"] == ["turn"]}
    assert seed003 - through_loopx == {"REC-1", "FT-7", "FT-1", "FT-2"}
    assert all(rows[r]["rfc"] == "self-check" for r in ("REC-1", "FT-7", "FT-1", "FT-2"))


def assert_divergences_are_the_committed_ones(run: dict[str, Any]) -> None:
    """The divergences observed on the rows run equal the committed file's on those rows. A
    difference is what a LoopX release (or a harness change) fixed or broke: review it, then
    regenerate the file."""
    committed = json.loads(COMMITTED.read_text("utf-8"))
    rows = set(run["rows"])
    expected = [d for d in committed["divergences"] if d["row"] in rows]
    observed = observed_divergences(run["verdict"])
    if observed == expected:
        return
    key = lambda d: json.dumps({k: d[k] for k in ("row", "scenario", "status", "loopx")}, sort_keys=True)  # noqa: E731
    gone = [d for d in expected if key(d) not in {key(o) for o in observed}]
    new = [d for d in observed if key(d) not in {key(c) for c in expected}]
    line = lambda d: f"  {d['row']:<6} {d['status']:<4} {d['scenario']['name']} [{d['scenario']['params']}]: {d['loopx']}"  # noqa: E731
    diff = difflib.unified_diff(
        render(expected, sut="loopx", sut_version=committed["sut_version"]).splitlines(),
        render(observed, sut="loopx", sut_version=committed["sut_version"]).splitlines(),
        "committed",
        "observed",
        lineterm="",
        n=2,
    )
    pytest.fail(
        "LoopX's divergences changed.\n"
        f"No longer observed ({len(gone)}):\n" + "\n".join(map(line, gone)) + "\n"
        f"Newly observed ({len(new)}):\n"
        + "\n".join(map(line, new))
        + "\n\n"
        + "\n".join(list(diff)[:200])
        + f"\n\nIf intended, regenerate: {REGENERATE}",
        pytrace=False,
    )


def assert_no_runtime_survives(run: dict[str, Any]) -> None:
    pids = run["pids"]
    assert pids, "the gate recorded no LoopX runtime PID"
    assert len(pids) <= 5, f"{len(pids)} runtimes for one run: it should be shared, not started per scenario"
    assert [p for p in pids if pid_alive(p)] == []


def readme_table() -> str:
    """docs/loopx.md's generated LoopX verdict table, markers included."""
    readme = (ROOT / "docs" / "loopx.md").read_text("utf-8")
    begin, end = README_BEGIN.format(sut="loopx"), README_END.format(sut="loopx")
    head, found, rest = readme.partition(begin)
    assert found and end in rest, "docs/loopx.md has no generated LoopX verdict table"
    return begin + rest.partition(end)[0] + end

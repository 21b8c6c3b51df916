"""`pwh gate` against each mutant of the library (tests/broken_suts.py): every one fails on the
row that names the rule it breaks, and each failing scenario says what it expected and saw."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.broken_suts import BROKEN
from tests.whole_gate.test_gate import ROOT, gate


def _broken(name: str) -> tuple[str, subprocess.CompletedProcess[str], dict]:  # type: ignore[type-arg]
    row = BROKEN[name]
    target = Path(f"/dev/shm/pwh-teeth-{name}.json") if Path("/dev/shm").is_dir() else ROOT / f".teeth-{name}.json"
    # -x: that the row fails is the point, and the first failing scenario shows it (its expected
    # and seen are checked below); the rest of the row would only repeat it.
    proc = gate("--sut", f"tests.broken_suts:{name}", "--rows", row, "-x", "--json", str(target))
    verdict = json.loads(target.read_text()) if target.exists() else {}
    target.unlink(missing_ok=True)
    return name, proc, verdict


@pytest.fixture(scope="module")
def broken_runs() -> dict[str, tuple[subprocess.CompletedProcess[str], dict]]:  # type: ignore[type-arg]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return {name: (proc, verdict) for name, proc, verdict in pool.map(_broken, sorted(BROKEN))}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_every_broken_adapter_fails_on_its_row(broken_runs, name: str) -> None:  # type: ignore[no-untyped-def]
    proc, verdict = broken_runs[name]
    row = BROKEN[name]
    assert proc.returncode == 1, f"gate should fail for {name}: {proc.stdout[-2000:]} {proc.stderr[-1000:]}"
    assert verdict["rows"][row]["status"] == "fail", f"{name} not caught on {row}"
    failing = [s for s in verdict["scenarios"] if s["outcome"] == "failed"]
    assert failing and all(s.get("expected") and s.get("seen") for s in failing)
    assert verdict["stopped_at_first_failure"] is True and len(failing) == 1

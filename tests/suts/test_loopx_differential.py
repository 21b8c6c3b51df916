"""What the differential soak found between the reference and LoopX 2.1.1, committed as known
divergences (``pwh/divergences/loopx-2.1.1-differential.json``), still holds.

Each finding is a shrunk history and the first fact on which the two part in RFC terms. The test
replays every history on both SUTs (``diff_steps``, in a child process: the LoopX adapter moves the
process's TMPDIR while its runtime lives) and fails when a history no longer parts the same way:
a LoopX release that fixed or changed it shows at once, as the gate's divergences file does. Each
finding also names the gate scenarios that show the same rule failing for LoopX, or the feature
added for it, and those must exist.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# `extended` (CI runs it after the test command): LoopX against the reference on every history; the differential soak itself is held by tests/campaigns/test_differential.py.
pytestmark = pytest.mark.extended

ROOT = Path(__file__).resolve().parents[2]
KNOWN = ROOT / "pwh" / "divergences" / "loopx-2.1.1-differential.json"
GATE_KNOWN = ROOT / "pwh" / "divergences" / "loopx-2.1.1.json"
SCHEMA = "pwh_differential_divergences_v0"

REPLAY = """
import json, sys
from pwh._campaigns.differential import diff_steps

known = json.load(open(sys.argv[1], encoding="utf-8"))
seen = []
for finding in known["findings"]:
    ran, found = diff_steps(known["sut"], known["against"], finding["steps"])
    seen.append({"kind": found["key"] if found else None, "step": found["step"] if found else None})
print(json.dumps(seen))
"""


@pytest.fixture(scope="module")
def known() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(KNOWN.read_text("utf-8"))
    return data


def test_the_file_says_what_found_it_and_each_finding_is_whole(known: dict[str, Any]) -> None:
    assert known["schema_version"] == SCHEMA and (known["sut"], known["against"]) == ("reference", "loopx")
    assert known["found_by"].startswith("pwh soak --sut reference --against loopx")
    kinds = [f["kind"] for f in known["findings"]]
    assert kinds and len(kinds) == len(set(kinds)), "one finding per kind"
    for finding in known["findings"]:
        assert finding["steps"][0]["op"] == "setup" and finding["rfc"] and finding["reading"]
        assert finding["sut_answer"] and finding["against_answer"]
        assert finding["known_as"], f"{finding['kind']}: name the gate scenario or feature that shows it"


def test_every_history_still_parts_on_the_same_fact(known: dict[str, Any]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", REPLAY, str(KNOWN)], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    for finding, now in zip(known["findings"], seen, strict=True):
        assert now["kind"] == finding["kind"] and now["step"] == finding["step"], (
            f"{finding['kind']}: the history now parts as {now} (LoopX changed?): rerun `{known['found_by']}` and update {KNOWN.name}"
        )


def test_each_finding_is_known_to_the_gate_or_has_its_own_scenario(known: dict[str, Any]) -> None:
    gate = json.loads(GATE_KNOWN.read_text("utf-8"))
    failing = {(d["row"], d["scenario"]["name"]) for d in gate["divergences"] if d["status"] in ("fail", "skip", "profile")}
    features = "\n".join(p.read_text("utf-8") for p in sorted((ROOT / "features").rglob("*.feature")))
    for finding in known["findings"]:
        for known_as in finding["known_as"]:
            if "feature" in known_as:
                assert f"Scenario: {known_as['scenario']}" in features, known_as
            else:
                assert (known_as["row"], known_as["scenario"]) in failing, known_as

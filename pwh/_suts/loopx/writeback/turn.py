"""LoopX's orchestrator-owned Turn (``turn run-once``) as a writeback path: the fake host, the argv,
and the Turn journal read back (plain files; no loopx import here).

``loopx turn run-once --host generic-cli --execute`` plans one Turn, runs a host command that reads
the request on stdin and prints one ``loopx_turn_result_v0``, validates it with an independent
command, commits the writeback and the quota spend, and then drains its post-writeback hooks
(``cli_commands/turn_post_writeback.py``). ``--resume-turn-key sha256:<hex>`` replays it from its
journal ``<RT>/goals/<goal>/turns/<hex>.json`` without calling the host again.

The fake host answers from a fixed table (:data:`ANSWERS`), chosen by its one argument: a material
replan carrying an active successor Vision with a ``goal_path_delta_v0`` (what LoopX's own report
capability needs to see a segment's successor settled), or a validated completion.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .fixture import AGENT_ID, GOAL_ID, Layout

TURN_SCHEMA = "loopx_turn_execution_v0"
PLAN_SCHEMA = "loopx_turn_plan_v0"  # what run-once answers when it plans no host Turn
RESULT_SCHEMA = "loopx_turn_result_v0"
PHASES = ["host_execute", "typed_result"]

# An active successor Vision: LoopX's report capability proposes its trigger evaluation for an
# accepted vision_successor_required replan whose successor Vision is open (stage_completion.py).
SUCCESSOR_VISION: dict[str, Any] = {
    "schema_version": "goal_vision_replan_contract_v0",
    "state": "vision_patch_proposed",
    "vision_patch": {
        "vision_summary": "The fixture continues with a successor segment",
        "acceptance_summary": "Every fixture Todo of the successor segment is done",
    },
    "path_delta": {
        "schema_version": "goal_path_delta_v0",
        "outcome": "replan",
        "prior_assumption": "The closed fixture segment was the whole Goal.",
        "observed_reality": "Open fixture Todos remain after the closed segment.",
        "changed": ["A successor segment takes the remaining fixture Todos"],
        "evidence_refs": ["evidence:pwh-fixture-closed-segment"],
    },
}

_COMMON: dict[str, Any] = {
    "schema_version": RESULT_SCHEMA,
    "completed_phases": PHASES,
    "delivery_batch_scale": "implementation",
    "delivery_outcome": "outcome_progress",
}

ANSWERS: dict[str, dict[str, Any]] = {
    "replan": {
        **_COMMON,
        "result_kind": "replan_required",
        "classification": "replan_recorded",
        "recommended_action": "Continue with the successor segment",
        "next_action": "Take the next fixture Todo of the successor segment",
        "summary": "pwh fixture replan",
        "path_delta_mode": "material_replan",
        "agent_vision_json": json.dumps(SUCCESSOR_VISION, sort_keys=True),
    },
    "complete": {
        **_COMMON,
        "result_kind": "validated_completion",
        "classification": "todo_completed",
        "recommended_action": "Take the next fixture Todo",
        "next_action": "Take the next fixture Todo",
        "summary": "pwh fixture completion",
        "path_delta_mode": "unchanged",
        "vision_unchanged_reason": "The fixture path is unchanged",
        "work_evidence": ["pwh fixture evidence"],
    },
}

HOST_SCRIPT = '''"""pwh's fake LoopX Turn host: one loopx_turn_result_v0 for the request on stdin."""
import json
import sys

ANSWERS = json.loads(%r)
request = json.load(sys.stdin)
answer = dict(ANSWERS[sys.argv[1]])
answer["turn_key"] = request["turn_key"]
sys.stdout.write(json.dumps(answer) + "\\n")
'''

# The independent validation LoopX runs on the host's normalized result (given on stdin): it passes.
VALIDATOR = "import sys; sys.stdin.read()"


def write_host(layout: Layout) -> Path:
    """The fake host script, in the boundary's own folder (its answers are data, see :data:`ANSWERS`)."""
    path = layout.root / "fake_host.py"
    path.write_text(HOST_SCRIPT % json.dumps(ANSWERS, sort_keys=True), "utf-8")
    return path


def run_once_argv(layout: Layout, host: Path, *, answer: str, turn: str, todo: str | None = None) -> list[str]:
    """``turn run-once --execute`` of one Turn whose host answers ``answer`` (a key of :data:`ANSWERS`).
    Both commands run isolated (``-I``): nothing of the harness's environment reaches them."""
    argv = [
        "turn", "run-once", "--goal-id", GOAL_ID, "--agent-id", AGENT_ID, "--host", "generic-cli",
        "--host-adapter-command-json", json.dumps([sys.executable, "-I", str(host), answer]),
        "--validation-command-json", json.dumps([sys.executable, "-I", "-c", VALIDATOR]),
        "--project", str(layout.project), "--execution-mode", "isolated-headless",
        "--turn-instance-id", turn, "--no-global-sync", "--execute",
    ]  # fmt: skip
    return argv + (["--todo-id", todo] if todo else [])


# What selects a fresh Turn; LoopX refuses each beside ``--resume-turn-key`` (the key names the Turn).
FRESH_ONLY = ("--turn-instance-id", "--todo-id")


def resume_argv(argv: list[str], key: str) -> list[str]:
    """LoopX's own replay of a Turn: the same argv plus ``--resume-turn-key sha256:<hex>``, less
    what selects a fresh Turn (:data:`FRESH_ONLY`)."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip or arg in FRESH_ONLY:
            skip = not skip
            continue
        kept.append(arg)
    return [*kept, "--resume-turn-key", f"sha256:{key}"]


def journal_path(layout: Layout, key: str) -> Path:
    return layout.goal_dir / "turns" / f"{key}.json"


def journals(layout: Layout) -> set[str]:
    """The keys (hex) of every Turn journal on disk."""
    return {p.stem for p in (layout.goal_dir / "turns").glob("*.json")}


def is_turn(output: Mapping[str, Any]) -> bool:
    """Whether a command's answer is ``turn run-once``'s (an executed Turn or a plan it stopped at)."""
    return output.get("schema_version") in (TURN_SCHEMA, PLAN_SCHEMA)


def key_of(output: Mapping[str, Any]) -> str | None:
    """The Turn's journal key from its answer (``resume_turn_key: sha256:<hex>``)."""
    value = output.get("resume_turn_key") if output.get("schema_version") == TURN_SCHEMA else None
    if isinstance(value, str) and value.startswith("sha256:") and len(value) == 71:
        return value[7:]
    return None


def writeback_ref(journal: Mapping[str, Any]) -> str | None:
    """The committed Turn's receipt id: its durable-writeback settlement receipt's ``source_ref``
    (``turn_journal:<effect id>#durable_writeback``), as for a refresh's ``rollout_event:<id>``;
    None unless the journal says committed."""
    if journal.get("status") != "committed":
        return None
    for receipt in (journal.get("settlement_result") or {}).get("receipts") or ():
        if isinstance(receipt, Mapping) and receipt.get("step_kind") == "durable_writeback" and receipt.get("status") == "committed":
            ref = receipt.get("source_ref")
            return ref if isinstance(ref, str) else None
    return None


def eligibility(journal: Mapping[str, Any]) -> dict[str, Any]:
    """Spend eligibility as the Turn journal states it: ``receipt.commit_eligibility`` and its
    settlement receipts (their refs name the Turn, not anything random)."""
    receipt = journal.get("receipt") or {}
    settlement = journal.get("settlement_result") or {}
    commit = receipt.get("commit_eligibility") if isinstance(receipt, Mapping) else None
    commit = dict(commit) if isinstance(commit, Mapping) else {}
    return {
        "eligible": commit.get("writeback") is True and commit.get("quota_spend") is True,
        "commit_eligibility": commit,
        "ok": settlement.get("ok"),
        "failure": settlement.get("failure"),
        "receipts": [dict(r) for r in settlement.get("receipts") or () if isinstance(r, Mapping)],
    }

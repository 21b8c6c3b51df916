"""The reference's writeback boundary (fakes/_writeback.py) against the writeback seam's protocol,
the world's choice of boundary, and the verdict naming the seam a scenario went through."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from fakes._packets import GENERIC_INTENT_KIND, GENERIC_PAYLOAD_SCHEMA, intent_for, proposed, registration
from fakes._writeback import ReferenceWriteback
from pwh import ReferenceSUT, Unsupported
from pwh._harness.judging import judge_scenario
from pwh._suts.writeback_seam import WRITEBACK_CRASH_POINTS, WritebackBoundary


def _one(hook_input: Mapping[str, Any]) -> Any:
    return proposed(intent_for(hook_input))


@pytest.fixture
def boundary(tmp_path: Path) -> Iterator[ReferenceWriteback]:
    sut = ReferenceSUT(workdir=tmp_path / "sut")
    b = ReferenceWriteback(sut, tmp_path / "wb")
    try:
        yield b
    finally:
        b.close()
        sut.close()


def _ready(b: ReferenceWriteback, *, todos: int = 2, phase: bool = True) -> None:
    b.prepare(todos=todos, phase_enabled=phase, report_capability=False)
    assert b.register_intent_kind(GENERIC_INTENT_KIND, GENERIC_PAYLOAD_SCHEMA) == []
    assert b.install(registration("a.reporter"), _one) == []


def test_it_is_a_writeback_boundary(boundary: ReferenceWriteback) -> None:
    assert isinstance(boundary, WritebackBoundary)


def test_a_committed_completion_is_dispatched_from_its_committed_receipt(boundary: ReferenceWriteback) -> None:
    _ready(boundary)
    commit = boundary.commit_completion(1)
    assert commit.committed and commit.event_kind == "todo_completed" and commit.raised is None
    assert json.loads(boundary.primary_receipt(1))["receipt_id"] == commit.receipt_id
    assert [(s.hook_id, s.receipt_id) for s in boundary.hooks_seen()] == [("a.reporter", commit.receipt_id)]
    records = boundary.sidecar_records()
    assert [(r["hook_id"], r["source_receipt_id"], r["status"]) for r in records] == [("a.reporter", commit.receipt_id, "proposed")]
    assert len(boundary.intent_receipts()) == 1
    assert boundary.spend_eligibility(1) == {"eligible": True, "spent_units": 1}


@pytest.mark.parametrize("fail", ["validation", "writeback"])
def test_a_failed_primary_command_commits_nothing_and_calls_no_hook(boundary: ReferenceWriteback, fail: Any) -> None:
    _ready(boundary)
    commit = boundary.commit_completion(1, fail=fail)
    assert not commit.committed and commit.receipt_id is None
    assert boundary.hooks_seen() == [] and boundary.sidecar_records() == []
    with pytest.raises(IndexError):
        boundary.primary_receipt(1)


def test_a_replay_returns_the_recorded_dispatch(boundary: ReferenceWriteback) -> None:
    _ready(boundary)
    boundary.commit_replan()
    before = boundary.sidecar_records()
    replay = boundary.replay(1)
    assert replay.committed and boundary.sidecar_records() == before and len(boundary.hooks_seen()) == 1
    assert replay.dispatch is not None and all(h["replayed"] for h in replay.dispatch["hooks"])


@pytest.mark.parametrize("moment", sorted(WRITEBACK_CRASH_POINTS))
def test_a_crash_then_recovery_gives_one_record(boundary: ReferenceWriteback, moment: str) -> None:
    _ready(boundary)
    crashed = boundary.commit_completion(1, crash=moment)
    assert crashed.raised == "killed" and not crashed.committed
    boundary.recover()
    assert len(boundary.sidecar_records()) == 1
    assert boundary.spend_eligibility(1)["spent_units"] == 1


def test_phase_off_calls_nothing(boundary: ReferenceWriteback) -> None:
    _ready(boundary, phase=False)
    assert boundary.commit_completion(1).committed
    assert boundary.hooks_seen() == [] and boundary.intent_receipts() == []


def test_planted_values_are_kept_apart_and_the_environment_restored(tmp_path: Path) -> None:
    sut = ReferenceSUT(workdir=tmp_path / "sut")
    b = ReferenceWriteback(sut, tmp_path / "wb")
    _ready(b)
    b.plant({"credential": "ghp_" + "x" * 36})
    import os

    assert os.environ["PWH_PLANTED_CREDENTIAL"].startswith("ghp_")
    b.commit_completion(1)
    assert "ghp_" not in json.dumps([s.hook_input for s in b.hooks_seen()])
    b.close()
    sut.close()
    assert "PWH_PLANTED_CREDENTIAL" not in os.environ


def test_the_world_offers_no_writeback_seam_for_a_foreign_adapter(tmp_path: Path) -> None:
    from fakes._world import World

    class Foreign:
        name = "foreign"

        def close(self) -> None:
            return None

    world = World(Foreign(), tmp_path)
    try:
        with pytest.raises(Unsupported, match="offers no writeback seam"):
            _ = world.writeback
    finally:
        world.close()


def test_the_world_uses_an_adapters_own_boundary(tmp_path: Path) -> None:
    from fakes._world import World

    own = ReferenceWriteback(ReferenceSUT(workdir=tmp_path / "own"), tmp_path / "own-wb")

    class Offering:
        name = "offering"

        def writeback_boundary(self) -> ReferenceWriteback:
            return own

        def close(self) -> None:
            own.sut.close()

    world = World(Offering(), tmp_path)
    try:
        assert world.writeback.wrapped is own
    finally:
        world.close()


def _scenario(operations: list[str], outcome: str = "passed") -> dict[str, Any]:
    return {
        "tags": ["M04"],
        "outcome": outcome,
        "judgement": {"reached": True, "judged_sut": True, "operations": operations, "answered": operations, "divergences": []},
    }


def test_the_verdict_names_the_writeback_seam() -> None:
    assert judge_scenario(_scenario(["writeback.commit_completion", "writeback.sidecar_records"]))["seam"] == "writeback"
    assert judge_scenario(_scenario(["dispatch", "journal_records"]))["seam"] == "dispatcher"
    assert judge_scenario(_scenario(["writeback.prepare"], outcome="failed"))["seam"] == "writeback"

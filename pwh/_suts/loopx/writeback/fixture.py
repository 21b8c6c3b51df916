"""The Goal fixture a LoopX writeback boundary commits into (plain files; no loopx import here).

One private directory per boundary: ``home`` and ``tmp`` (LoopX's default runtime root, its
usage-ping state and its Node runtime's locator live under them), ``rt`` (the runtime root
every command names), and ``project`` (the Goal's repository, with ``.loopx/registry.json`` and
``.codex/goals/<goal>/ACTIVE_GOAL_STATE.md`` holding the open Todos).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

GOAL_ID = "pwh-writeback"
AGENT_ID = "agent-a"
ROUTE_REF = "pwh-test-route"
DOMAIN = "pwh-fixture"


def todo_id(n: int) -> str:
    """Todo number ``n`` (1-based) of the fixture."""
    return f"todo_fixture{n:04d}"


@dataclass(frozen=True)
class Layout:
    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def runtime_root(self) -> Path:
        return self.root / "rt"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def registry(self) -> Path:
        return self.project / ".loopx" / "registry.json"

    @property
    def state_file(self) -> Path:
        return self.project / ".codex" / "goals" / GOAL_ID / "ACTIVE_GOAL_STATE.md"

    @property
    def goal_dir(self) -> Path:
        return self.runtime_root / "goals" / GOAL_ID

    @property
    def sidecar_dir(self) -> Path:
        return self.goal_dir / "post_writeback_hooks"

    @property
    def rollout_log(self) -> Path:
        return self.goal_dir / "rollout-event-log.jsonl"

    @property
    def authority_dir(self) -> Path:
        return self.runtime_root / "authority" / "file-v0"

    def make_dirs(self) -> None:
        for d in (self.home, self.tmp, self.runtime_root, self.state_file.parent, self.registry.parent):
            d.mkdir(parents=True, exist_ok=True)


def state_text(todos: int, texts: Mapping[int, str] | None = None) -> str:
    """ACTIVE_GOAL_STATE.md with ``todos`` open Agent Todos, each ``no_followup=true`` (its
    completion generates no follow-up Todo, so completing the last open one leaves the Goal
    terminal, which LoopX's report capability needs to see a segment close)."""
    lines = ["---", "status: active", "handoff_mode: soft_claim", "---", "", "# Goal: pwh writeback fixture", "", "## Agent Todo", ""]
    for n in range(1, todos + 1):
        text = (texts or {}).get(n) or f"Fixture task {n} for the writeback boundary"
        no_followup = " no_followup=true"
        lines.append(f"- [ ] {text}")
        lines.append(
            f"  <!-- loopx:todo todo_id={todo_id(n)} status=open task_class=advancement_task action_kind=fixture "
            f"claimed_by={AGENT_ID} priority=P0{no_followup} -->"
        )
    return "\n".join(lines) + "\n"


def registry_document(layout: Layout, *, report_capability: str | None) -> dict[str, object]:
    """The project registry; ``report_capability`` is the package name of LoopX's own capability
    behind its composition root (the fork server reports it), which is also the Goal's
    ``control_plane`` key that switches it on, or None to leave it off."""
    goal: dict[str, object] = {
        "id": GOAL_ID,
        "domain": DOMAIN,  # LoopX's contract check requires one; without it its Turn planner only waits
        "status": "active",
        "repo": str(layout.project),
        "state_file": str(layout.state_file),
        "adapter": {"kind": "codex", "status": "connected-delivery"},
        "quota": {"compute": 1.0, "window_hours": 24},
        "coordination": {"agent_model": "peer_v1", "registered_agents": [AGENT_ID]},
    }
    if report_capability:
        goal["control_plane"] = {report_capability: {"enabled": True, "profile_preset": "weekly", "route_ref": ROUTE_REF}}
    return {"schema_version": 1, "common_runtime_root": str(layout.runtime_root), "goals": [goal]}


def write_goal(layout: Layout, *, todos: int, report_capability: str | None, texts: Mapping[int, str] | None = None) -> None:
    layout.make_dirs()
    layout.state_file.write_text(state_text(todos, texts), "utf-8")
    layout.registry.write_text(json.dumps(registry_document(layout, report_capability=report_capability), indent=2), "utf-8")

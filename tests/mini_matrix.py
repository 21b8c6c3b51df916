"""A small, valid copy of the matrix for tests that must run the gate over *some* matrix but not
the whole one: each row's and rule's first scenario, plus any scenarios asked for by feature and
line. It passes the gate's preflight (every row has a scenario) in a tenth of the time."""

from __future__ import annotations

import re
from pathlib import Path

from pwh._harness.rules import RULE_IDS

ROOT = Path(__file__).resolve().parents[1]
_TAG_LINE = re.compile(r"^\s*@")
_SCENARIO_LINE = re.compile(r"^\s*Scenario( Outline)?:")


def scenario_blocks(text: str) -> tuple[list[str], list[tuple[int, list[str], list[str]]]]:
    """A feature's header lines, and each scenario as (its line, its tags, its lines with the tags)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _SCENARIO_LINE.match(line)]
    heads = [i - 1 if i and _TAG_LINE.match(lines[i - 1]) else i for i in starts]
    blocks = []
    for n, (head, start) in enumerate(zip(heads, starts, strict=True)):
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        tags = lines[head].split() if head != start else []
        blocks.append((start + 1, [t.lstrip("@") for t in tags], lines[head:end]))
    return lines[: heads[0] if heads else len(lines)], blocks


def mini_matrix(target: Path, also: tuple[tuple[str, int], ...] = ()) -> Path:
    """Write the small matrix to ``target`` (a ``features`` directory) and return it."""
    wanted_rules = set(RULE_IDS)
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "features").glob("*.feature")):
        header, blocks = scenario_blocks(path.read_text("utf-8"))
        keep = []
        for line, tags, block in blocks:
            rule = next((t for t in tags if t in RULE_IDS), None)
            if rule in wanted_rules or (path.name, line) in also:
                wanted_rules.discard(rule)
                keep += block
        if keep:
            (target / path.name).write_text("\n".join(header + keep) + "\n", "utf-8")
    assert not wanted_rules, f"no scenario found for {sorted(wanted_rules)}"
    return target

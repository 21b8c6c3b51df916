"""``pwh packet verify --rerun``: judge the published results again, from the packet's own features.

Verification proves the files are the ones the builder wrote and that each verdict agrees with
itself; it cannot prove the builder's gate ran honestly. A rerun does: every named SUT is gated
again here, over the ``features/`` the packet carries, and the new verdict is compared with the
published one row by row and scenario by scenario (as ``pwh compare`` does). A rerun happens only
after the packet verified: a damaged packet is never run.

Apart from :mod:`.verify`, which never imports the gate; this module loads it when it runs.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pwh._harness.gate_error import GateError
from pwh._harness.packet.verify import TARBALL_SUFFIXES, _unpack

__all__ = ["RerunResult", "packet_root", "rerun_packet"]


@dataclass
class RerunResult:
    sut: str
    published: dict[str, Any]
    comparison: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return bool(self.comparison["same"])


@contextmanager
def packet_root(path: Path) -> Iterator[Path]:
    """The packet's directory: ``path`` itself, or a private unpacked copy of a ``.tar.gz``
    (unpacked as verify does: plain files only, bounded), removed afterwards."""
    if not (path.name.endswith(TARBALL_SUFFIXES) and path.is_file()):
        yield path
        return
    import tarfile

    with tempfile.TemporaryDirectory(prefix="pwh-rerun-") as tmp:
        root, _ = _unpack(path, Path(tmp), tarfile)
        if root is None:
            raise GateError("the archive does not hold one packet directory")
        yield root


def published_verdicts(root: Path) -> dict[str, dict[str, Any]]:
    """Each ``results/<name>/verdict.json`` of a verified packet, by the SUT it names."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted((root / "results").glob("*/verdict.json")):
        verdict = json.loads(path.read_text("utf-8"))
        out[str(verdict["sut"])] = verdict
    return out


Gate = Callable[..., Any]


def rerun_packet(root: Path, suts: list[str] | None, *, gate: Gate | None = None, out: Callable[[str], None] = print) -> list[RerunResult]:
    """Gate each of ``suts`` (default: every SUT the packet has results for) over the packet's
    features and compare with its published verdict. ``GateError`` for a SUT the packet has no
    results for, or a gate that cannot run."""
    from pwh._harness.gate import run_gate
    from pwh._harness.verdicts import compare

    published = published_verdicts(root)
    wanted = suts or sorted(published)
    unknown = [s for s in wanted if s not in published]
    if unknown:
        raise GateError(f"the packet has no results for {', '.join(map(repr, unknown))}; it has {', '.join(map(repr, sorted(published)))}")
    run = gate or run_gate
    results = []
    for sut in wanted:
        out(f"pwh packet verify: rerunning the gate for {sut} over the packet's features")
        new = run(sut, features=str(root / "features"), progress=False).verdict()
        old = published[sut]
        notes = []
        before, after = old.get("run") or {}, new.get("run") or {}
        if before.get("features_digest") and before.get("features_digest") != after.get("features_digest"):
            notes.append("the packet's features digest differs from the published run's: the verdict was not made from these features")
        for key, what in (("pwh_version", "pwh"), ("sut_version", "the SUT")):
            if before.get(key) != after.get(key):
                notes.append(f"published with {what} {before.get(key) or '(unstated)'}, rerun with {after.get(key) or '(unstated)'}")
        results.append(RerunResult(sut, old, compare(old, new), notes))
    return results

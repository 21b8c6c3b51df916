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
from pwh._harness.packet._common import result_dir_name
from pwh._harness.packet.verify import TARBALL_SUFFIXES, _unpack
from pwh._harness.safe_text import for_terminal

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
    """Each ``results/<name>/verdict.json`` of a verified packet, by the SUT it names; a SUT named
    by two verdicts, or published outside its own ``results/<name>/``, is :class:`GateError`
    (verify refuses both: a rerun compares each SUT with exactly one published verdict)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted((root / "results").glob("*/verdict.json")):
        verdict = json.loads(path.read_text("utf-8"))
        sut = str(verdict["sut"])
        if sut in out or path.parent.name != result_dir_name(sut):
            raise GateError(
                f"results/{for_terminal(path.parent.name)}/: a second verdict for one SUT, or one outside its own results folder"
            )
        out[sut] = verdict
    return out


def shown_sut(sut: str, *, quoted: bool = False) -> str:
    """A SUT name read from a packet, as a line may show it (control characters escaped)."""
    return for_terminal(repr(sut[:200]) if quoted else sut[:200])


def _quoted(suts: list[str]) -> str:
    return ", ".join(shown_sut(s, quoted=True) for s in suts)


Gate = Callable[..., Any]


def rerun_packet(root: Path, suts: list[str] | None, *, gate: Gate | None = None, out: Callable[[str], None] = print) -> list[RerunResult]:
    """Gate each of ``suts`` over the packet's features and compare with its published verdict.
    ``suts`` are the names given on the command line; without them, the packet's SUTs, when every
    one is built into pwh. A packet never names code: a ``module:factory`` (or any name not built
    in) taken from a verdict is never loaded; without ``--sut`` it is refused, before anything runs.
    ``GateError`` for such a name, a SUT the packet has no results for, or a gate that cannot run."""
    from pwh._harness.gate import run_gate
    from pwh._harness.verdicts import compare
    from pwh._suts.seam import BUILTIN_SUTS

    published = published_verdicts(root)
    if suts:
        wanted = list(dict.fromkeys(suts))
    else:
        foreign = sorted(s for s in published if s not in BUILTIN_SUTS)
        if foreign:
            raise GateError(
                f"the packet has results for {_quoted(foreign)}, which pwh does not have built in; "
                "a packet never chooses code to run: name each SUT to rerun with --sut (its adapter, installed here)"
            )
        wanted = sorted(published)
    unknown = [s for s in wanted if s not in published]
    if unknown:
        raise GateError(f"the packet has no results for {_quoted(unknown)}; it has {_quoted(sorted(published))}")
    run = gate or run_gate
    results = []
    for sut in wanted:
        out(f"pwh packet verify: rerunning the gate for {shown_sut(sut)} over the packet's features")
        new = run(sut, features=str(root / "features"), progress=False).verdict()
        old = published[sut]
        notes = []
        before, after = old.get("run") or {}, new.get("run") or {}
        if before.get("features_digest") and before.get("features_digest") != after.get("features_digest"):
            notes.append("the packet's features digest differs from the published run's: the verdict was not made from these features")
        for key, what in (("pwh_version", "pwh"), ("sut_version", "the SUT")):
            if before.get(key) != after.get(key):
                was, now = for_terminal(before.get(key) or "(unstated)"), for_terminal(after.get(key) or "(unstated)")
                notes.append(f"published with {what} {was}, rerun with {now}")
        results.append(RerunResult(sut, old, compare(old, new), notes))
    return results

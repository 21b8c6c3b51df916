"""``pwh smoke --sut X``: is a new adapter wired? An answer in seconds, per seam operation.

The matrix's scenarios tagged ``@smoke`` (a dozen, chosen so that together they reach every
operation of the SUT seam and of the optional turn seam) run through the gate as usual. The
report is then turned around: for each operation, did the adapter answer it, say
``Unsupported`` (with its reason), or raise (which exception, at which line of the adapter
module)? A smoke run is not a verdict and says so: ``pwh gate`` judges every row.

Its outcome (:attr:`SmokeReport.outcome`, which ``pwh smoke`` turns into its exit code): ``ok``
every smoke scenario passed or was unsupported, and ``dispatch`` answered; ``failed`` a smoke
scenario failed (a wrong answer, or the adapter raised); ``unwired`` nothing failed but
``dispatch`` never answered, so the adapter is not yet wired enough to be judged at all. A smoke
that cannot run (an adapter that cannot load, bad options) raises :class:`GateError`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pwh._harness.gate_error import GateError

__all__ = ["SMOKE_TAG", "OperationResult", "SmokeReport", "render", "smoke", "write_template"]

SMOKE_TAG = "smoke"

# The seam's operations in the order an adapter author wires them; ``turn.*`` is the optional
# turn seam (pwh._suts.turn_seam). The four marked return nothing a check could read.
OPERATIONS = (
    "register_intent_kind",
    "install",
    "set_profile",
    "dispatch",
    "journal_records",
    "redeliver",
    "arm_crash",
    "restart",
    "inject_fault",
    "turn.register_provider",
    "turn.build_host_request",
    "turn.accept_host_output",
)
RETURNS_NOTHING = frozenset({"set_profile", "arm_crash", "inject_fault"})


@dataclass
class OperationResult:
    name: str
    status: str  # answered | called | unsupported | raised | failed | not reached | waiting (on another operation)
    detail: str = ""
    scenarios: int = 0


@dataclass
class SmokeReport:
    sut: str
    version: str | None
    seconds: float
    operations: list[OperationResult]
    scenarios: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [s for s in self.scenarios if s.get("outcome") == "failed"]

    @property
    def outcome(self) -> str:
        """``failed``, else ``ok`` once ``dispatch`` answered, else ``unwired``."""
        if self.failed:
            return "failed"
        dispatch = next(o for o in self.operations if o.name == "dispatch")
        return "ok" if dispatch.status == "answered" else "unwired"


def smoke(sut: str, *, features: str | None = None) -> SmokeReport:
    """Run the ``@smoke`` scenarios against ``sut`` and say, per operation, how the adapter did."""
    from pwh._harness.gate import run_gate

    started = time.monotonic()
    run = run_gate(sut, features=features, tags=SMOKE_TAG, progress=False)
    if run.collection_errors:
        raise GateError(f"the smoke scenarios could not be collected ({len(run.collection_errors)} error(s))")
    if not run.scenarios:
        raise GateError(f"no scenario is tagged @{SMOKE_TAG} in the features")
    judged = run.judged()  # each scenario with whom it counts for: pwh's testbed passes are never the adapter's
    return SmokeReport(sut, run.covers.get("sut_version"), time.monotonic() - started, _operations(judged), judged)


def _operations(scenarios: list[dict[str, Any]]) -> list[OperationResult]:
    results = []
    for op in OPERATIONS:
        reached = [s for s in scenarios if op in _judgement(s).get("operations", [])]
        answered = [s for s in reached if op in _judgement(s).get("answered", [])]
        results.append(_one(op, reached, answered))
    return results


def _one(op: str, reached: list[dict[str, Any]], answered: list[dict[str, Any]]) -> OperationResult:
    """How ``op`` did: raised (where) before answered, answered before unsupported. A wrong
    answer is the failing scenario's, listed below the table: a check reads several answers, so
    it is never pinned on one operation."""
    if not reached:
        why = (
            "the adapter offers no turn seam: seed-003 rules run on pwh's testbed"
            if op.startswith("turn.")
            else "no smoke scenario reached it"
        )
        return OperationResult(op, "not reached", why)
    unanswered = [s for s in reached if s not in answered]
    raised = [s for s in unanswered if s.get("outcome") == "failed" and str(s.get("seen", "")).startswith("it raised")]
    skipped = [s for s in unanswered if s.get("outcome") == "skipped"]
    unsupported = str(skipped[0].get("reason", "")).removeprefix("unsupported by the SUT: ") if skipped else ""
    if raised:
        s = raised[0]
        where = f" at {s['raised_at']}" if s.get("raised_at") else ""
        return OperationResult(op, "raised", f"{str(s['seen']).removeprefix('it raised ')}{where} ({_where(s)})", len(reached))
    elsewhere = next((o for o in OPERATIONS if o != op and unsupported.startswith(f"{o} is not wired")), None)
    if skipped and elsewhere is not None and not answered:  # the scenarios stopped at another operation
        status = "called" if op in RETURNS_NOTHING else "waiting"
        return OperationResult(op, status, f"its scenarios stopped at {elsewhere}, not wired yet", len(reached))
    also = f"; unsupported in {len(skipped)}: {unsupported}" if skipped else ""
    if answered:
        return OperationResult(op, "answered", also.removeprefix("; "), len(reached))
    returned = [s for s in unanswered if s.get("outcome") != "skipped"]
    if op in RETURNS_NOTHING and returned:
        return OperationResult(op, "called", "returns nothing a check could read" + also, len(reached))
    if skipped:
        return OperationResult(op, "unsupported", unsupported, len(reached))
    return OperationResult(op, "unsupported", "reached, never answered", len(reached))


def _judgement(s: dict[str, Any]) -> dict[str, Any]:
    j = s.get("judgement")
    return j if isinstance(j, dict) else {}


def _where(s: dict[str, Any]) -> str:
    return f"{s.get('feature', '?')}:{s.get('line', '?')}"


MARKS = {"answered": "ok", "called": "ok", "unsupported": "skip", "raised": "FAIL", "failed": "FAIL", "not reached": "-", "waiting": "-"}


def render(report: SmokeReport) -> str:
    version = f" {report.version}" if report.version else ""
    lines = [
        f"pwh smoke — SUT {report.sut}{version}: {len(report.scenarios)} scenarios in {report.seconds:.1f} s "
        f"(not a verdict: `pwh gate --sut {report.sut}` judges every row)",
        "",
        f"{'operation':<26}{'status':<8}{'scenarios':>9}  detail",
    ]
    for o in report.operations:
        detail = f"{o.status}: {o.detail}" if o.detail else o.status
        count = str(o.scenarios) if o.scenarios else ""
        lines.append(f"{o.name:<26}{MARKS[o.status]:<8}{count:>9}  {detail}"[:200])
    mine = [s.get("outcome") for s in report.scenarios if s.get("counts_for", "sut") == "sut"]
    testbed = len(report.scenarios) - len(mine)
    lines += [
        "",
        f"scenarios: {mine.count('passed')} pass, {mine.count('failed')} FAIL, {mine.count('skipped')} skip"
        + (f"; {testbed} testbed-only (pwh's own fakes: never a pass of the adapter)" if testbed else ""),
    ]
    for s in report.failed:
        raised = f" (at {s['raised_at']})" if s.get("raised_at") else ""
        params = f" [{s['params']}]" if s.get("params") else ""
        lines.append(
            f"  FAIL {_where(s)} {s.get('scenario', s.get('id'))}{params}: expected {s.get('expected')}; seen {s.get('seen')}{raised}"[:300]
        )
    verdict = {"ok": "ok", "failed": "FAIL", "unwired": "not wired: dispatch never answered"}[report.outcome]
    lines.append(f"smoke: {verdict}")
    return "\n".join(lines)


def write_template(target: Path) -> None:
    """Write the documented adapter skeleton to ``target`` (a new .py file), or :class:`GateError`."""
    import pwh._suts
    from pwh._harness.paths import shown

    if target.suffix != ".py":
        raise GateError(f"--template writes Python: name a .py file, not {shown(target)}")
    if target.exists() or target.is_symlink():
        raise GateError(f"{shown(target)} exists; the skeleton is never written over a file")
    try:
        skeleton = Path(pwh._suts.__file__).with_name("adapter_template.py")  # read as text: an outside adapter, never imported here
        target.write_text(skeleton.read_text("utf-8"), "utf-8")
    except OSError as exc:
        raise GateError(f"cannot write {shown(target)}: {exc.strerror or 'write failed'}") from None
    module = target.stem
    here = target.resolve().parent == Path.cwd().resolve()
    run = f"pwh smoke --sut {module}:factory" if here else f"cd {shown(target.parent)} && pwh smoke --sut {module}:factory"
    print(f"wrote {shown(target)}: wire one method at a time, then `{run}`")

"""Running the hostile producers: what a careless or malicious provider does, and what must follow.

Each case installs one hostile hook (``a.hostile``) before a witness hook (``z.witness``) and
dispatches a fresh committed receipt. It is *isolated* when the hostile hook ends with the
expected stable code, the witness still runs and sees a pristine input, the primary receipt is
unchanged, the dispatch took no longer than the hostile hook's limit allows, none of the
hostile objects' own methods ran on the dispatcher's thread, and no planted marker (nor any
scanner finding) reaches the journal or the outcome.

``SystemExit`` and ``KeyboardInterrupt`` raised by a producer stay on the worker thread and end
as ``producer_failed``, like any exception: a provider cannot stop the host. A real Ctrl-C is
delivered by the OS to the main thread only, so it interrupts the dispatcher's wait, not the
producer, and still stops the host (the campaign re-raises any KeyboardInterrupt that is not its
own marked one).

Out of reach of any in-process isolation, and so not tried: ``os._exit``, ``ctypes`` writes,
walking other threads' frames (``sys._current_frames``) to change the caller's objects, or
sabotaging interpreter-wide state. A provider that may do those must run in another process.
"""

from __future__ import annotations

import json
import os
import random
import string
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pwh._core import codes
from pwh._core.boundary import BoundaryScanner
from pwh._core.canonical import to_plain
from pwh._core.contracts import build_hook_input
from pwh._harness.network_guard import OutboundGuard, refuse_outbound
from pwh._reliability.hostile_cases import HOSTILE, INPUT_UNCHANGED, MARK, WITNESS, Case, Ctx, all_cases, hostile_registration
from pwh._reliability.packets import dispatch_of, intent, proposed, registration, source
from pwh._reliability.rig import Rig, Tally, carries, hook_failed_with, journal_leaks, snapshot, stable

# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


@contextmanager
def planted(ctx: Ctx) -> Iterator[None]:
    """Planted environment variables and a private file, removed afterwards."""
    rnd = random.Random(ctx.seed)
    word = lambda n=8: "".join(rnd.choice(string.ascii_lowercase) for _ in range(n))  # noqa: E731
    values = {
        "PWH_CAMPAIGN_API_KEY": "ghp_" + "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(36)),
        "PWH_CAMPAIGN_DSN": f"postgresql://svc:{word()}@db.{word()}.internal:5432/main",
        "PWH_CAMPAIGN_HOME": f"/home/{word()}/work",
    }
    saved = {k: os.environ.get(k) for k in values}
    workdir = Path(tempfile.mkdtemp(prefix="pwh-campaign-"))
    secret = f"owner {word()}@{word()}.com keeps the key at /home/{word()}/.aws/credentials"
    (workdir / "private-notes.txt").write_text(secret, "utf-8")
    ctx.workdir, ctx.env = workdir, values
    ctx.markers += [*values.values(), secret, str(workdir)]
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
        for path in workdir.iterdir():
            path.unlink()
        workdir.rmdir()


def run_hostile(tallies: dict[str, Tally], *, rounds: int, seed: int) -> None:
    """Every case ``rounds`` times (timeouts once: they only wait)."""
    ctx = Ctx(seed)
    cases = all_cases()
    n = 0
    workers = _producer_threads()
    with planted(ctx), refuse_outbound() as guard:
        try:
            for round_ in range(rounds):
                for case in cases:
                    if case.group == "hostile_timeout" and round_ > 0:
                        continue
                    n += 1
                    _run_case(case, ctx, guard, tallies.setdefault(case.group, Tally()), n)
        finally:
            _release(ctx)
            _check_late(ctx, workers)


def _run_case(case: Case, ctx: Ctx, guard: OutboundGuard, tally: Tally, n: int) -> None:
    tally.tried += 1
    scanner = BoundaryScanner()
    rig = Rig(scanner=scanner)
    seen: list[Any] = []
    witness_reg = registration(WITNESS)
    try:
        rig.install(HOSTILE, case.make(ctx), budget={"timeout_ms": case.timeout_ms}, **hostile_registration())

        def witness(i: Mapping[str, Any]) -> Any:
            seen.append(to_plain(i))
            return proposed(intent(i["dispatch_id"], hook_id=WITNESS))

        rig.install(WITNESS, witness)
        src = source(n)
        before = snapshot(src)
        refused, calls = len(guard.refused), len(ctx.calls)
        interval = sys.getswitchinterval()
        if case.name == "result_mutated_while_read":
            sys.setswitchinterval(1e-6)
        started = time.monotonic()
        try:
            outcome = rig.dispatch(src)
        finally:
            sys.setswitchinterval(interval)
        elapsed = time.monotonic() - started
        problems = _problems(case, outcome, seen, src, witness_reg, elapsed, len(guard.refused) - refused)
        problems += [f"hostile {name} ran on the dispatcher thread" for name, tid in ctx.calls[calls:] if tid == rig.dispatcher_thread]
        leaked = journal_leaks(rig.journal, scanner, ctx.markers) + len(carries(json.dumps(outcome.to_json()), ctx.markers))
    except KeyboardInterrupt as exc:
        if exc.args != (MARK,):
            raise
        tally.uncaught += 1
        tally.note(f"{case.name}: the producer's KeyboardInterrupt reached the dispatcher's caller")
        return
    except Exception as exc:
        tally.uncaught += 1
        tally.note(f"{case.name}: {type(exc).__name__} escaped")
        return
    except SystemExit as exc:
        tally.uncaught += 1
        tally.note(f"{case.name}: SystemExit escaped" + ("" if exc.args == (MARK,) else " (not the campaign's)"))
        return
    finally:
        ctx.churn_stop.set()
        if case.name == "answers_late":
            ctx.pending.append((rig, dispatch_of(src, HOSTILE), tally))
        else:
            rig.close()
    if snapshot(src) != before:
        tally.primary_changed += 1
        problems.append("the primary receipt changed")
    if leaked:
        tally.leaked += 1
        problems.append("a planted value reached the journal or the outcome")
    if problems:
        tally.note(f"{case.name}: {problems[0]}")
    else:
        tally.isolated += 1


def _problems(
    case: Case, outcome: Any, seen: list[Any], src: dict[str, Any], witness_reg: dict[str, Any], elapsed: float, refused: int
) -> list[str]:
    out = []
    if case.expect == INPUT_UNCHANGED:
        hostile = outcome.hook(HOSTILE) if outcome.has_hook(HOSTILE) else None
        if hostile is None or (hostile.status == "failed" and not stable(hostile.failure_code)):
            out.append("the hostile hook has no stable ending")
    elif hook_failed_with(outcome, HOSTILE, case.expect) is None:
        got = outcome.hook(HOSTILE).failure_code if outcome.has_hook(HOSTILE) else None
        out.append(f"ended {got}, expected {case.expect}")
    if not outcome.has_hook(WITNESS) or outcome.hook(WITNESS).status != "proposed":
        out.append("the witness hook did not run")
    elif len(seen) != 1 or seen[0] != build_hook_input(src, witness_reg, dispatch_of(src, WITNESS)):
        out.append("the witness saw a changed input")
    if outcome.journal_error is not None:
        out.append("journal error")
    if elapsed > case.timeout_ms / 1000 + 1.0:
        out.append(f"took {elapsed:.1f}s")
    if case.group == "hostile_network" and refused < 1:
        out.append("the guard saw no outbound attempt")
    return out


def _release(ctx: Ctx) -> None:
    ctx.release.set()
    ctx.stop.set()
    for thread in ctx.threads:
        thread.join(5)
    for handle in ctx.files:
        handle.close()
    ctx.threads.clear()
    ctx.files.clear()
    ctx.keep.clear()


def _producer_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "pwh-producer")


def _check_late(ctx: Ctx, baseline: int) -> None:
    """Once released, a producer that answered after its limit must not have been recorded, and
    every worker thread the campaign started (abandoned ones included) must end."""
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and len(ctx.late) < len(ctx.pending):
        time.sleep(0.01)
    time.sleep(0.05)
    for rig, did, tally in ctx.pending:
        record = rig.journal.get_many([did]).get(did)
        if record is None or record["failure_code"] != codes.PRODUCER_TIMED_OUT or record["intents"]:
            tally.isolated -= 1
            tally.note("answers_late: the late answer was recorded")
        rig.close()
    while time.monotonic() < deadline and _producer_threads() > baseline:
        time.sleep(0.01)
    if _producer_threads() > baseline and ctx.pending:
        tally = ctx.pending[0][2]
        tally.isolated -= 1
        tally.note(f"answers_late: {_producer_threads() - baseline} abandoned worker thread(s) outlive their producers")
    ctx.pending.clear()

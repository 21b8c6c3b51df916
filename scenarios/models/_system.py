"""One model run's system: the SUT (observed), the fake orchestrator around it, its no-hooks twin,
the scheduler downstream, and the interpreter for the action language.

Everything goes through a :class:`scenarios._world.World` and the functions in ``_actions``, i.e.
through the same code the Gherkin steps run, so a run can be written back as a scenario.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakes._orchestrator import PRIMARY_CRASH_POINTS
from fakes._packets import GENERIC_INTENT_KIND
from fakes._scheduler import FakeScheduler
from pwh._profile import Profile
from pwh._sut import SUT, Unsupported, load_sut

from .._world import World
from . import _actions as actions
from ._baseline import NoHooksTwin
from ._catalog import PERIODIC, PERIODIC_HOOK_ID, VERSIONED, HookSpec, spec_for
from ._observe import Call, Episode, ObservedSUT, final_records

SEGMENT_DEFAULT = 3  # World's default; the setup step changes it only when it differs


class ModelError(Exception):
    """The model could not run a step (not: the SUT broke a rule)."""


class CannotExpress(ModelError):
    """The SUT raised ``Unsupported`` half-way through a step that touches the primary Turn: the
    run cannot be judged past it (the case is reported as the adapter's limit, not as a finding)."""


# Steps an adapter may refuse as a whole (Unsupported before any effect): the run goes on.
REFUSABLE_OPS = frozenset({"setup", "install", "install_versioned", "install_periodic_report", "policy", "redeliver"})


class StepNotApplicable(ModelError):
    """A step that makes no sense in the current state (e.g. replaying writeback 3 of 2): a
    hand-edited or shrunk trace, never something the SUT did."""


@dataclass
class Stats:
    """What a model campaign exercised, summed over runs."""

    examples: int = 0
    steps: int = 0
    crashes_simulated: int = 0
    crashes_real: int = 0
    restarts: int = 0
    violations: int = 0

    def to_json(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass
class StepRecord:
    """What one step did, for the invariants."""

    index: int
    step: dict[str, Any]
    episodes: list[Episode] = field(default_factory=list)
    escaped: str | None = None  # an exception the Turn let through (type name only)
    crash_missed: str | None = None  # an armed crash point the SUT never reached
    rejected_install: str | None = None
    unsupported: str | None = None
    elapsed_ms: float = 0.0


def fast_tmp() -> str | None:
    """A memory-backed temp dir where the machine has one (stores come and go by the hundred)."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and shm.stat().st_mode & 0o002 else None


def open_sut(spec: str, workdir: Path, options: Mapping[str, Any], *, need_workdir: bool) -> SUT:
    """Load the adapter with its journal in ``workdir`` when its factory takes one."""
    tries = [{**options, "workdir": workdir}] + ([] if need_workdir else [dict(options), {}])
    for opts in tries[:-1]:
        try:
            return load_sut(spec, **opts)
        except TypeError:  # the factory takes no such option
            continue
    try:
        return load_sut(spec, **tries[-1])
    except TypeError:
        what = "a journal directory (real crashes need one)" if need_workdir else "these options"
        raise ModelError(f"SUT {spec!r} takes no {what}") from None


class ModelSystem:
    """Interprets steps against one SUT and keeps what the invariants need."""

    def __init__(
        self,
        sut_spec: str,
        *,
        sut_options: Mapping[str, Any] | None = None,
        real_crashes: bool = False,
        stats: Stats | None = None,
    ) -> None:
        self.sut_spec = sut_spec
        self.sut_options = dict(sut_options or {})
        self.stats = stats or Stats()
        self.root = Path(tempfile.mkdtemp(prefix="pwh-model-", dir=fast_tmp()))
        self.twin: NoHooksTwin | None = None
        try:
            inner = open_sut(sut_spec, self.root / "sut", self.sut_options, need_workdir=real_crashes)
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self.sut = ObservedSUT(inner, self._begin_episode)
        self.world = World(self.sut, self.root / "world")
        self.hooks: dict[str, HookSpec] = {}
        self.ceiling = Profile().max_intents_per_dispatch
        self.max_attempts = Profile().max_attempts
        self.segment = SEGMENT_DEFAULT
        self.episodes: list[Episode] = []
        self.calls: list[Call] = []
        self.steps: list[dict[str, Any]] = []
        self.unsupported: set[str] = set()
        self.scheduler = FakeScheduler(self.world.admission, self._reducers())

    # -- the interpreter ----------------------------------------------------------------------

    def apply(self, step: dict[str, Any]) -> StepRecord:
        """Run one step, then let the scheduler poll the journal (at-least-once delivery)."""
        self._check_applicable(step)
        record = StepRecord(len(self.steps), dict(step))
        self.steps.append(dict(step))
        first_episode = len(self.episodes)
        started = time.monotonic()
        try:
            getattr(self, "_" + step["op"])(step, record)
        except Unsupported as exc:
            if step["op"] not in REFUSABLE_OPS:
                raise CannotExpress(f"{self.sut_spec} cannot express step {record.index} ({step['op']}): {exc.reason}") from None
            record.unsupported = exc.reason
            self.unsupported.add(step["op"])
        except (ModelError, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - whatever escaped into the primary Turn is the finding
            record.escaped = _compact(exc)
        record.elapsed_ms = (time.monotonic() - started) * 1000
        record.episodes = self.episodes[first_episode:]
        self.stats.steps += 1
        if record.escaped is None:
            self.scheduler.consume(self.world.orch.intent_receipts())
        return record

    def _check_applicable(self, step: dict[str, Any]) -> None:
        op = step["op"]
        if (op == "setup") != (not self.steps):
            raise StepNotApplicable("'setup' must be the first step, and only the first")
        if op in ("replay", "redeliver") and step["writeback"] > len(self.committed()):
            raise StepNotApplicable(f"there is no committed writeback number {step['writeback']}")
        if op in ("install", "install_versioned") and step["hook"] in self.hooks:
            raise StepNotApplicable(f"hook {step['hook']} is already installed")
        if op == "install_periodic_report" and PERIODIC_HOOK_ID in self.hooks:
            raise StepNotApplicable("the periodic-report capability is already installed")
        if op == "policy" and getattr(self.hooks.get(step["hook"]), "behaviour", None) != VERSIONED:
            raise StepNotApplicable(f"hook {step['hook']} has no policy version to move")
        if op == "crash" and step["point"] not in self.crash_points():
            raise StepNotApplicable(f"crash point {step['point']} is not reachable here")

    def crash_points(self) -> list[str]:
        """Points a crash step can die at now: the primary ones, and the SUT's own once some hook
        is installed (a sidecar point is reached only when a hook is dispatched)."""
        points = list(PRIMARY_CRASH_POINTS)
        if self.hooks:
            points += list(self.sut.crash_points)
        return points

    def _setup(self, step: dict[str, Any], record: StepRecord) -> None:
        self.segment = step["segment"]
        self.world.segment_size = self.segment
        self.twin = NoHooksTwin(self.root / "twin", seed=World.SEED, segment_size=self.segment)
        self.world.set_profile(phase_enabled=True)
        if step["ceiling"] is not None:  # a SUT that cannot take it raises Unsupported: the default stays
            self.world.set_profile(max_intents_per_dispatch=step["ceiling"])
            self.ceiling = step["ceiling"]

    def _install(self, step: dict[str, Any], record: StepRecord) -> None:
        rejected = actions.install_behaviour(self.world, step["hook"], step["behaviour"], on_call=self._on_call)
        self._installed(step["hook"], step["behaviour"], rejected, record)

    def _install_versioned(self, step: dict[str, Any], record: StepRecord) -> None:
        rejected = actions.install_versioned(self.world, step["hook"], step["version"], on_call=self._on_call)
        self._installed(step["hook"], VERSIONED, rejected, record)

    def _install_periodic_report(self, step: dict[str, Any], record: StepRecord) -> None:
        try:
            actions.install_periodic_report(self.world, on_call=self._on_call)
        except AssertionError as exc:
            record.rejected_install = str(exc)
            return
        self.hooks[PERIODIC_HOOK_ID] = spec_for(PERIODIC_HOOK_ID, PERIODIC)

    def _installed(self, hook_id: str, behaviour: str, rejected: list[Any], record: StepRecord) -> None:
        if rejected:
            record.rejected_install = f"hook {hook_id}: {rejected[0]}"
        else:
            self.hooks[hook_id] = spec_for(hook_id, behaviour)

    def _policy(self, step: dict[str, Any], record: StepRecord) -> None:
        actions.move_policy(self.world, step["hook"], step["version"])

    def _turn(self, step: dict[str, Any], record: StepRecord) -> None:
        self._twin().turn(step["action"])
        self.world.act(step["action"])

    def _replay(self, step: dict[str, Any], record: StepRecord) -> None:
        self._twin().replay(step["writeback"])
        actions.replay_writeback(self.world, step["writeback"])

    def _redeliver(self, step: dict[str, Any], record: StepRecord) -> None:
        actions.redeliver_writeback(self.world, step["writeback"])

    def _crash(self, step: dict[str, Any], record: StepRecord) -> None:
        point, action, twin = step["point"], step["action"], self._twin()
        if step["real"]:
            from ._realcrash import crash_in_child

            try:
                crash_in_child(self, point, action)
            except AssertionError:
                record.crash_missed = point
                return
            twin.crash(point, action)
            # The child used the orchestrator's ids and clock and died with them: take the twin's,
            # which followed the same script to the same primary moment.
            self.world.orch.ids = copy.deepcopy(twin.orch.ids)
            self.world.orch.clock = copy.deepcopy(twin.orch.clock)
            self.world.crashes.append(point)
            actions.restart(self.world)
            self.stats.crashes_real += 1
        else:
            twin.crash(point, action)
            turns = len(self.world.turns)
            try:
                self.world.act_crashing(action, point)
            except AssertionError:
                if len(self.world.turns) == turns:  # the Turn itself failed: not a missed crash
                    raise
                record.crash_missed = point  # the Turn completed without reaching the point
                return
            self.stats.crashes_simulated += 1
        twin.restart()
        self.stats.restarts += 1

    def _restart(self, step: dict[str, Any], record: StepRecord) -> None:
        self._twin().restart()
        actions.restart(self.world)
        self.stats.restarts += 1

    def _twin(self) -> NoHooksTwin:
        if self.twin is None:
            raise ModelError("the first step of a run must be 'setup'")
        return self.twin

    # -- what the SUT proxy and the producers report -------------------------------------------

    def _begin_episode(self, kind: str, source: Mapping[str, Any]) -> Episode:
        finals = final_records(self.sut.inner.journal_records())
        receipt_id = source.get("receipt_id") if isinstance(source, Mapping) else None
        event_kind = source.get("event_kind") if isinstance(source, Mapping) else None
        episode = Episode(kind, len(self.steps) - 1, receipt_id, event_kind, frozenset(self.hooks), finals)
        self.episodes.append(episode)
        return episode

    def _on_call(self, hook_id: str, hook_input: Mapping[str, Any], number: int, appending: bool) -> None:
        source = hook_input.get("source") or {}
        call = Call(hook_id, hook_input.get("dispatch_id"), source.get("receipt_id"), number, hook_input, appending)
        self.calls.append(call)
        episode = self.sut.current
        if episode is not None:
            episode.calls.append(call)

    def _reducers(self) -> dict[str, Any]:
        from pwh.capabilities.periodic_report import INTENT_KIND, TriggerReducer

        return {GENERIC_INTENT_KIND: lambda intent: {"noted": intent["intent_id"]}, INTENT_KIND: TriggerReducer().reduce}

    # -- reads for the invariants and the machine ----------------------------------------------

    def journal(self) -> list[dict[str, Any]]:
        return self.sut.inner.journal_records()

    def committed(self) -> list[dict[str, Any]]:
        return self.world.orch.receipts()

    def admitted(self, event_kind: str | None, installed: frozenset[str]) -> set[str]:
        return {h for h in installed if h in self.hooks and event_kind in self.hooks[h].event_kinds}

    def close(self) -> None:
        try:
            self.world.close()
        finally:
            if self.twin is not None:
                self.twin.close()
            shutil.rmtree(self.root, ignore_errors=True)


def _compact(exc: Exception) -> str:
    """An escaped exception, public-safe: its type, plus the expected/seen pair when pwh wrote one
    (an adapter's reported divergence); never the raw text of anything else."""
    expected, seen = getattr(exc, "expected", None), getattr(exc, "seen", None)
    if isinstance(expected, str) and isinstance(seen, str):
        return f"{type(exc).__name__} (expected: {expected[:200]}; seen: {seen[:200]})"
    return type(exc).__name__

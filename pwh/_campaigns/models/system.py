"""One model run's system: the SUT (observed), the fake orchestrator around it, its no-hooks twin,
the scheduler downstream, and the interpreter for the action language.

Everything goes through a :class:`fakes._world.World` and the functions in ``_actions``, i.e.
through the same code the Gherkin steps run, so a run can be written back as a scenario.
"""

from __future__ import annotations

import contextlib
import copy
import operator
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakes import _actions as actions
from fakes._baseline import NoHooksSUT
from fakes._orchestrator import (
    PRIMARY_AFTER_DISPATCH,
    PRIMARY_CRASH_POINTS,
    FakeOrchestrator,
)
from fakes._packets import GENERIC_INTENT_KIND
from fakes._scheduler import FakeScheduler
from fakes._world import MemoryCallLog, VirtualFlag, World
from pwh import SUT, Profile, SimulatedCrash, Unsupported, canonical_bytes, load_sut
from pwh._campaigns.models.catalog import PERIODIC, PERIODIC_HOOK_ID, VERSIONED, HookSpec, spec_for
from pwh._campaigns.models.errors import CannotExpress, ModelError, StepNotApplicable
from pwh._campaigns.models.language import DUPLICATE
from pwh._campaigns.models.observe import Call, Episode, ObservedSUT, final_records
from pwh._core.simulated_runner import SimulatedRunner
from pwh._harness.interrupt import raise_if_interrupted
from pwh._harness.paths import fast_tmp

# The no-hooks twin: the same action script on an orchestrator whose SUT has no hooks at all.
# After every step the hooked run's primary store must equal the twin's byte for byte (M07). A
# crash keeps the comparison meaningful by crashing the twin at the *primary* moment the hooked run
# died: a primary point is the same point; a sidecar point dies inside the dispatch, after the
# writeback committed and before the spend, which for a twin is ``primary.after_dispatch``.


def twin_point(point: str) -> str:
    """The primary crash point a no-hooks run dies at when the hooked run dies at ``point``."""
    return point if point in PRIMARY_CRASH_POINTS else PRIMARY_AFTER_DISPATCH


class NoHooksTwin:
    """Follows the model's steps on the primary side only."""

    def __init__(self, workdir: Path, *, seed: int, segment_size: int) -> None:
        # Its primary store in memory: nothing but this object reads it, and every crash of the
        # twin is simulated in this process (a restart rolls back what was not committed).
        self.orch = FakeOrchestrator(NoHooksSUT(), workdir, seed=seed, segment_size=segment_size, in_memory=True)

    def turn(self, action: str) -> None:
        getattr(self.orch, action)()

    def replay(self, n: int) -> None:
        receipts = self.orch.receipts()
        if 1 <= n <= len(receipts):
            self.orch.replay(receipts[n - 1]["turn_instance_id"])

    def crash(self, point: str, action: str) -> bool:
        """Run ``action`` dying at the twin of ``point``; ``False`` if it did not die."""
        self.orch.arm_crash(twin_point(point))
        try:
            self.turn(action)
        except SimulatedCrash:
            return True
        return False

    def restart(self) -> None:
        self.orch.restart()

    def snapshot(self) -> bytes:
        return self.orch.primary_snapshot()

    def close(self) -> None:
        self.orch.close()


SEGMENT_DEFAULT = 3  # World's default; the setup step changes it only when it differs


# Steps an adapter may refuse as a whole (Unsupported before any effect): the run goes on.
REFUSABLE_OPS = frozenset(
    {"setup", "install", "install_versioned", "install_periodic_report", "policy", "redeliver", "profile", "bad_register"}
)


@dataclass
class Stats:
    """What a model campaign exercised, summed over runs."""

    examples: int = 0
    steps: int = 0
    crashes_simulated: int = 0
    crashes_real: int = 0
    restarts: int = 0
    violations: int = 0
    hooks_timed_out: int = 0  # hook outcomes producer_timed_out: what the timeout paths were given

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
    bad_install: list[Any] | None = None  # a bad registration's rejections (empty: it was accepted)
    journal_before: list[bytes] | None = None  # the journal's records before a step that must change none


def open_sut(spec: str, workdir: Path, options: Mapping[str, Any], *, need_workdir: bool, runner: Any = None) -> SUT:
    """Load the adapter with its journal in ``workdir`` when its factory takes one (and the given
    ``runner`` when it takes one: :func:`takes_runner` says whether it did)."""
    tries = [{**options, "workdir": workdir}] + ([] if need_workdir else [dict(options), {}])
    if runner is not None:  # each set of options first with the runner, then without
        tries = [t for opts in tries for t in ({**opts, "runner": runner}, opts)]
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


def takes_runner(sut: Any, runner: Any) -> bool:
    """Whether ``sut`` calls its providers on ``runner`` (the adapter's factory took it)."""
    return getattr(getattr(sut, "dispatcher", None), "runner", None) is runner


class ModelSystem:
    """Interprets steps against one SUT and keeps what the invariants need."""

    def __init__(
        self,
        sut_spec: str,
        *,
        sut_options: Mapping[str, Any] | None = None,
        real_crashes: bool = False,
        stats: Stats | None = None,
        simulated: bool = False,
    ) -> None:
        self.sut_spec = sut_spec
        self.sut_options = dict(sut_options or {})
        self.stats = stats or Stats()
        self.root = Path(tempfile.mkdtemp(prefix="pwh-model-", dir=fast_tmp()))
        self.twin: NoHooksTwin | None = None
        # Simulation mode: providers run on a virtual-time runner (a hung one is timed out the
        # moment the simulated clock reaches its limit, with no real waiting). Only a SUT whose
        # factory takes the runner is simulated; any other runs its own runner in real time.
        runner = SimulatedRunner() if simulated and not real_crashes else None
        try:
            inner = open_sut(sut_spec, self.root / "sut", self.sut_options, need_workdir=real_crashes, runner=runner)
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self.simulated = runner is not None and takes_runner(inner, runner)
        self.now: Callable[[], float] = runner.clock.now if runner is not None and self.simulated else time.monotonic
        self.sut = ObservedSUT(inner, self._begin_episode, self._drain_calls, clock=self.now)
        self.world = World(self.sut, self.root / "world")
        if runner is not None and self.simulated:  # every provider runs in this process, on the virtual clock
            self.world.release = VirtualFlag(runner.clock)
            self.world.log = MemoryCallLog()
            # and every crash is simulated here: the primary store needs no file (no other
            # process opens it), as the twin's does not
            self.world.primary_in_memory = True
        # Crashes simulated in this process: a restart rolls back the primary store's uncommitted
        # transaction and keeps its connection (FakeOrchestrator.keep_connection). A real crash
        # (a killed child) is followed by the usual reopening.
        self.world.restart_keeps_connection = not real_crashes
        self._calls_seen = 0  # entries of the world's call log already turned into Calls
        self._calls_counted = 0  # entries of the call log counted in _calls_per_hook
        self._calls_per_hook: dict[str, int] = {}
        self._committed: tuple[Any, list[dict[str, Any]]] | None = None
        # The journal the last episode began with, and what it noted of it (_journal_at_start).
        self._journal_noted: tuple[list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, int], frozenset[str]] | None = None
        self.hooks: dict[str, HookSpec] = {}
        self.ceiling = Profile().max_intents_per_dispatch
        self.max_attempts = Profile().max_attempts
        self.timeout_cap = Profile().budget_ceilings["timeout_ms"]
        self.bad_calls: list[str] = []  # hook ids whose bad registration's provider was called
        # Hooks a bad registration installed that only pwh's rules reject (a profile divergence,
        # ``registration_rules``): the SUT runs them, pwh's oracle cannot predict them.
        self.foreign: set[str] = set()
        self.mismatched: set[str] = set()  # committed receipts of another plan's effect: never dispatched
        self.segment = SEGMENT_DEFAULT
        self.episodes: list[Episode] = []
        self.calls: list[Call] = []
        self.steps: list[dict[str, Any]] = []
        self.unsupported: set[str] = set()
        self.scheduler = FakeScheduler(self.world.admission, self._reducers())

    # -- the interpreter ----------------------------------------------------------------------

    def apply(self, step: dict[str, Any]) -> StepRecord:
        """Run one step, then let the scheduler poll the journal (at-least-once delivery)."""
        raise_if_interrupted()  # a Ctrl-C whose own KeyboardInterrupt was dropped (a gc callback)
        self._check_applicable(step)
        record = StepRecord(len(self.steps), dict(step))
        self.steps.append(dict(step))
        first_episode = len(self.episodes)
        started = self.now()
        try:
            getattr(self, "_" + step["op"])(step, record)
        except Unsupported as exc:
            if step["op"] not in REFUSABLE_OPS:
                raise CannotExpress(f"{self.sut_spec} cannot express step {record.index} ({step['op']}): {exc.reason}") from None
            record.unsupported = exc.reason
            self.unsupported.add(step["op"])
        except (ModelError, KeyboardInterrupt):
            raise
        except Exception as exc:
            record.escaped = _compact(exc)
        record.elapsed_ms = (self.now() - started) * 1000
        record.episodes = self.episodes[first_episode:]
        self.stats.steps += 1
        self.stats.hooks_timed_out += sum(
            1 for e in record.episodes if e.outcome is not None for h in e.outcome.hooks if h.failure_code == "producer_timed_out"
        )
        if record.escaped is None:
            # with pwh's in-memory journal, an intent delivered again is the very object it was (records_shared)
            self.scheduler.consume(self.world.orch.intent_receipts(), shared=self.sut.records_shared())
        return record

    def _check_applicable(self, step: dict[str, Any]) -> None:
        op = step["op"]
        if (op == "setup") != (not self.steps):
            raise StepNotApplicable("'setup' must be the first step, and only the first")
        if op in ("replay", "redeliver") and step["writeback"] > len(self.committed()):
            raise StepNotApplicable(f"there is no committed writeback number {step['writeback']}")
        if op in ("install", "install_versioned") and (step["hook"] in self.hooks or step["hook"] in self.foreign):
            raise StepNotApplicable(f"hook {step['hook']} is already installed")
        if op == "install_periodic_report" and PERIODIC_HOOK_ID in self.hooks:
            raise StepNotApplicable("the periodic-report capability is already installed")
        if op == "policy" and getattr(self.hooks.get(step["hook"]), "behaviour", None) != VERSIONED:
            raise StepNotApplicable(f"hook {step['hook']} has no policy version to move")
        if op == "bad_register" and (step["flaw"] == DUPLICATE) != (step["hook"] in self.hooks):
            raise StepNotApplicable("a second registration needs an installed hook, any other flaw a free hook id")
        if op == "crash" and step["point"] not in self.crash_points():
            raise StepNotApplicable(f"crash point {step['point']} is not reachable here")

    def crash_points(self) -> list[str]:
        """Points a crash step can die at now: the primary ones, and the SUT's own once some hook
        is installed, admitted by the profile and under its ceilings (a sidecar point is reached only
        when a hook is dispatched)."""
        points = list(PRIMARY_CRASH_POINTS)
        profile = self.world.profile
        if profile.phase_enabled and any(profile.admits(h) and s.timeout_ms <= self.timeout_cap for h, s in self.hooks.items()):
            points += list(self.sut.crash_points)
        return points

    def _setup(self, step: dict[str, Any], record: StepRecord) -> None:
        self.segment = step["segment"]
        self.world.segment_size = self.segment
        self.twin = NoHooksTwin(self.root / "twin", seed=World.SEED, segment_size=self.segment)
        self.world.set_profile(phase_enabled=True)
        if step["ceiling"] is not None:  # a SUT that cannot take it raises Unsupported: the default stays
            with self._kept_if_refused():
                self.world.set_profile(max_intents_per_dispatch=step["ceiling"])
            self.ceiling = step["ceiling"]

    def _install(self, step: dict[str, Any], record: StepRecord) -> None:
        rejected = actions.install_behaviour(self.world, step["hook"], step["behaviour"], on_call=None)
        self._installed(step["hook"], step["behaviour"], rejected, record)

    def _install_versioned(self, step: dict[str, Any], record: StepRecord) -> None:
        rejected = actions.install_versioned(self.world, step["hook"], step["version"], on_call=None)
        self._installed(step["hook"], VERSIONED, rejected, record)

    def _install_periodic_report(self, step: dict[str, Any], record: StepRecord) -> None:
        spec = spec_for(PERIODIC_HOOK_ID, PERIODIC)
        over = spec.timeout_ms > self.timeout_cap
        try:
            actions.install_periodic_report(self.world, on_call=None)
        except AssertionError as exc:
            if over:
                record.bad_install = [str(exc)]
            else:
                record.rejected_install = str(exc)
            return
        if over:
            record.bad_install = []
        self.hooks[PERIODIC_HOOK_ID] = spec

    def _installed(self, hook_id: str, behaviour: str, rejected: list[Any], record: StepRecord) -> None:
        spec = spec_for(hook_id, behaviour)
        over = spec.timeout_ms > self.timeout_cap  # the profile lowered the ceiling under it: a bad registration now
        if over:
            record.bad_install = list(rejected)
            if not rejected:
                self.hooks[hook_id] = spec
        elif rejected:
            record.rejected_install = f"hook {hook_id}: {rejected[0]}"
        else:
            self.hooks[hook_id] = spec

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
            from pwh._campaigns.models.realcrash import crash_in_child

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

    def _bad_receipt(self, step: dict[str, Any], record: StepRecord) -> None:
        if step["flaw"] == "effect_mismatch":  # the orchestrator commits it: the twin does the same
            from fakes._orchestrator import completion_output

            self._twin().orch.run_turn(completion_output(), plan_effect_id=actions.EFFECT_OF_ANOTHER_PLAN)
        record.journal_before = [canonical_bytes(r) for r in self.journal()]
        result = actions.offer_bad_receipt(self.world, step["flaw"])
        receipt = getattr(result, "receipt", None)
        if step["flaw"] == "effect_mismatch" and isinstance(receipt, Mapping) and receipt.get("receipt_id"):
            self.mismatched.add(receipt["receipt_id"])

    def _bad_register(self, step: dict[str, Any], record: StepRecord) -> None:
        hook_id = step["hook"]
        record.journal_before = [canonical_bytes(r) for r in self.journal()]

        def never(hook_input: Mapping[str, Any]) -> Any:
            self.bad_calls.append(hook_id)
            raise RuntimeError("a rejected registration's provider was called")

        record.bad_install = list(actions.register_bad(self.world, hook_id, step["flaw"], never))
        if not record.bad_install and step["flaw"] != DUPLICATE:
            self.foreign.add(hook_id)  # installed after all: a hook of the SUT's the model does not know

    def _profile(self, step: dict[str, Any], record: StepRecord) -> None:
        setting, value = step["setting"], step["value"]
        with self._kept_if_refused():
            actions.change_profile(self.world, setting, value)
        if setting == "ceiling":
            self.ceiling = value
        elif setting == "attempts":
            self.max_attempts = value
        elif setting == "timeout_cap":
            self.timeout_cap = value

    @contextlib.contextmanager
    def _kept_if_refused(self) -> Iterator[None]:
        """A profile the SUT refuses (``Unsupported``) is not in force: the world's profile, which
        the invariants read as the one each dispatch began under, goes back to what it was."""
        before = self.world.profile
        try:
            yield
        except Unsupported:
            self.world.profile = before
            raise

    def _twin(self) -> NoHooksTwin:
        if self.twin is None:
            raise ModelError("the first step of a run must be 'setup'")
        return self.twin

    # -- what the SUT proxy and the producers report -------------------------------------------

    def _begin_episode(self, kind: str, source: Mapping[str, Any]) -> Episode:
        records = self.sut.journal_records()
        finals, attempts, ids = self._journal_at_start(records)
        receipt_id = source.get("receipt_id") if isinstance(source, Mapping) else None
        event_kind = source.get("event_kind") if isinstance(source, Mapping) else None
        episode = Episode(kind, len(self.steps) - 1, receipt_id, event_kind, frozenset(self.hooks), finals)
        episode.profile = self.world.profile
        episode.attempts_at_start = attempts
        episode.ids_at_start = ids
        self.episodes.append(episode)
        return episode

    def _journal_at_start(self, records: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, int], frozenset[str]]:
        """What an episode notes of the journal as it begins: its final records, each record's
        attempts, and the dispatch ids. Each episode gets dicts of its own; when the journal's
        records are the very objects the last episode saw (``ObservedSUT.records_shared``: such a
        record keeps its content), that episode's are copied rather than read again."""
        kept = self._journal_noted
        if kept is not None and self.sut.records_shared() and len(kept[0]) == len(records) and all(map(operator.is_, kept[0], records)):
            return dict(kept[1]), dict(kept[2]), kept[3]
        finals = final_records(records)
        attempts = {r["dispatch_id"]: r.get("attempts", 0) for r in records}
        ids = frozenset(r["dispatch_id"] for r in records)
        self._journal_noted = (records, dict(finals), dict(attempts), ids)
        return finals, attempts, ids

    def _drain_calls(self) -> None:
        """The provider calls the world's log holds that this model has not seen yet, in order
        (providers may run in the reference's worker process, where no model object is)."""
        calls = self.world.log.calls()
        counts = self._calls_per_hook
        for entry in calls[self._calls_counted : self._calls_seen]:  # merged by a real-crash child
            counts[entry["h"]] = counts.get(entry["h"], 0) + 1
        for entry in calls[self._calls_seen :]:
            self._calls_seen += 1
            number = counts[entry["h"]] = counts.get(entry["h"], 0) + 1  # its calls so far, this one too
            self._on_call(entry["h"], entry["i"], number, entry["r"])
        self._calls_counted = self._calls_seen

    def _on_call(self, hook_id: str, hook_input: Mapping[str, Any], number: int, appending: bool) -> None:
        source = hook_input.get("source") or {}
        call = Call(hook_id, hook_input.get("dispatch_id"), source.get("receipt_id"), number, hook_input, appending, _bytes_of(source))
        self.calls.append(call)
        episode = self.sut.current
        if episode is not None:
            episode.calls.append(call)

    def _reducers(self) -> dict[str, Any]:
        from pwh.capabilities.periodic_report import INTENT_KIND, TriggerReducer

        return {GENERIC_INTENT_KIND: lambda intent: {"noted": intent["intent_id"]}, INTENT_KIND: TriggerReducer().reduce}

    # -- reads for the invariants and the machine ----------------------------------------------

    def journal(self) -> list[dict[str, Any]]:
        return self.sut.journal_records()

    def committed(self) -> list[dict[str, Any]]:
        """The committed primary receipts, in commit order (read again only when the primary store
        may have changed: the preconditions and the invariants ask several times a step). A new
        list each time; the receipts in it are shared and only read."""
        store = self.world.orch.store
        key = store.state_key()
        if self._committed is None or self._committed[0] != key:
            self._committed = (key, self.world.orch.receipts())
        return list(self._committed[1])

    def admitted(self, event_kind: str | None, installed: frozenset[str], profile: Profile | None = None) -> set[str]:
        """The installed hooks a dispatch must report: its event kind, and the profile's allowlist."""
        allow = profile.allowlist if profile is not None else None
        return {h for h in installed if h in self.hooks and event_kind in self.hooks[h].event_kinds and (allow is None or h in allow)}

    def close(self) -> None:
        try:
            self.world.close()
        finally:
            if self.twin is not None:
                self.twin.close()
            shutil.rmtree(self.root, ignore_errors=True)


def _bytes_of(value: Any) -> bytes:
    try:
        return canonical_bytes(value)
    except Exception:
        return repr(value).encode()


def _compact(exc: Exception) -> str:
    """An escaped exception, public-safe: its type, plus the expected/seen pair when pwh wrote one
    (an adapter's reported divergence); never the raw text of anything else."""
    expected, seen = getattr(exc, "expected", None), getattr(exc, "seen", None)
    if isinstance(expected, str) and isinstance(seen, str):
        return f"{type(exc).__name__} (expected: {expected[:200]}; seen: {seen[:200]})"
    return type(exc).__name__

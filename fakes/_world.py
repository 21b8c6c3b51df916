"""One scenario's world: the SUT under test, the fake orchestrator around it, the scheduler, the
sink, the network guard, and what every hook saw. Steps read and change only this.

The world reaches the implementation through the SUT seam alone. For the 'primary unchanged'
checks it replays the scenario's Turn script against a fresh orchestrator with no hooks at all
and compares the primary store byte for byte.
"""

from __future__ import annotations

import copy
import json
import mmap
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fakes._baseline import NoHooksSUT
from fakes._behaviours import BEHAVIOURS, CallContext
from fakes._errors import FakeRejected
from fakes._orchestrator import FakeOrchestrator, TurnResult
from fakes._packets import (
    GENERIC_INTENT_KIND,
    TEST_INTENT_KINDS,
    id_recipes_of,
    reference_keyed,
    registration,
    rekeyed,
    using_id_recipes,
)
from fakes._scheduler import FakeScheduler, GovernedAdmission
from fakes._sink import FakeSink
from fakes._turn import TestbedTurn
from fakes._writeback import ReferenceWriteback
from pwh import (
    CanonicalError,
    DispatchOutcome,
    Profile,
    Rejection,
    SimulatedCrash,
    Unsupported,
    turn_contracts_of,
)
from pwh._core.canonical import MAX_DEPTH, to_plain
from pwh._harness.expect import Ledger, expect, pop_ledger, push_ledger
from pwh._suts.reference import ReferenceSUT
from pwh._suts.writeback_seam import writeback_boundary_of

_ACTIVE: list[World] = []


def active_sinks() -> list[FakeSink]:
    """The effect targets of the running scenario. Only a deliberately broken adapter looks."""
    return [w.sink for w in _ACTIVE]


class SharedFlag:
    """A latch that works across ``fork``: one byte of anonymous shared memory, made before any
    provider worker is forked, so a provider running in the reference's worker process sees the
    scenario set it (a ``threading.Event`` would be the worker's own copy). A killed worker cannot
    leave it locked: there is no lock. Waiting polls every millisecond."""

    def __init__(self) -> None:
        self._mem = mmap.mmap(-1, 1)

    def set(self) -> None:
        self._mem[0] = 1

    def clear(self) -> None:
        self._mem[0] = 0

    def is_set(self) -> bool:
        return self._mem[0] == 1

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._mem[0] != 1:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.001)
        return True


class VirtualFlag:
    """The release latch in the models' simulation mode: waiting on it moves the simulated
    provider's :class:`pwh._core.simulated_runner.VirtualClock` instead of the wall clock, so a
    hung provider is stopped the moment the clock reaches its limit (``VirtualTimeout``), a
    provider that pauses moves the clock by its pause, and a busy loop moves it a millisecond per
    look. Set (the scenario's end), it releases every waiter at once, as :class:`SharedFlag` does."""

    def __init__(self, clock: Any) -> None:
        self._clock = clock
        self._set = False

    def set(self) -> None:
        self._set = True

    def clear(self) -> None:
        self._set = False

    def is_set(self) -> bool:
        if not self._set:
            self._clock.tick()
        return self._set

    def wait(self, timeout: float | None = None) -> bool:
        if not self._set:
            self._clock.sleep(float("inf") if timeout is None else timeout * 1000.0)
        return self._set


class CallLog:
    """What providers saw, recorded by the providers themselves in whatever process they run (the
    host for the thread runner, a forked worker for the reference's default process runner): one
    JSON line per event appended to a file in the scenario's directory, with one ``write`` each
    (``O_APPEND``). A worker killed mid-call has already written its line; the host reads the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
        self._read: tuple[int, list[Any]] = (0, [])  # (bytes parsed, entries)
        self._calls: tuple[int, list[dict[str, Any]]] = (0, [])  # (entries looked at, the calls among them)

    def note(self, entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, sort_keys=True, default=_unjson) + "\n").encode("utf-8", "surrogatepass")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def entries(self) -> list[dict[str, Any]]:
        size = self.path.stat().st_size
        done, entries = self._read
        if size != done:
            with open(self.path, "rb") as handle:
                handle.seek(done)
                chunk = handle.read(size - done)
            complete = chunk[: chunk.rfind(b"\n") + 1]
            entries = entries + [json.loads(line) for line in complete.splitlines() if line]
            self._read = (done + len(complete), entries)
        return self._read[1]

    def calls(self, hook_id: str | None = None) -> list[dict[str, Any]]:
        entries = self.entries()
        if hook_id is not None:
            return [e for e in entries if e["e"] == "call" and e["h"] == hook_id]
        seen, calls = self._calls
        if seen != len(entries):  # entries only grow: only the new ones are looked at
            calls = calls + [e for e in entries[seen:] if e["e"] == "call"]
            self._calls = (len(entries), calls)
        return calls

    def answers(self, hook_id: str) -> list[Any]:
        return [e["v"] for e in self.entries() if e["e"] == "answer" and e["h"] == hook_id]


class MemoryCallLog(CallLog):
    """The call log of a world whose providers all run in its own process (the models'
    simulation mode): the same entries, each made JSON and read back as the file's would be,
    kept in a list instead of appended to a file."""

    def __init__(self) -> None:
        self._entries: list[Any] = []
        self._calls = (0, [])
        self._by_hook: dict[Any, list[dict[str, Any]]] = {}  # hook id -> its call entries, in order

    def note(self, entry: dict[str, Any]) -> None:
        try:
            kept = _as_read_back(entry, 0)
        except _Unsure:
            line = json.dumps(entry, sort_keys=True, default=_unjson).encode("utf-8", "surrogatepass")
            kept = json.loads(line)
        self._entries = self._entries + [kept]  # a new list: one read earlier stays as it was
        if kept["e"] == "call":
            self._by_hook.setdefault(kept["h"], []).append(kept)

    def entries(self) -> list[dict[str, Any]]:
        return self._entries

    def calls(self, hook_id: str | None = None) -> list[dict[str, Any]]:
        if hook_id is None:
            return super().calls()
        return list(self._by_hook.get(hook_id, ()))  # what CallLog.calls filters out of every entry, kept as noted


def _unjson(value: Any) -> Any:
    raise TypeError("not JSON")


class _Unsure(Exception):
    """Raised by :func:`_as_read_back` on anything but a plain tree: the JSON round trip decides."""


def _as_read_back(value: Any, depth: int) -> Any:
    """What a file log's line gives back for ``value`` (``json.loads(json.dumps(value,
    sort_keys=True))``), for a plain tree: exact dicts with exact string keys (each read back with
    its keys sorted), lists and tuples (read back as lists), and strings, integers, floats,
    booleans and None (read back equal). Anything else, or a tree deeper than the canonical form
    allows (a cycle too), raises :class:`_Unsure`, and the round trip itself says what it gives
    (or that it refuses)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None or (kind is float and value == value):
        return value  # a NaN is read back as another NaN object, which compares differently in a container
    if depth >= MAX_DEPTH:
        raise _Unsure
    if kind is dict:
        for key in value:
            if type(key) is not str:
                raise _Unsure
        return {key: _as_read_back(value[key], depth + 1) for key in sorted(value)}
    if kind is list or kind is tuple:
        return [_as_read_back(item, depth + 1) for item in value]
    raise _Unsure


def json_view(value: Any, _depth: int = 0) -> Any:
    """``value`` with its read-only containers made plain: any ``collections.abc.Mapping``
    (``types.MappingProxyType``, a frozen mapping of the implementation's own) becomes a ``dict``
    and any ``Sequence`` but text and bytes (a tuple) a ``list``, all the way down. RFC §7 asks for
    an *immutable* input; how an implementation freezes it is its own business, so what a provider
    was handed is read through these interfaces, never by its concrete types. Leaves are left as
    they are (:func:`input_as_json` then refuses what is not JSON), and so is anything nested
    deeper than the canonical form allows (refused there too, without unbounded recursion)."""
    if _depth > MAX_DEPTH:
        return value
    kind = type(value)  # the usual shapes first, by exact type: what the interfaces below do with them, without their checks
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return value
    if kind is dict or kind is MappingProxyType:
        return {key: json_view(item, _depth + 1) for key, item in value.items()}
    if kind is tuple or kind is list:
        return [json_view(item, _depth + 1) for item in value]
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return value
    if isinstance(value, Mapping):
        return {key: json_view(item, _depth + 1) for key, item in value.items()}
    if isinstance(value, Sequence):
        return [json_view(item, _depth + 1) for item in value]
    return value


def input_as_json(hook_input: Any) -> Any:
    """A hook input as plain JSON values (:func:`json_view`, then the canonical copy); raises
    :class:`CanonicalError` naming the JSON path of a value that is not JSON."""
    return to_plain(json_view(hook_input))


def _plain_input(hook_input: Any) -> tuple[Any, str | None]:
    """What a provider was handed, as plain JSON, and ``None``; or ``{}`` and why it could not be
    read (a JSON path and pwh's reason, or the exception reading it raised: never a value)."""
    try:
        return input_as_json(hook_input), None
    except CanonicalError as exc:
        return {}, str(exc)
    except Exception as exc:  # the implementation's own mapping raised while it was read
        return {}, f"$: reading it raised {type(exc).__name__}"


class HookProbe:
    """One scripted hook: its behaviour and everything the harness saw of its calls (read from the
    world's :class:`CallLog`, so it is the same whichever process the provider ran in)."""

    def __init__(self, hook_id: str, behaviour: str, log: CallLog | None = None) -> None:
        self.hook_id = hook_id
        self.behaviour = behaviour
        self.log = log
        self._base = 0  # calls made before this world's log began (a model's real-crash child)
        self.token = id(self)  # marks this installation's calls in the log (another may share its hook_id)

    def _calls(self) -> list[dict[str, Any]]:
        return self.log.calls(self.hook_id) if self.log is not None else []

    @property
    def own_calls(self) -> int:
        """Calls of this installation's producer alone (a rejected duplicate shares its hook_id)."""
        return sum(1 for c in self._calls() if c.get("t") == self.token)

    @property
    def calls(self) -> int:
        return self._base + len(self._calls())

    @calls.setter
    def calls(self, value: int) -> None:
        self._base = value - len(self._calls())

    @property
    def inputs(self) -> list[Mapping[str, Any]]:
        """What the provider was handed on each call, as plain JSON. An input that could not be
        read as JSON values fails the check reading it here, with the path and the reason, rather
        than as a check of its fields that would only see them missing."""
        calls = self._calls()
        for c in calls:
            if c.get("u"):
                expect(
                    False,
                    f"hook {self.hook_id} handed an input readable as JSON values (objects as any Mapping with string keys, "
                    "arrays as any Sequence, strings, 64-bit integers, finite numbers, booleans, null)",
                    f"an input that is not JSON at {c['u']}",
                    rfc="§7.immutable-input",
                )
        return [c["i"] for c in calls]

    @property
    def called_during_rollout_append(self) -> bool:
        return any(c["r"] for c in self._calls())


# The seam calls whose normal return is an answer of the implementation a check can judge
# (set_profile, arm_crash, inject_fault and close return nothing to judge).
ANSWERING_CALLS = frozenset({"install", "register_intent_kind", "dispatch", "redeliver", "restart", "journal_records"})


class SeamRecorder:
    """The SUT as the world hands it on: every call passes straight through, and the recorder
    notes which seam methods were reached and which answered, so the gate can tell a scenario that
    judged the implementation from one that only exercised pwh's fakes."""

    def __init__(self, sut: Any, inside_append: Callable[[], bool] | None = None, flag: SharedFlag | None = None) -> None:
        self._sut = sut
        self.reached: set[str] = set()
        self.answered: set[str] = set()
        self._inside_append = inside_append
        self._flag = flag

    @property
    def wrapped(self) -> Any:
        return self._sut

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._sut, name)
        if name.startswith("_") or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.reached.add(name)
            # Whether this seam call runs inside the orchestrator's rollout-event append, mirrored
            # where a provider in a worker process can read it.
            inside = self._inside_append is not None and self._flag is not None and self._inside_append()
            if inside:
                self._flag.set()  # type: ignore[union-attr]
            try:
                result = attr(*args, **kwargs)
            finally:
                if inside:
                    self._flag.clear()  # type: ignore[union-attr]
            if name in ANSWERING_CALLS:
                self.answered.add(name)
            return result

        return call


class TurnSeamRecorder:
    """The SUT's turn seam as the world hands it on, noting which operations answered (a
    normal return; an ``Unsupported`` or any failure is not an answer)."""

    def __init__(self, contracts: Any) -> None:
        self._contracts = contracts
        self.name = contracts.name
        self.operations = frozenset(contracts.operations)
        self.reached: set[str] = set()
        self.answered: set[str] = set()

    def register_provider(self, provider_id: str, flags: Mapping[str, bool]) -> Any:
        return self._answer("register_provider", provider_id, flags)

    def build_host_request(self, plan: Mapping[str, Any]) -> Any:
        return self._answer("build_host_request", plan)

    def accept_host_output(self, plan: Mapping[str, Any], raw: bytes) -> Any:
        return self._answer("accept_host_output", plan, raw)

    def _answer(self, operation: str, *args: Any) -> Any:
        self.reached.add(operation)
        result = getattr(self._contracts, operation)(*args)
        self.answered.add(operation)
        return result


# The writeback-seam calls whose normal return is an answer a check can judge.
WRITEBACK_ANSWERS = frozenset(
    {
        "install",
        "register_intent_kind",
        "commit_completion",
        "commit_replan",
        "replay",
        "primary_receipt",
        "spend_eligibility",
        "sidecar_records",
        "intent_receipts",
        "hooks_seen",
    }
)


class WritebackRecorder:
    """The implementation's writeback boundary as the world hands it on (every call passes
    straight through), noting which operations were reached and which answered."""

    def __init__(self, boundary: Any) -> None:
        self._boundary = boundary
        self.reached: set[str] = set()
        self.answered: set[str] = set()

    @property
    def wrapped(self) -> Any:
        return self._boundary

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._boundary, name)
        if name.startswith("_") or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.reached.add(name)
            result = attr(*args, **kwargs)
            if name in WRITEBACK_ANSWERS:
                self.answered.add(name)
            return result

        return call


def is_reference(sut: Any) -> bool:
    """Whether ``sut`` is pwh's reference dispatcher (or a mutant of it), whose primary path is
    pwh's fake orchestrator: the writeback scenarios then use the reference's boundary. By type,
    never by name: an adapter calling itself "reference" (or one behind the stdio protocol) is
    judged at the wiring it offers, or not at all."""
    return isinstance(sut, ReferenceSUT)


# The clauses a refused receipt is judged by when a scenario names none (§5.1 and its row, M03).
INADMISSIBLE_CLAUSES: tuple[str, ...] = ("§5.1.identity", "§5.1.same-effect", "§5.1.committed", "§5.1.durable", "§12.M03")


@dataclass
class Notes:
    """What one step tells a later step of the same scenario, typed: the rejection a Given step
    expects, what a host or provider step answered, the limit scenarios' own state."""

    expected_rejection_path: str | None = None
    expected_rejection_clause: str | tuple[str, ...] | None = None
    inadmissible_clause: str | tuple[str, ...] | None = INADMISSIBLE_CLAUSES
    kind_rejections: list[Rejection] = field(default_factory=list)
    offered_rejections: list[Rejection] = field(default_factory=list)
    long_hook_id: str | None = None
    limits: dict[str, Any] | None = None
    host_request: Any = None
    host_request_about: Any = None
    host_error: FakeRejected | None = None
    provider_registry: Any = None
    provider_answer: Any = None
    provider_about: Any = None
    provider_error: FakeRejected | None = None
    rec_sink: Any = None
    rec_ticket: Any = None
    rec_crashed: bool = False
    rec_retried: int = 0


class World:
    SEED = 7

    def __init__(self, sut: Any, workdir: Path, *, turn_seam: bool = False) -> None:
        # A seed-003 scenario reaches the SUT's turn seam when it offers one (else the testbed's).
        contracts = turn_contracts_of(sut) if turn_seam else None
        self.turn_seam = TurnSeamRecorder(contracts) if contracts is not None else None
        self.notes = Notes()
        # The test producers compute identities with the SUT's own recipes when it offers them.
        self.id_recipes = id_recipes_of(sut)
        self._kinds_registered: set[str] = set()
        self._testbed_turn = TestbedTurn()
        self._appending = SharedFlag()  # the orchestrator's 'inside the rollout append' flag, mirrored for workers
        self.seam = SeamRecorder(sut, lambda: self._orch is not None and self._orch.rollout.appending, self._appending)
        self.sut = self.seam
        self.ledger = Ledger()
        push_ledger(self.ledger)
        self.journal_history: list[list[dict[str, Any]] | None] = []  # the journal after each action
        self.workdir = workdir
        self.profile = Profile(phase_enabled=False)
        self.segment_size = 3
        self.log = CallLog(workdir / f"provider-calls-{os.getpid()}-{id(self):x}.jsonl")  # this world's own
        self.release: SharedFlag | VirtualFlag = SharedFlag()  # a VirtualFlag in the models' simulation mode
        self.restart_keeps_connection = False  # the orchestrator's (FakeOrchestrator.keep_connection): simulated crashes only
        # The orchestrator's primary store in memory (FakeOrchestrator's ``in_memory``): only for a
        # world whose providers all run in this process, between the store's transactions, and
        # whose crashes are all simulated here (the models' simulation mode).
        self.primary_in_memory = False
        self.private_values: dict[str, str] = {}
        self.hooks: dict[str, HookProbe] = {}
        self.install_rejections: dict[str, list[Rejection]] = {}
        # The probes of registrations the SUT rejected: none of them may ever be called (§6).
        self.rejected_probes: dict[str, list[HookProbe]] = {}
        self.script: list[tuple[str, dict[str, Any]]] = []
        self.script_results: list[TurnResult] = []  # parallel to ``script``
        self.turns: list[TurnResult] = []
        self.outcomes: list[DispatchOutcome] = []
        self.calls_per_outcome: list[int] = []  # provider calls made during each outcome's dispatch
        self.crashes: list[str] = []
        self.last_elapsed_ms = 0.0
        self.admission = GovernedAdmission()
        self.sink = FakeSink(trusted=self.admission)
        self.reducer: Any = None
        self.scheduler: FakeScheduler | None = None
        self._orch: FakeOrchestrator | None = None
        self.periodic_report = False
        self._writeback: WritebackRecorder | None = None
        self._baselines: list[Any] = []
        self.writeback_script: list[tuple[str, dict[str, Any]]] = []  # the commands, for the no-hooks run
        _ACTIVE.append(self)

    # -- set-up ---------------------------------------------------------------------------------

    @property
    def orch(self) -> FakeOrchestrator:
        if self._orch is None:
            self._orch = FakeOrchestrator(
                self.sut,
                self.workdir / "primary",
                seed=self.SEED,
                segment_size=self.segment_size,
                turn=self.turn_seam,
                keep_connection=self.restart_keeps_connection,
                in_memory=self.primary_in_memory,
            )
        return self._orch

    @property
    def writeback(self) -> WritebackRecorder:
        """The implementation's writeback boundary for this scenario (pwh/_suts/writeback_seam.py):
        the one its adapter offers; for pwh's reference, the fake orchestrator wired to it;
        otherwise ``Unsupported``: the writeback scenarios are not applicable to it."""
        if self._writeback is None:
            self._writeback = WritebackRecorder(self._open_writeback(self.workdir / "writeback", hooked=True))
        return self._writeback

    def _open_writeback(self, where: Path, *, hooked: bool) -> Any:
        sut = self.seam.wrapped
        offered = writeback_boundary_of(sut)
        if offered is not None:
            return offered
        if is_reference(sut):
            return ReferenceWriteback(self.seam if hooked else NoHooksSUT(), where, seed=self.SEED)
        raise Unsupported("the adapter offers no writeback seam (writeback_boundary(); docs/seam.md)")

    def writeback_baseline(self) -> Any:
        """A second boundary of the same implementation, with no hook installed, driven through the
        same commands: the run a hooked run's primary receipts and spends must equal. Closed with
        the world."""
        base = self._open_writeback(self.workdir / "writeback-baseline", hooked=False)
        self._baselines.append(base)
        for operation, kw in self.writeback_script:
            getattr(base, operation)(**kw)
        return base

    def turn(self, operation: str) -> tuple[Any, str]:
        """Who answers a turn-seam ``operation`` here, and whose answer a check of it judges:
        the SUT's turn seam (``"sut"``) when it offers the operation, else the testbed."""
        if self.turn_seam is not None and operation in self.turn_seam.operations:
            return self.turn_seam, "sut"
        return self._testbed_turn, "testbed"

    def set_profile(self, **changes: Any) -> None:
        self.profile = self.profile.with_(**changes)
        self.sut.set_profile(self.profile)

    def ensure_generic_kind(self) -> None:
        """Register pwh's general test intent kind, once a world (every hook proposes it)."""
        self.ensure_kind(GENERIC_INTENT_KIND)

    def ensure_kind(self, kind: str) -> None:
        """Register the test intent kind ``kind`` (one of ``fakes._packets.TEST_INTENT_KINDS``)
        once a world. An adapter whose catalog cannot hold it raises ``Unsupported``: the
        scenarios that need it are then not applicable, the others unaffected."""
        if kind not in self._kinds_registered:
            self.sut.register_intent_kind(kind, copy.deepcopy(TEST_INTENT_KINDS[kind]))
            self._kinds_registered.add(kind)

    def install_hook(self, hook_id: str, behaviour: str, **reg_changes: Any) -> list[Rejection]:
        self.ensure_generic_kind()
        spec = BEHAVIOURS[behaviour]
        for kind in spec.intent_kinds:
            self.ensure_kind(kind)
        if spec.intent_kinds and "intent_kinds" not in reg_changes:
            reg_changes["intent_kinds"] = list(spec.intent_kinds)
        budget = {**spec.budget, **reg_changes.pop("budget", {})}
        reg = registration(hook_id, budget=budget, **reg_changes)
        probe = HookProbe(hook_id, behaviour, self.log)
        rejections = self.sut.install(reg, self._producer(probe, spec.body))
        self._installed(hook_id, probe, rejections)
        return rejections

    def install_body(
        self, hook_id: str, description: str, body: Callable[..., Any], reg: Mapping[str, Any] | None = None
    ) -> list[Rejection]:
        """Install a step's own provider ``body(hook_input, ctx)`` under ``reg`` (the generic
        registration of ``hook_id`` by default); the probe is kept only when installed."""
        self.ensure_generic_kind()
        probe = HookProbe(hook_id, description, self.log)
        rejections = self.sut.install(reg if reg is not None else registration(hook_id), self._producer(probe, body))
        self._installed(hook_id, probe, rejections)
        return rejections

    def _installed(self, hook_id: str, probe: HookProbe, rejections: list[Rejection]) -> None:
        self.install_rejections[hook_id] = rejections
        if rejections:
            self.rejected_probes.setdefault(hook_id, []).append(probe)
        else:
            self.hooks[hook_id] = probe

    def install_registration(self, hook_id: str, reg: Mapping[str, Any]) -> list[Rejection]:
        """Install a hand-made registration with a probe that proposes one intent."""
        self.ensure_generic_kind()
        probe = HookProbe(hook_id, "proposes one intent", self.log)
        rejections = self.sut.install(reg, self._producer(probe, BEHAVIOURS["proposes one intent"].body))
        self.install_rejections[hook_id] = rejections
        if rejections:
            self.rejected_probes.setdefault(hook_id, []).append(probe)
        self.hooks.setdefault(hook_id, probe)
        return rejections

    def install_periodic_report(self) -> None:
        from pwh.capabilities import periodic_report

        periodic_report.install(_CountingRegistrar(self))
        self.periodic_report = True

    def _producer(self, probe: HookProbe, body: Callable[..., Any]) -> Callable[[Mapping[str, Any]], Any]:
        log, hook_id, orch, host, recipes, token = self.log, probe.hook_id, self, os.getpid(), self.id_recipes, probe.token

        def produce(hook_input: Mapping[str, Any]) -> Any:
            number = probe.calls + 1
            inside = orch.inside_append()
            seen, unreadable = _plain_input(hook_input)
            entry = {"e": "call", "h": hook_id, "i": seen, "r": inside, "p": os.getpid(), "t": token}
            if unreadable is not None:
                entry["u"] = unreadable
            log.note(entry)
            context = CallContext(number, self.release, self.private_values, host, self._committed_receipt_ids)  # type: ignore[arg-type]
            with using_id_recipes(recipes):
                value = body(hook_input, context)
            try:  # a copy of every answer, for the checks that compare what was recorded with it
                orch.keep_answer(hook_id, value)
            except Exception:  # an answer built to break whoever reads it is still the answer given
                pass
            return value

        return produce

    def _committed_receipt_ids(self) -> list[str]:
        return self._orch.store.receipt_ids_read_apart() if self._orch is not None else []

    def inside_append(self) -> bool:
        """Whether the running provider was called inside the orchestrator's rollout-event append
        (read from the shared mirror when the provider runs in a worker process)."""
        return self._appending.is_set() or (self._orch is not None and self._orch.rollout.appending)

    @property
    def call_order(self) -> list[str]:
        return [c["h"] for c in self.log.calls()]

    def keep_answer(self, hook_id: str, value: Any) -> None:
        """Note a copy of what a provider answered (from inside the provider, in its process); an
        answer that is not JSON is simply not kept."""
        try:
            self.log.note({"e": "answer", "h": hook_id, "v": value})
        except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
            pass

    def answers(self, hook_id: str) -> list[Any]:
        return self.log.answers(hook_id)

    def provider_gone(self, hook_id: str) -> bool:
        """Whether the process that ran ``hook_id``'s last call is gone (a worker process the
        runner killed); never true for a call that ran in this process."""
        calls = self.log.calls(hook_id)
        if not calls or calls[-1].get("p") in (None, os.getpid()):
            return False
        try:
            with open(f"/proc/{calls[-1]['p']}/stat", "rb") as handle:
                return handle.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
        except (OSError, IndexError):
            return True

    def share(self, key: str, value: Any) -> None:
        """Set a value providers read with :meth:`shared` (a file: seen in any process, also by a
        provider in a worker forked before the change)."""
        path = self.workdir / "shared" / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(value), "utf-8")
        os.replace(tmp, path)

    def shared(self, key: str, default: Any = None) -> Any:
        try:
            return json.loads((self.workdir / "shared" / f"{key}.json").read_text("utf-8"))
        except FileNotFoundError:
            return default

    def flag(self) -> SharedFlag:
        """A latch a provider can set from its worker process and the scenario can wait on."""
        return SharedFlag()

    # -- Turns ----------------------------------------------------------------------------------

    def act(self, action: str, **kw: Any) -> TurnResult:
        """Run one orchestrator action and remember it for the no-hooks baseline."""
        self.script.append((action, kw))
        calls_before = self.total_calls()
        started = time.monotonic()
        result = _run(self.orch, action, kw, self.script_results)
        self.last_elapsed_ms = (time.monotonic() - started) * 1000
        self.script_results.append(result)
        self.turns.append(result)
        if result.dispatch is not None:
            self._note_outcome(result.dispatch, calls_before)
        self.snapshot_journal()
        return result

    def dispatch_direct(self, source: Any, *, redeliver: bool = False, snapshot: bool = True) -> DispatchOutcome:
        """Offer ``source`` to the SUT as a host would (or as a racing second dispatcher, with
        ``redeliver``), outside any Turn; the outcome is remembered like a Turn's. ``snapshot=False``
        keeps no copy of the journal after it (a step dispatching hundreds of receipts takes one
        at the end with :meth:`snapshot_journal`)."""
        calls_before = self.total_calls()
        outcome = self.sut.redeliver(source) if redeliver else self.sut.dispatch(source)
        self._note_outcome(outcome, calls_before)
        if snapshot:
            self.snapshot_journal()
        return outcome

    def total_calls(self) -> int:
        return sum(p.calls for p in self.hooks.values())

    def _note_outcome(self, outcome: DispatchOutcome, calls_before: int) -> None:
        self.outcomes.append(outcome)
        self.calls_per_outcome.append(self.total_calls() - calls_before)

    def snapshot_journal(self) -> None:
        # Auxiliary: a journal that cannot be read here (a fault a scenario injected) is judged by
        # the steps that read it, not by this snapshot.
        try:
            self.journal_history.append(self.seam.wrapped.journal_records())
        except Exception:
            self.journal_history.append(None)

    def judgement(self) -> dict[str, Any]:
        """What the gate needs to count this scenario: whether the SUT was reached at all, whether
        a check judged its answer, and every profile divergence."""
        wb = self._writeback
        wb_reached = {f"writeback.{op}" for op in (wb.reached if wb else ())}
        wb_answered = {f"writeback.{op}" for op in (wb.answered if wb else ())}
        return {
            "reached": bool(self.seam.reached or wb_reached),
            "judged_sut": self.judged_sut(),
            "turn_judged": self.turn_seam is not None and bool(self.turn_seam.answered) and self.ledger.sut_checks > 0,
            "divergences": list(self.ledger.divergences),
            # which seam operations the scenario reached and which answered (``pwh smoke`` lists them)
            "operations": sorted(
                self.seam.reached | wb_reached | {f"turn.{op}" for op in (self.turn_seam.reached if self.turn_seam else ())}
            ),
            "answered": sorted(
                self.seam.answered | wb_answered | {f"turn.{op}" for op in (self.turn_seam.answered if self.turn_seam else ())}
            ),
        }

    def judged_sut(self) -> bool:
        """Whether this scenario judged the implementation: it answered at least one seam call and
        at least one check read what it did."""
        answered = self.seam.answered or (self._writeback is not None and self._writeback.answered)
        return bool(answered) and self.ledger.sut_checks > 0

    def act_crashing(self, action: str, point: str, **kw: Any) -> None:
        """Arm ``point``, run ``action``, expect the crash, then restart from durable storage."""
        self.orch.arm_crash(point)
        try:
            self.act(action, **kw)
        except SimulatedCrash as crash:
            self.crashes.append(crash.point)
            self.script.pop()  # the crashed action has no result; the baseline is now moot
        else:
            raise AssertionError(f"expected the process to crash at {point}, but the Turn completed")
        self.restart()

    def restart(self) -> None:
        """Come back from durable storage (the orchestrator restarts the SUT and runs its recovery
        queue); every recovered dispatch is remembered like a Turn's."""
        calls_before = self.total_calls()
        for result in self.orch.restart():
            self.turns.append(result)
            if result.dispatch is not None:
                self._note_outcome(result.dispatch, calls_before)
                calls_before = self.total_calls()
        self.snapshot_journal()

    @property
    def last(self) -> TurnResult:
        if not self.turns:
            raise AssertionError("no Turn has run yet")
        return self.turns[-1]

    def last_committed(self) -> TurnResult:
        for turn in reversed(self.turns):
            if turn.committed:
                return turn
        raise AssertionError("no Turn committed a writeback")

    def hook_outcomes(self, hook_id: str) -> list[Any]:
        return [o.hook(hook_id) for o in self.outcomes if o.has_hook(hook_id)]

    def journal(self) -> list[dict[str, Any]]:
        return self.sut.journal_records()

    def records_for(self, hook_id: str) -> list[dict[str, Any]]:
        return [r for r in self.journal() if r.get("hook_id") == hook_id]

    def scheduler_for_periodic_report(self) -> FakeScheduler:
        if self.scheduler is None:
            from pwh.capabilities.periodic_report import INTENT_KIND, TriggerReducer

            self.reducer = reducer = TriggerReducer()
            recipes = self.id_recipes
            # The capability's reducer checks each intent id with pwh's recipe; an id by the SUT's
            # own recipe is handed to it as pwh's digest of the same fields.
            self.scheduler = FakeScheduler(self.admission, {INTENT_KIND: lambda intent: reducer.reduce(reference_keyed(intent, recipes))})
        return self.scheduler

    def baseline(self) -> FakeOrchestrator:
        """The same Turn script against an orchestrator with no hooks at all."""
        if self.crashes:
            raise AssertionError("a crashed run has no no-hooks baseline to compare with")
        base = FakeOrchestrator(
            NoHooksSUT(), self.workdir / "baseline", seed=self.SEED, segment_size=self.segment_size, turn=self.turn_seam
        )
        done: list[TurnResult] = []
        for action, kw in self.script:
            done.append(_run(base, action, kw, done))
        return base

    def close(self) -> None:
        pop_ledger(self.ledger)
        self.release.set()
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        if self._orch is not None:
            self._orch.close()
        for boundary in [self._writeback, *self._baselines]:
            if boundary is not None:
                try:
                    boundary.close()
                except Unsupported:
                    pass
        try:
            self.sut.close()
        except Unsupported:
            pass


class _CountingRegistrar:
    """Lets a real capability install itself while the world still counts its provider calls."""

    def __init__(self, world: World) -> None:
        self.world = world

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> None:
        self.world.sut.register_intent_kind(kind, payload_schema)

    def install(self, reg: Mapping[str, Any], producer: Callable[[Mapping[str, Any]], Any]) -> None:
        probe = HookProbe(reg["hook_id"], "the capability's own producer", self.world.log)
        # The capability computes its intent ids with pwh's recipe; under the SUT's own recipe
        # they are recomputed with that one, as the capability would if it used the SUT's.
        rejections = self.world.sut.install(reg, self.world._producer(probe, lambda i, c: rekeyed(producer(i))))
        if rejections:
            raise AssertionError(f"the capability's registration was rejected: {rejections[0]}")
        self.world.hooks[probe.hook_id] = probe


def _run(orch: FakeOrchestrator, action: str, kw: dict[str, Any], done: list[TurnResult]) -> TurnResult:
    if action == "replay":
        return orch.replay(done[kw["turn"]].turn_key)
    return getattr(orch, action)(**kw)

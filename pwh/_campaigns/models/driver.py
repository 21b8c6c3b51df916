"""The models' rules, written once against a :class:`Chooser`: two engines draw from them.

A rule says when it may fire (its precondition, read from the system's state and the example's
swarm configuration) and which step it makes, drawing every free choice through the chooser. The
Hypothesis engine (:mod:`.machine`) draws through ``st.data()`` and so keeps shrinking, the
example database and its own rule choice; the simulation engine (:mod:`.simulation`) draws from
one seeded ``random.Random``, at a fraction of the cost per step, and replays byte for byte from
its seed. Both run the steps through the same :meth:`ModelDriver._do` (the interpreter, the
invariants, the coverage), so a step means the same thing whichever engine chose it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

from fakes._orchestrator import PRIMARY_CRASH_POINTS
from pwh._campaigns.counterexamples.trace import make_trace
from pwh._campaigns.models.catalog import HOOK_IDS, PERIODIC, PERIODIC_HOOK_ID, SIBLING, VERSIONED
from pwh._campaigns.models.coverage import Coverage
from pwh._campaigns.models.invariants import Judge, ModelViolation, Violation
from pwh._campaigns.models.language import BAD_RECEIPTS, CORE_TIMEOUT_CAP, CRASH_ACTIONS, DUPLICATE, TURN_ACTIONS, bad_registration_flaws
from pwh._campaigns.models.system import ModelSystem, Stats, StepRecord

T = TypeVar("T")

# The rules swarm testing may leave out: every rule but ``turn``, which commits the writebacks
# everything else acts on (and ``setup``, which always runs first).
SWARM_RULES: tuple[str, ...] = (
    "install",
    "install_versioned",
    "install_periodic_report",
    "move_policy",
    "replay",
    "redeliver",
    "crash",
    "install_sibling",
    "bad_receipt",
    "bad_register",
    "profile",
    "restart",
)
ALL_RULES: tuple[str, ...] = ("setup", "turn", *SWARM_RULES)
STEP_RULES: tuple[str, ...] = ("turn", *SWARM_RULES)  # the rules a history's steps after setup come from
_RULE_OF_OP = {"policy": "move_policy"}  # a step's op -> the rule that draws it, where they differ
PROFILE_SETTINGS = ("phase", "allowlist", "ceiling", "attempts", "timeout_cap")


class Chooser(Protocol):
    """Where a rule's free choices come from."""

    def sample(self, options: Sequence[T], label: str) -> T: ...

    def integer(self, low: int, high: int, label: str) -> int: ...

    def boolean(self, label: str) -> bool: ...

    def unique_list(self, options: Sequence[T], max_size: int, label: str) -> list[T]: ...


class SeededChooser:
    """Every choice from one ``random.Random``: the simulation engine's chooser."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def sample(self, options: Sequence[T], label: str) -> T:
        return options[self.rng.randrange(len(options))]

    def integer(self, low: int, high: int, label: str) -> int:
        return self.rng.randint(low, high)

    def boolean(self, label: str) -> bool:
        return self.rng.random() < 0.5

    def unique_list(self, options: Sequence[T], max_size: int, label: str) -> list[T]:
        return self.rng.sample(list(options), self.rng.randint(0, min(max_size, len(options))))


@dataclass(frozen=True)
class Swarm:
    """One example's swarm configuration: what it leaves out (an empty one leaves out nothing)."""

    rules_off: frozenset[str] = frozenset()
    behaviours_off: frozenset[str] = frozenset()
    points_off: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, list[str]]:
        return {"rules_off": sorted(self.rules_off), "behaviours_off": sorted(self.behaviours_off), "points_off": sorted(self.points_off)}


def choose_swarm(choose: Chooser, behaviours: list[str], points: list[str]) -> Swarm:
    """Leave each optional rule, behaviour and crash point out with probability 1/2 (Groce et al.),
    drawn through the example's chooser: reproducible from its seed and, under Hypothesis, replayed
    exactly from the example database and shrinking towards leaving nothing out. At least one
    behaviour stays (the first, most ordinary one, if the draw left out all)."""

    def off(names: list[str], label: str) -> frozenset[str]:
        return frozenset(n for n in names if choose.boolean(f"swarm: {label} {n} off"))

    rules = off(list(SWARM_RULES), "rule")
    left_out = off(behaviours, "behaviour")
    if behaviours and left_out >= set(behaviours):
        left_out -= {behaviours[0]}
    return Swarm(rules, left_out, off(points, "crash point"))


@dataclass
class MachineConfig:
    """What one model run judges and how; shared by every example of the run."""

    sut: str
    sut_options: dict[str, Any]
    real_crashes: bool
    weights: Mapping[str, int]
    seed: int
    stats: Stats
    progress: Callable[[], None] | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)  # traces of failing examples, in order
    swarm: bool = False  # each example draws a Swarm first (pwh soak)
    coverage: Coverage | None = None  # what the run exercised, when someone reads it
    found_at_example: int | None = None  # stats.examples when the first failure was recorded
    stop_at: float | None = None  # time.monotonic() past which the run's remaining steps do nothing (a soak's budget)
    simulated: bool = False  # providers in virtual time (``ModelSystem``'s simulation mode)
    transcript: list[bytes] | None = None  # when a list: one line per step of what it did (:func:`transcript_line`)
    # (row, invariant) -> a profile divergence's first sighting and how often it was seen (never a failure)
    divergences: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def weighted(self, left_out: frozenset[str] = frozenset()) -> list[str]:
        """Phrases repeated by weight, first the most ordinary (what a draw shrinks towards)."""
        return [p for p, w in self.weights.items() if p not in left_out for _ in range(max(0, w))]

    def drawable(self) -> list[str]:
        """The behaviours a hook may be installed with (weight above zero), first the most ordinary."""
        return [p for p, w in self.weights.items() if w > 0]


class ModelDriver:
    """One example's system, judge and swarm configuration, and the rules that act on them."""

    config: ClassVar[MachineConfig]

    def start_example(self) -> None:
        cfg = self.config
        self.system = ModelSystem(
            cfg.sut, sut_options=cfg.sut_options, real_crashes=cfg.real_crashes, stats=cfg.stats, simulated=cfg.simulated
        )
        self.judge = Judge()
        self.versions: dict[str, int] = {}
        self.swarm: Swarm | None = None  # drawn by setup when the run is a swarm run
        self._in_setup = False
        cfg.stats.examples += 1
        if cfg.coverage is not None:
            cfg.coverage.instrument(self.judge)
            points = [*PRIMARY_CRASH_POINTS, *self.system.sut.crash_points]
            cfg.coverage.begin_example(ALL_RULES, [*cfg.drawable(), VERSIONED, PERIODIC], points, cfg.real_crashes)

    def _do(self, step: dict[str, Any]) -> None:
        cfg = self.config
        if cfg.stop_at is not None and time.monotonic() > cfg.stop_at:
            return  # the soak's time is up: what is left of this round's examples runs as no-ops
        if cfg.coverage is not None and not (self._in_setup and step["op"] != "setup"):
            cfg.coverage.rule(self._rule_of(step), self.swarm)
        record = self.system.apply(step)  # CannotExpress: the engine draws another example
        if cfg.coverage is not None:
            cfg.coverage.step(step, record, self.system.hooks.__contains__, self.swarm)
        if cfg.transcript is not None:
            cfg.transcript.append(transcript_line(self.system, record))
        violation = self.judge.check(self.system, record)
        for found in self.judge.take_divergences():
            note_divergence(cfg.divergences, found, functools.partial(self._trace, found))
        if cfg.progress is not None:
            cfg.progress()
        if violation is not None:
            cfg.stats.violations += 1
            trace = self._trace(violation)
            if self.swarm is not None:
                trace["swarm"] = self.swarm.to_json()  # which configuration found it (replay reads only the steps)
            if not cfg.failures:
                cfg.found_at_example = cfg.stats.examples
            cfg.failures.append(trace)
            raise ModelViolation(violation)

    def _trace(self, found: Violation) -> dict[str, Any]:
        cfg = self.config
        trace = make_trace(cfg.seed, cfg.sut, cfg.sut_options, self.system.steps, found)
        if self.system.simulated:
            trace["simulated"] = True  # found in virtual time: replayed in real mode before it is believed
        return trace

    @staticmethod
    def _rule_of(step: dict[str, Any]) -> str:
        op = step["op"]
        if op == "install" and step["hook"].split(".", 1)[-1] == SIBLING:
            return "install_sibling"
        return _RULE_OF_OP.get(op, op)

    def _on(self, rule: str) -> bool:
        """Whether this example's swarm configuration lets ``rule`` fire (always, outside swarm runs)."""
        return self.swarm is None or rule not in self.swarm.rules_off

    def _behaviours(self) -> list[str]:
        return self.config.weighted(self.swarm.behaviours_off if self.swarm is not None else frozenset())

    def _crash_points(self) -> list[str]:
        points = self.system.crash_points()
        if self.swarm is None:
            return points
        return [p for p in points if p not in self.swarm.points_off]

    def end_example(self) -> None:
        self.system.close()

    # -- what the rules read -------------------------------------------------------------------

    def _free_ids(self) -> list[str]:
        return [h for h in HOOK_IDS if h not in self.system.hooks and h not in self.system.foreign]

    def _sibling_ids(self) -> list[str]:
        """``<capability>.sibling`` for each installed scripted hook's capability not yet doubled."""
        caps = sorted({h.split(".", 1)[0] for h in self.system.hooks if h in HOOK_IDS})
        return [f"{c}.{SIBLING}" for c in caps if f"{c}.{SIBLING}" not in self.system.hooks]

    def _committed(self) -> int:
        return len(self.system.committed())

    def _versioned(self) -> list[str]:
        return sorted(h for h, s in self.system.hooks.items() if s.behaviour == VERSIONED)

    # -- the rules: when each may fire, and the step it makes --------------------------------

    def enabled(self, rule: str) -> bool:
        """Whether ``rule`` may fire now (its precondition)."""
        unsupported = self.system.unsupported
        if rule == "turn":
            return True
        if not self._on(rule):
            return False
        if rule == "install":
            return bool(self._free_ids()) and "install" not in unsupported
        if rule == "install_versioned":
            return bool(self._free_ids())
        if rule == "install_periodic_report":
            return PERIODIC_HOOK_ID not in self.system.hooks
        if rule == "move_policy":
            return bool(self._versioned())
        if rule in ("replay", "redeliver"):
            return self._committed() > 0 and rule not in unsupported
        if rule == "crash":
            return "crash" not in unsupported and bool(self._crash_points())
        if rule == "install_sibling":
            return bool(self._sibling_ids()) and "install" not in unsupported
        if rule == "bad_receipt":
            return True
        if rule == "bad_register":
            return "bad_register" not in unsupported and bool(self.system.hooks or self._free_ids())
        if rule in ("profile", "restart"):
            return rule not in unsupported
        raise ValueError(f"unknown rule {rule!r}")

    def do_setup(self, choose: Chooser) -> None:
        cfg = self.config
        if cfg.swarm:
            self.swarm = choose_swarm(choose, cfg.drawable(), [*PRIMARY_CRASH_POINTS, *self.system.sut.crash_points])
            if cfg.coverage is not None:
                cfg.coverage.note_swarm(self.swarm)
        ceiling = choose.sample((None, 1, 2), "ceiling")
        segment = choose.sample((3, 1, 2), "segment")
        self._in_setup = True
        self._do({"op": "setup", "ceiling": ceiling, "segment": segment})
        for hook in choose.unique_list(HOOK_IDS, 3, "first hooks"):
            self._do({"op": "install", "hook": hook, "behaviour": choose.sample(self._behaviours(), hook)})
        self._in_setup = False

    def do(self, rule: str, choose: Chooser) -> None:
        """Fire ``rule`` (its precondition holds), drawing its choices through ``choose``."""
        getattr(self, "_rule_" + rule)(choose)

    def _rule_install(self, choose: Chooser) -> None:
        hook = choose.sample(self._free_ids(), "hook")
        self._do({"op": "install", "hook": hook, "behaviour": choose.sample(self._behaviours(), "behaviour")})

    def _rule_install_versioned(self, choose: Chooser) -> None:
        hook = choose.sample(self._free_ids(), "hook")
        self.versions[hook] = 1
        self._do({"op": "install_versioned", "hook": hook, "version": "v1"})

    def _rule_install_periodic_report(self, choose: Chooser) -> None:
        self._do({"op": "install_periodic_report"})

    def _rule_move_policy(self, choose: Chooser) -> None:
        hook = choose.sample(self._versioned(), "hook")
        self.versions[hook] += 1
        self._do({"op": "policy", "hook": hook, "version": f"v{self.versions[hook]}"})

    def _rule_turn(self, choose: Chooser) -> None:
        self._do({"op": "turn", "action": choose.sample(TURN_ACTIONS, "action")})

    def _rule_replay(self, choose: Chooser) -> None:
        self._do({"op": "replay", "writeback": choose.integer(1, self._committed(), "writeback")})

    def _rule_redeliver(self, choose: Chooser) -> None:
        self._do({"op": "redeliver", "writeback": choose.integer(1, self._committed(), "writeback")})

    def _rule_crash(self, choose: Chooser) -> None:
        action = choose.sample(CRASH_ACTIONS, "action")
        point = choose.sample(self._crash_points(), "point")
        self._do({"op": "crash", "point": point, "action": action, "real": self.config.real_crashes})

    def _rule_install_sibling(self, choose: Chooser) -> None:
        """A second hook of an installed hook's capability: its own identity, budget and records."""
        hook = choose.sample(self._sibling_ids(), "hook")
        self._do({"op": "install", "hook": hook, "behaviour": choose.sample(self._behaviours(), "behaviour")})

    def _rule_bad_receipt(self, choose: Chooser) -> None:
        self._do({"op": "bad_receipt", "flaw": choose.sample(BAD_RECEIPTS, "flaw")})

    def _rule_bad_register(self, choose: Chooser) -> None:
        flaws = list(bad_registration_flaws())
        if not self.system.hooks:
            flaws.remove(DUPLICATE)
        if not self._free_ids():
            flaws = [DUPLICATE]
        flaw = choose.sample(flaws, "flaw")
        pool = sorted(self.system.hooks) if flaw == DUPLICATE else self._free_ids()
        self._do({"op": "bad_register", "hook": choose.sample(pool, "hook"), "flaw": flaw})

    def _rule_profile(self, choose: Chooser) -> None:
        """Change the execution profile between dispatches: it governs what comes after only."""
        setting = choose.sample(PROFILE_SETTINGS, "setting")
        values: dict[str, Sequence[Any]] = {
            "phase": (False, True),
            "allowlist": [None, *sorted(self.system.hooks), *HOOK_IDS],
            "ceiling": (1, 2, 32),
            "attempts": (3, 1, 2),
            "timeout_cap": (CORE_TIMEOUT_CAP, 100),
        }
        self._do({"op": "profile", "setting": setting, "value": choose.sample(values[setting], setting)})

    def _rule_restart(self, choose: Chooser) -> None:
        self._do({"op": "restart"})


def transcript_line(system: ModelSystem, record: StepRecord) -> bytes:
    """One step as canonical JSON: the step, each dispatch's outcome and time taken on the clock
    the run keeps (virtual in simulation), what the Turn let escape, and the SUT's journal and the
    primary store after it (their digests). Two runs that drew the same history and judged it
    the same way have the same lines, byte for byte."""
    journal = system.journal()
    line = {
        "step": record.step,
        "episodes": [
            {"kind": e.kind, "elapsed_ms": e.elapsed_ms, "outcome": e.outcome.to_json() if e.outcome is not None else None}
            for e in record.episodes
        ],
        "escaped": record.escaped,
        "unsupported": record.unsupported,
        "journal": hashlib.sha256(b"\n".join(_record_bytes(r) for r in journal)).hexdigest(),
        "primary": hashlib.sha256(system.world.orch.primary_snapshot()).hexdigest(),
    }
    return json.dumps(line, sort_keys=True, default=repr).encode()


def _record_bytes(record: Any) -> bytes:
    return json.dumps(record, sort_keys=True, default=repr).encode()


def note_divergence(book: dict[tuple[str, str], dict[str, Any]], found: Violation, example: Callable[[], dict[str, Any]]) -> None:
    """Count a profile divergence into ``book``: the first of each (row, invariant) is kept with
    its example history (``example()``, made only then: the steps up to it, never written out as a
    counterexample), later ones only counted."""
    key = (found.row, found.invariant)
    kept = book.get(key)
    if kept is None:
        trace = example()
        trace["divergence"] = trace.pop("violation")
        book[key] = kept = {**found.to_json(), "times": 0, "example": trace}
    kept["times"] += 1

"""What a model campaign exercised: actions run, crash points armed and reached, behaviours
installed, invariants checked and held, and the swarm configurations drawn (``pwh soak`` prints
it and writes it with ``--json``).

:class:`Coverage` is fed by the machine (``_machine.ModelMachine._do``, which sees every step and
what it did) and by the judge, whose checks it counts without the judge knowing: each check method
of :class:`._invariants.Judge` declares the invariants it can report (``_invariants.checks``, read
from the declarations, never from the source) and is wrapped on each judge instance, so every call
is counted, and every call that found nothing of an invariant is a hold of it. A check the judge
reaches some other way is not counted, and shows as never checked: the report errs towards "never
exercised", never towards a count it did not see.

Every invariant is reported with its kind: RFC (with the clauses that require it: a broken one is
a counterexample) or profile (with pwh's reading: a broken one is a *profile divergence*, counted
apart under ``"profile_divergences"`` and never a failure).
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from pwh._campaigns.models.catalog import PERIODIC, PERIODIC_HOOK_ID, VERSIONED

SCHEMA = "pwh_model_coverage_v1"
MODES = ("simulated", "real")
# The report's lines that name each invariant's kind (they start otherwise than the five
# "pwh soak: coverage:" lines, which the merged runs' tests count).
KIND_LINES = ("pwh soak: RFC invariants", "pwh soak: profile invariants")


class SwarmLike(Protocol):
    """What the report reads of a swarm configuration (``_machine.Swarm``)."""

    @property
    def rules_off(self) -> frozenset[str]: ...
    @property
    def behaviours_off(self) -> frozenset[str]: ...
    @property
    def points_off(self) -> frozenset[str]: ...


def judge_checks() -> dict[str, tuple[str, ...]]:
    """Each check method of the judge -> the invariants it can report, as declared (``checks``)."""
    from pwh._campaigns.models.invariants import CHECKS

    return dict(CHECKS)


def invariant_kinds() -> dict[str, Any]:
    """Every declared invariant -> its ``Invariant`` (kind, clauses or reading)."""
    from pwh._campaigns.models.invariants import INVARIANTS

    return dict(INVARIANTS)


class Coverage:
    """Counts summed over every example of every round a campaign runs."""

    def __init__(self) -> None:
        self.examples = 0
        self.steps = 0
        self.rules: set[str] = set()  # every action (rule) the machine has
        self.behaviour_names: set[str] = set()  # every behaviour a hook could be installed with
        self.point_names: set[str] = set()  # every crash point seen offered
        self.modes: set[str] = set()  # "simulated" and/or "real": which crash modes ran
        self.actions: Counter[str] = Counter()
        self.behaviours: Counter[str] = Counter()
        self.armed: dict[str, Counter[str]] = {m: Counter() for m in MODES}
        self.reached: dict[str, Counter[str]] = {m: Counter() for m in MODES}
        self.checked: Counter[str] = Counter()  # per invariant: calls of a check that can report it
        self.held: Counter[str] = Counter()  # ... of which found nothing
        self.broken: Counter[str] = Counter()
        self.swarm_examples = 0
        self.configurations: set[tuple[frozenset[str], frozenset[str], frozenset[str]]] = set()
        self.disabled: dict[str, Counter[str]] = {k: Counter() for k in ("actions", "behaviours", "crash_points")}
        self.while_disabled: dict[str, Counter[str]] = {k: Counter() for k in ("actions", "behaviours", "crash_points")}
        self.judged = bool(judge_checks())

    # -- fed by the machine ----------------------------------------------------------------------

    def begin_example(self, rules: Iterable[str], behaviours: Iterable[str], points: Iterable[str], real: bool) -> None:
        self.examples += 1
        self.rules.update(rules)
        self.behaviour_names.update(behaviours)
        self.point_names.update(points)
        self.modes.add(MODES[real])

    def note_swarm(self, swarm: SwarmLike) -> None:
        self.swarm_examples += 1
        self.configurations.add((swarm.rules_off, swarm.behaviours_off, swarm.points_off))
        self.disabled["actions"].update(swarm.rules_off)
        self.disabled["behaviours"].update(swarm.behaviours_off)
        self.disabled["crash_points"].update(swarm.points_off)

    def rule(self, name: str, swarm: SwarmLike | None) -> None:
        """A rule fired (counted before its step runs, so one the SUT cannot express counts too)."""
        self.actions[name] += 1
        if swarm is not None and name in swarm.rules_off:
            self.while_disabled["actions"][name] += 1

    def step(self, step: dict[str, Any], record: Any, installed: Callable[[str], bool], swarm: SwarmLike | None) -> None:
        """One step ran: ``record`` is its ``StepRecord``; ``installed(hook_id)`` whether the hook is
        installed now."""
        self.steps += 1
        op = step["op"]
        clean = record.unsupported is None and record.escaped is None
        if op == "crash":
            mode = MODES[bool(step["real"])]
            point = step["point"]
            self.point_names.add(point)
            self.armed[mode][point] += 1
            if clean and record.crash_missed is None:
                self.reached[mode][point] += 1
            if swarm is not None and point in swarm.points_off:
                self.while_disabled["crash_points"][point] += 1
            return
        behaviour = {"install": step.get("behaviour"), "install_versioned": VERSIONED, "install_periodic_report": PERIODIC}.get(op)
        if behaviour is None:
            return
        hook = PERIODIC_HOOK_ID if op == "install_periodic_report" else step["hook"]
        if clean and record.rejected_install is None and installed(hook):
            self.behaviours[behaviour] += 1
        if swarm is not None and behaviour in swarm.behaviours_off:
            self.while_disabled["behaviours"][behaviour] += 1

    # -- fed by the judge ------------------------------------------------------------------------

    def instrument(self, judge: Any) -> Any:
        """Count ``judge``'s checks from now on (this instance only); returns it."""
        for name, invariants in judge_checks().items():
            method = getattr(judge, name, None)
            if not callable(method):
                continue
            try:
                setattr(judge, name, self._counted(method, invariants))
            except AttributeError:  # a judge with __slots__: its checks go uncounted
                self.judged = False
                return judge
        return judge

    def _counted(self, method: Callable[..., Any], invariants: tuple[str, ...]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.checked.update(invariants)
            result = method(*args, **kwargs)
            if inspect.isgenerator(result):
                return self._through(result, invariants)
            self._judged(result, invariants)
            return result

        return counted

    def _through(self, findings: Iterator[Any], invariants: tuple[str, ...]) -> Iterator[Any]:
        broke: set[str] = set()
        for finding in findings:
            if finding is not None:
                broke.add(finding[0])
                self.broken[finding[0]] += 1
            yield finding
        self.held.update(i for i in invariants if i not in broke)

    def _judged(self, finding: Any, invariants: tuple[str, ...]) -> None:
        if finding is not None:
            self.broken[finding[0]] += 1
        self.held.update(i for i in invariants if finding is None or i != finding[0])

    # -- merged across processes (``pwh soak --workers``) ----------------------------------------

    def merge(self, other: Coverage) -> Coverage:
        """Add ``other``'s counts to this report (the names seen are united); returns this one."""
        self.examples += other.examples
        self.steps += other.steps
        self.rules |= other.rules
        self.behaviour_names |= other.behaviour_names
        self.point_names |= other.point_names
        self.modes |= other.modes
        self.actions.update(other.actions)
        self.behaviours.update(other.behaviours)
        for m in MODES:
            self.armed[m].update(other.armed[m])
            self.reached[m].update(other.reached[m])
        self.checked.update(other.checked)
        self.held.update(other.held)
        self.broken.update(other.broken)
        self.swarm_examples += other.swarm_examples
        self.configurations |= other.configurations
        for k in self.disabled:
            self.disabled[k].update(other.disabled[k])
            self.while_disabled[k].update(other.while_disabled[k])
        self.judged = self.judged and other.judged
        return self

    @classmethod
    def merge_all(cls, reports: Iterable[Coverage]) -> Coverage:
        """A new report with the counts of every one of ``reports``."""
        merged = cls()
        for report in reports:
            merged.merge(report)
        return merged

    # -- the report ------------------------------------------------------------------------------

    def invariant_names(self) -> list[str]:
        return sorted({i for invariants in judge_checks().values() for i in invariants} | set(self.checked) | set(self.broken))

    def profile_divergences(self) -> dict[str, int]:
        """Profile invariant -> how often it was broken (each a divergence, never a failure)."""
        kinds = invariant_kinds()
        return {i: self.broken[i] for i in self.invariant_names() if self.broken[i] and getattr(kinds.get(i), "kind", "") == "profile"}

    def _invariant_json(self, name: str, kinds: dict[str, Any]) -> dict[str, Any]:
        declared = kinds.get(name)
        kind = declared.to_json() if declared is not None else {"kind": "undeclared"}
        return {"checked": self.checked[name], "held": self.held[name], "broken": self.broken[name], **kind}

    def never(self) -> dict[str, list[str]]:
        """Whatever the campaign could have exercised and never did."""
        reached = {p for mode in MODES for p, n in self.reached[mode].items() if n}
        return {
            "actions": sorted(r for r in self.rules if not self.actions[r]),
            "behaviours": sorted(b for b in self.behaviour_names if not self.behaviours[b]),
            "crash_points": sorted(p for p in self.point_names if p not in reached),
            "crash_points_real": sorted(p for p in self.point_names if not self.reached["real"][p]) if "real" in self.modes else [],
            "invariants": [i for i in self.invariant_names() if not self.checked[i]],
        }

    def to_json(self) -> dict[str, Any]:
        points = sorted(self.point_names)
        kinds = invariant_kinds()
        return {
            "schema": SCHEMA,
            "examples": self.examples,
            "steps": self.steps,
            "actions": {r: self.actions[r] for r in sorted(self.rules | set(self.actions))},
            "behaviours": {b: self.behaviours[b] for b in sorted(self.behaviour_names | set(self.behaviours))},
            "crash_points": {
                p: {"armed": {m: self.armed[m][p] for m in MODES}, "reached": {m: self.reached[m][p] for m in MODES}} for p in points
            },
            "invariants": {i: self._invariant_json(i, kinds) for i in self.invariant_names()},
            "invariants_counted": self.judged,
            "profile_divergences": self.profile_divergences(),
            "swarm": {
                "examples": self.swarm_examples,
                "configurations": len(self.configurations),
                "disabled": {k: dict(sorted(c.items())) for k, c in self.disabled.items()},
                "ran_while_disabled": {k: dict(sorted(c.items())) for k, c in self.while_disabled.items()},
            },
            "never_exercised": self.never(),
        }

    def lines(self, *, invariants: bool = True) -> list[str]:
        """A few lines for the terminal; whatever was never exercised is named. ``invariants``:
        the invariants' counts and kinds too (a differential soak compares, it does not judge)."""
        never = self.never()
        head = "pwh soak: coverage:"

        def missing(kind: str, what: str = "never exercised") -> str:
            return f"; {what}: {', '.join(never[kind])}" if never[kind] else ""

        acts = ", ".join(f"{r} {self.actions[r]}" for r in sorted(self.rules, key=lambda r: -self.actions[r]))
        out = [f"{head} actions {acts}{missing('actions')}"]
        armed = {m: sum(self.armed[m].values()) for m in MODES}
        reached = {m: sum(self.reached[m].values()) for m in MODES}
        n_reached = len(self.point_names) - len(never["crash_points"])
        out.append(
            f"{head} crash points armed {armed['simulated']} simulated + {armed['real']} real, reached "
            f"{reached['simulated']} + {reached['real']}; {n_reached} of {len(self.point_names)} points reached"
            + missing("crash_points", "never reached")
            + missing("crash_points_real", "never reached by a real crash")
        )
        n_installed = len(self.behaviour_names) - len(never["behaviours"])
        out.append(
            f"{head} behaviours installed {sum(self.behaviours.values())} times, {n_installed} of {len(self.behaviour_names)} behaviours"
            + missing("behaviours", "never installed")
        )
        names = self.invariant_names()
        kinds = invariant_kinds()
        by_kind = {k: [kinds[i] for i in names if i in kinds and kinds[i].kind == k] for k in ("rfc", "profile")}
        if not invariants:
            pass
        elif self.judged:
            diverged = self.profile_divergences()
            out.append(
                f"{head} invariants {len(names) - len(never['invariants'])} of {len(names)} checked "
                f"({len(by_kind['rfc'])} RFC, {len(by_kind['profile'])} profile), "
                f"{sum(self.checked[i] for i in names)} checks, {sum(self.held[i] for i in names)} held"
                + (f"; profile divergences: {', '.join(f'{i} {n}' for i, n in diverged.items())}" if diverged else "")
                + missing("invariants", "never checked")
            )
        else:
            out.append(f"{head} invariants not counted (the judge's checks could not be read)")
        if self.swarm_examples:
            off = {k: sum(c.values()) for k, c in self.disabled.items()}
            out.append(
                f"{head} swarm: {self.swarm_examples} examples in {len(self.configurations)} configurations, disabling on average "
                + ", ".join(f"{off[k] / self.swarm_examples:.1f} {k.replace('_', ' ')}" for k in off)
            )
        else:
            out.append(f"{head} swarm off (every example could draw every action, behaviour and crash point)")
        if invariants:
            out.append(
                f"{KIND_LINES[0]} (a broken one is a counterexample; the clauses that require each): "
                + ", ".join(i.shown() for i in by_kind["rfc"])
            )
            out.append(
                f"{KIND_LINES[1]} (pwh's readings where the documents are silent; a broken one is a profile divergence, "
                "never a failure): " + "; ".join(i.shown() for i in by_kind["profile"])
            )
        return out

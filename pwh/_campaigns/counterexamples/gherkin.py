"""Write a counterexample as a Gherkin scenario that can be pasted into ``features/`` as is.

The trace's steps become the step library's Given/When lines. The Then lines are chosen by
running those lines in-process twice, on the SUT the model judged and on the reference: among
the checks a maintainer would write (call counts, recorded intents, statuses, order, admission,
primary store, spends, sink), the exporter keeps those that hold on the reference and fail on the SUT,
preferring the ones of the violated invariant's row. The scenario is tagged with that row.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakes import _actions as actions
from fakes._world import World
from pwh import load_sut
from pwh._campaigns.models.language import DUPLICATE
from pwh._campaigns.models.names import sut_slug
from pwh._campaigns.models.system import SEGMENT_DEFAULT
from pwh._harness.paths import fast_tmp
from pwh._harness.scenarios_check import load_step_modules, step_contexts


class StepNotFound(LookupError):
    """No step definition of the library matches a line."""


class StepLibrary:
    """Every step definition of ``scenarios.STEP_MODULES``."""

    def __init__(self, package: str = "scenarios") -> None:
        self._defs: list[Any] = step_contexts(load_step_modules(package))

    def matches(self, keyword: str, text: str) -> bool:
        return self._find(keyword, text) is not None

    def run(self, world: World, keyword: str, text: str) -> None:
        """Run one line (``keyword`` is Given, When or Then); raises what the step raises."""
        context = self._find(keyword, text)
        if context is None:
            raise StepNotFound(f"no step definition for {keyword}: {text!r}")
        args = dict(context.parser.parse_arguments(text) or {})
        for name, convert in (context.converters or {}).items():
            if name in args:
                args[name] = convert(args[name])
        context.step_func(world=world, **args)

    def _find(self, keyword: str, text: str) -> Any:
        kind = keyword.lower()
        for context in self._defs:
            if context.type == kind and context.parser.is_matching(text):
                return context
        return None


REFERENCE = "reference"
MAX_THEN = 3

_TURN = {
    "complete_todo": "the orchestrator commits a todo_completed writeback",
    "replan": "the orchestrator commits a replan_recorded writeback",
    "progress": "the orchestrator commits a plain progress writeback",
}

# Which kinds of checks say most about a broken rule of each row, best first.
_PREFERENCES: dict[str, tuple[str, ...]] = {
    "M01": ("admission", "called", "recorded", "journal_size", "status"),
    "M02": ("registration", "status", "called"),
    "M03": ("admission", "journal_size", "called", "recorded"),
    "M04": ("identity", "journal_size", "recorded", "status", "called"),
    "M05": ("called", "recorded", "identity", "status", "journal_size"),
    "M06": ("original", "status", "recorded", "journal_size"),
    "M07": ("primary", "writebacks", "spent", "timeout", "status", "compact", "recorded"),
    "M08": ("call_order", "report_order", "status", "recorded", "called"),
    "M12": ("sink", "status", "recorded"),
    "M13": ("compact", "status"),
}


@dataclass
class Feature:
    """An exported scenario: its text, and whether it tells the SUT from the reference."""

    text: str
    portable: bool
    note: str = ""
    lines: list[tuple[str, str]] = field(default_factory=list)


def export_feature(trace: dict[str, Any], *, trace_name: str = "trace.json", library: StepLibrary | None = None) -> Feature:
    """The Gherkin scenario for ``trace`` (see the module docstring).

    The reference runs first, alone, then the SUT: a broken adapter may reach for every live
    World's effect target, so the two never share a moment.
    """
    library = library or StepLibrary()
    row = trace["violation"]["row"]
    lines: list[tuple[str, str]] = []
    with _Run(REFERENCE) as reference:
        for step in trace["steps"]:
            for keyword, text in _lines(step, reference.world):
                lines.append((keyword, text))
                reference.run(library, keyword, text)
        order = _PREFERENCES.get(row, ())
        ranked = sorted(_candidates(reference.world), key=lambda c: order.index(c[0]) if c[0] in order else len(order))
        holds = [(kind, text) for kind, text in ranked if reference.failed_at is None and reference.passes(library, "Then", text)]
    with _Run(trace["sut"]) as sut:
        for keyword, text in lines:
            sut.run(library, keyword, text)
        if sut.failed_at is not None:  # the SUT already fails a When line: say what should hold
            chosen = [text for kind, text in holds if kind in order][:2]
        else:
            differing = [(kind, text) for kind, text in holds if not sut.passes(library, "Then", text)]
            preferred = [text for kind, text in differing if kind in order]
            chosen = (preferred or [text for _, text in differing])[:MAX_THEN]
    lines += [("Then", text) for text in chosen]
    portable = reference.failed_at is None and (sut.failed_at is not None or bool(chosen))
    note = "" if portable else _why_not(reference.failed_at)
    return Feature(_render(trace, trace_name, lines, note), portable, note, lines)


def _lines(step: dict[str, Any], world: World) -> Iterator[tuple[str, str]]:
    """The Given/When lines for one step; 'that writeback' wording when it names the same one."""
    op = step["op"]
    if op == "setup":
        yield "Given", "the post-writeback phase is enabled"
        if step["ceiling"] is not None:
            yield "Given", f"the profile allows at most {step['ceiling']} intents per dispatch"
        if step["segment"] != SEGMENT_DEFAULT:
            yield "Given", f"a segment closes after {step['segment']} completed Todos"
    elif op == "install":
        yield "Given", f'hook "{step["hook"]}" is installed and {step["behaviour"]}'
    elif op == "install_versioned":
        yield "Given", f'hook "{step["hook"]}" is installed and proposes one intent under policy version "{step["version"]}"'
    elif op == "install_periodic_report":
        yield "Given", "the periodic-report capability is installed"
    elif op == "policy":
        yield "When", f'hook "{step["hook"]}" moves to policy version "{step["version"]}"'
    elif op == "turn":
        yield "When", _TURN[step["action"]]
    elif op == "replay":
        n = step["writeback"]
        last = [r.turn_key for r in world.script_results if r.committed]
        same = bool(last) and _turn_key(world, n) == last[-1]
        yield "When", "the orchestrator replays that writeback" if same else f"the orchestrator replays writeback number {n}"
    elif op == "redeliver":
        n = step["writeback"]
        committed = [t for t in world.turns if t.committed]
        same = bool(committed) and _receipt_id(world, n) == (committed[-1].receipt or {}).get("receipt_id")
        yield (
            "When",
            "a second dispatcher delivers the same dispatch again" if same else f"a second dispatcher delivers writeback number {n} again",
        )
    elif op == "crash":
        what = "completion" if step["action"] == "complete_todo" else "replan"
        yield "When", f'the process crashes at "{step["point"]}" during a {what} and restarts'
    elif op == "restart":
        yield "When", "the process restarts"
    elif op == "bad_receipt":
        yield "When", _BAD_RECEIPT_LINES.get(step["flaw"]) or _bad_receipt_line(step["flaw"])
    elif op == "bad_register":
        flaw = step["flaw"]
        shown = flaw if flaw == DUPLICATE else f"registered with {flaw}"
        yield "Given", f'hook "{step["hook"]}" is {shown}'
    elif op == "profile":
        yield "Given", _profile_line(step["setting"], step["value"])


_BAD_RECEIPT_LINES = {
    "not_durable": "a receipt that was never durably checkpointed is offered for dispatch",
    "effect_mismatch": "the orchestrator commits a completion for an effect other than the active plan's",
}


def _bad_receipt_line(flaw: str) -> str:
    if flaw == "empty_effect":
        return "a committed receipt with an empty effect identity is offered for dispatch"
    if flaw.startswith("durable_"):
        return f"a committed receipt whose durable checkpoint is {flaw[len('durable_') :]} is offered for dispatch"
    if flaw.startswith("status_"):
        return f'a receipt whose writeback step is "{flaw[len("status_") :]}" is offered for dispatch'
    if flaw.startswith("empty_"):
        return f"a committed receipt with an empty {flaw[len('empty_') :]} is offered for dispatch"
    return f"a receipt whose writeback step is only {flaw} is offered for dispatch"


def _profile_line(setting: str, value: Any) -> str:
    if setting == "phase":
        return f"the post-writeback phase is {'enabled' if value else 'disabled'}"
    if setting == "allowlist":
        return "the profile admits every installed hook" if value is None else f'only hook "{value}" is on the profile allowlist'
    if setting == "ceiling":
        return f"the profile allows at most {value} intents per dispatch"
    if setting == "attempts":
        return f"the profile allows at most {value} attempts per dispatch"
    return f"the profile caps hook timeouts at {value} ms"


def _turn_key(world: World, n: int) -> str | None:
    try:
        return actions.writeback(world, n)["turn_instance_id"]
    except AssertionError:
        return None


def _receipt_id(world: World, n: int) -> str | None:
    try:
        return actions.writeback(world, n)["receipt_id"]
    except AssertionError:
        return None


class _Run:
    """Gherkin lines run on one World over one SUT, remembering the first line that failed."""

    def __init__(self, sut: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="pwh-export-", dir=fast_tmp()))
        try:
            self.world = World(load_sut(sut), self.root)
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self.failed_at: str | None = None

    def __enter__(self) -> _Run:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.world.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def run(self, library: StepLibrary, keyword: str, text: str) -> None:
        if self.failed_at is None and not self.passes(library, keyword, text):
            self.failed_at = text

    def passes(self, library: StepLibrary, keyword: str, text: str) -> bool:
        try:
            library.run(self.world, keyword, text)
        except Exception:
            return False
        return True


def _candidates(world: World) -> Iterator[tuple[str, str]]:
    """Checks of the step library, stated with the reference's values."""
    for hook_id in sorted(world.hooks):
        probe = world.hooks[hook_id]
        calls = probe.calls
        yield (
            "called",
            f'hook "{hook_id}" was never called' if calls == 0 else f'hook "{hook_id}" was called {calls} time{"s" if calls != 1 else ""}',
        )
        intents = sum(len(r.get("intents", [])) for r in world.records_for(hook_id) if r.get("status") == "proposed")
        if intents <= 2:
            word = {0: "no", 1: "one", 2: "two"}[intents]
            yield "recorded", f'hook "{hook_id}" has exactly {word} recorded intent{"" if intents == 1 else "s"}'
        outcomes = world.hook_outcomes(hook_id)
        if outcomes:
            last = outcomes[-1]
            if last.status == "failed":
                yield "status", f'hook "{hook_id}" ends with failure code "{last.failure_code}"'
            else:
                yield "status", f'hook "{hook_id}" ends with status "{last.status}"'
            yield "identity", f'hook "{hook_id}" has exactly one dispatch identity'
            yield "original", f'the journal still holds the original intent for hook "{hook_id}"'
        if probe.behaviour == "does not return within its timeout":
            yield "timeout", f'the Turn gave up on hook "{hook_id}" within its timeout'
    if world.call_order:
        yield "call_order", f'the hooks were called in the order "{", ".join(world.call_order)}"'
    if world.outcomes and len(world.outcomes[-1].hooks) > 1:
        yield "report_order", f'the hooks are reported in the order "{", ".join(h.hook_id for h in world.outcomes[-1].hooks)}"'
    if getattr(world, "expected_rejection_path", None):  # a bad registration was offered
        for hook_id, rejections in sorted(world.install_rejections.items()):
            if rejections:
                yield "registration", f'the registration of hook "{hook_id}" is rejected at the field it breaks'
    if world.outcomes and not world.outcomes[-1].admitted and world.outcomes[-1].code:
        yield "admission", f'the dispatch is not admitted, with code "{world.outcomes[-1].code}"'
    yield "journal_size", f"the sidecar journal holds {len(world.journal())} records"
    yield "writebacks", f"{len(world.orch.receipts())} primary writebacks are committed"
    yield "spent", "the quota was spent exactly once for each committed receipt"
    if not world.crashes:
        yield "primary", "the primary receipt and the quota-spend eligibility are unchanged"
    yield "sink", "the sink was never called"
    yield "compact", "every failure in the journal is a compact stable code"


def _why_not(reference_failed_at: str | None) -> str:
    if reference_failed_at is not None:
        return f"the reference itself fails the line {reference_failed_at!r}: the trace is the reproduction"
    return "no check of the step library tells this SUT from the reference here: the trace is the reproduction"


def _render(trace: dict[str, Any], trace_name: str, lines: list[tuple[str, str]], note: str) -> str:
    v = trace["violation"]
    slug = sut_slug(trace["sut"])
    out = [
        f'# pwh model counterexample: {v["row"]} {v["invariant"]}, found against SUT "{trace["sut"]}" (seed {trace["seed"]}).',
        f"# {v['message']}",
        *_required_by(v["invariant"]),
        f"# Reproduce the run: pwh replay {trace_name} --sut {trace['sut']}",
    ]
    if note:
        out.append(f"# Not portable: {note}")
    out += [
        f"Feature: Model counterexample {v['row']} {v['invariant']} ({slug}, seed {trace['seed']})",
        "",
        f"  @{v['row']}",
        f"  Scenario: the model finds {v['invariant'].replace('_', ' ')} against {slug} (seed {trace['seed']})",
    ]
    previous = ""
    for keyword, text in lines:
        shown = "And" if keyword == previous else keyword
        previous = keyword
        out.append(f"    {shown} {text}")
    return "\n".join(out) + "\n"


def _required_by(invariant: str) -> list[str]:
    """The comment naming the clauses that require the broken invariant (a counterexample is only
    ever written for an RFC invariant)."""
    from pwh._campaigns.models.invariants import INVARIANTS

    declared = INVARIANTS.get(invariant)
    if declared is None or not declared.clauses:
        return []
    return [f"# An RFC invariant, required by {', '.join(declared.clauses)}"]


# Which checks say most about each kind of RFC difference (``_answers``), best first.
_DIFFERENCE_CHECKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("registration", ("registration", "called", "status")),
    ("primary writebacks", ("writebacks", "primary", "spent")),
    ("source dispatched", ("admission", "called", "journal_size")),
    ("§10 failure class", ("status", "recorded")),
    ("hook status", ("status", "recorded", "called")),
    ("intents held", ("recorded", "status")),
    ("provider calls", ("called", "timeout", "status")),
    ("final journal records", ("recorded", "journal_size", "identity")),
    ("admitted hooks", ("report_order", "called", "status")),
)


def export_divergence(trace: dict[str, Any], *, trace_name: str = "trace.json", library: StepLibrary | None = None) -> str:
    """The Gherkin scenario for a differential trace (``_differential``): its steps as Given/When
    lines, Then lines that hold on the trace's ``sut`` and fail on ``against`` (the checks of the
    kind of fact that parted first, preferred), and both SUTs' answers in comments. Each SUT runs
    alone, one after the other, as :func:`export_feature` runs them."""
    library = library or StepLibrary()
    found = trace["divergence"]
    lines: list[tuple[str, str]] = []
    with _Run(trace["sut"]) as first:
        for step in trace["steps"]:
            for keyword, text in _lines(step, first.world):
                lines.append((keyword, text))
                first.run(library, keyword, text)
        wanted = [k for fact, kinds in _DIFFERENCE_CHECKS if any(fact in d for d in found["rfc"]) for k in kinds]
        ranked = sorted(_candidates(first.world), key=lambda c: wanted.index(c[0]) if c[0] in wanted else len(wanted))
        holds = [(kind, text) for kind, text in ranked if first.failed_at is None and first.passes(library, "Then", text)]
    with _Run(trace["against"]) as second:
        for keyword, text in lines:
            second.run(library, keyword, text)
        differing = [(kind, text) for kind, text in holds if not second.passes(library, "Then", text)]
        instead = [text for kind, text in _candidates(second.world) if kind in {k for k, _ in differing}]
    chosen = [text for _, text in differing][:MAX_THEN]
    sut, against = trace["sut"], trace["against"]
    out = [
        f'# pwh differential soak: "{sut}" and "{against}" answer step {found["step"]} of this history differently (seed {trace["seed"]}).',
        f"# Differs in RFC terms: {'; '.join(found['rfc'])}",
    ]
    if found.get("profile"):
        out.append(f"# Differs in profile terms too: {'; '.join(found['profile'])}")
    out.append(f'# "{sut}" answered:')
    out += [f"#   {line}" for line in found["sut_answer"]]
    out.append(f'# "{against}" answered:')
    out += [f"#   {line}" for line in found["against_answer"]]
    if chosen:
        out.append(f'# The Then lines hold on "{sut}" and fail on "{against}"; stated by "{against}":')
        out += [f"#   Then {text}" for text in instead[:MAX_THEN]]
    else:
        why = (
            f'"{sut}" itself fails the line {first.failed_at!r}'
            if first.failed_at is not None
            else "no check of the step library tells them apart here"
        )
        out.append(f"# No Then line: {why}; the trace ({trace_name}) is the reproduction.")
    out += [
        f"Feature: Differential finding: {sut_slug(sut)} against {sut_slug(against)} (seed {trace['seed']})",
        "",
        "# Tag it with the row its rule belongs to before adding it to features/ (the gate needs one).",
        "  @differential",
        f"  Scenario: {sut_slug(against)} answers differently from {sut_slug(sut)}: {found['rfc'][0]}",
    ]
    previous = ""
    for keyword, text in [*lines, *(("Then", t) for t in chosen)]:
        shown = "And" if keyword == previous else keyword
        previous = keyword
        out.append(f"    {shown} {text}")
    return "\n".join(out) + "\n"

"""What one step of a model run answered, in RFC terms and in profile terms, for two SUTs to compare.

A differential soak runs the same history against two SUTs and asks, after every step, whether
they answered alike. "Alike" is judged as SPEC section 0 judges a verdict: a fact the RFC fixes
(whether the primary writeback committed, whether a source was dispatched at all, each admitted
hook's status and how many intents it holds, how many times its provider was called, the §10
failure class, what the journal holds as final) differs *in RFC terms*; a fact only pwh's reading
fixes (a code name beyond the §10 classes, the dispatch-level codes, the JSON path a rejection
names, the attempt counter, the retry cap's number, the digest bytes of an identity) differs *in
profile terms* only.

A failure code the adapter could not map onto a §10 class is judged by the outcome alone, as the
gate does: against it, any failure class is alike in RFC terms (and still differs as profile).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from pwh._campaigns.models.catalog import ALSO, FIRST_FAILS, expected
from pwh._campaigns.models.observe import Episode
from pwh._campaigns.models.system import ModelSystem, StepRecord
from pwh._core.codes import RFC_FAILURE_CODES
from pwh._core.journal import FINAL_STATUSES

RFC_CODES = frozenset(RFC_FAILURE_CODES)
ESCAPED = "an exception escaped the Turn"


@dataclass(frozen=True)
class HookAnswer:
    """One admitted hook's answer in one episode."""

    hook_id: str
    status: str
    code: str | None
    intents: int
    calls: int
    attempts: int
    intent_ids: tuple[str, ...]
    readings: frozenset[tuple[str, str | None]] = frozenset()  # (status, code) pairs SPEC §0 leaves open for its behaviour
    capped: bool = False  # not called because its recorded attempts reached the profile's retry cap
    behaviour: str = field(default="", compare=False)  # what the model installed it to do: names a kind of difference

    def shown(self) -> str:
        what = self.status if self.code is None else f"{self.status} {self.code}"
        return f"{self.hook_id}: {what}, {self.intents} intent(s), {self.calls} provider call(s)"


@dataclass(frozen=True)
class EpisodeAnswer:
    """One dispatch or redelivery: admitted or not (and the dispatch-level code), and each hook."""

    kind: str
    died: bool  # the process died inside it (a simulated crash): no outcome
    admitted: bool
    code: str | None
    rejection_path: str | None
    hooks: tuple[HookAnswer, ...]

    def shown(self) -> list[str]:
        if self.died:
            return [f"{self.kind}: the process died inside it"]
        if not self.admitted:
            return [f"{self.kind}: nothing dispatched ({self.code or 'no code'})"]
        return [f"{self.kind}: " + ("; ".join(h.shown() for h in self.hooks) or "no hook admitted")]


@dataclass(frozen=True)
class StepAnswer:
    """Everything one step answered that two SUTs can be compared on."""

    escaped: bool
    unsupported: str | None
    registration_accepted: bool | None  # an install or a bad registration: accepted? (None: not one)
    registration_codes: tuple[str, ...]
    committed: int
    episodes: tuple[EpisodeAnswer, ...]
    finals: tuple[tuple[str, str, int], ...]  # the journal's final records: (hook, status, intents), sorted
    records: int  # every record the journal holds, final or not
    escaped_as: str | None = field(default=None, compare=False)  # the escaped exception's type name
    label: str = field(default="", compare=False)  # the step's op (and flaw): names a kind of difference

    def shown(self) -> list[str]:
        lines: list[str] = []
        if self.unsupported is not None:
            lines.append(f"unsupported: {self.unsupported}")
        if self.escaped:
            lines.append(f"an exception escaped the Turn ({self.escaped_as})")
        if self.registration_accepted is not None:
            lines.append(
                "registration accepted"
                if self.registration_accepted
                else f"registration rejected ({', '.join(self.registration_codes) or 'no code'})"
            )
        lines.append(f"{self.committed} writeback(s) committed")
        for episode in self.episodes:
            lines += episode.shown()
        finals = ", ".join(f"{h} {s} ({n})" for h, s, n in self.finals) or "none"
        lines.append(f"journal: {self.records} record(s), final: {finals}")
        return lines


def answer_of(system: ModelSystem, record: StepRecord) -> StepAnswer:
    """What ``record`` (a step ``system`` just ran) answered."""
    accepted: bool | None = None
    codes: tuple[str, ...] = ()
    if record.bad_install is not None:
        accepted = not record.bad_install
        codes = tuple(sorted({str(getattr(r, "code", r)) for r in record.bad_install}))
    elif record.step["op"] in ("install", "install_versioned", "install_periodic_report") and record.unsupported is None:
        accepted = record.rejected_install is None
    journal = system.journal()
    finals = tuple(
        sorted(
            (str(r.get("hook_id")), str(r.get("status")), len(r.get("intents") or ())) for r in journal if r.get("status") in FINAL_STATUSES
        )
    )
    return StepAnswer(
        escaped=record.escaped is not None,
        unsupported=record.unsupported,
        registration_accepted=accepted,
        registration_codes=codes,
        committed=len(system.committed()),
        episodes=tuple(_episode(e, system, _calls_before(system, e)) for e in record.episodes),
        finals=finals,
        records=len(journal),
        escaped_as=record.escaped.split(" ", 1)[0].split("(", 1)[0] if record.escaped else None,
        label=" ".join(str(record.step[k]) for k in ("op", "flaw", "action") if k in record.step),
    )


def _readings(system: ModelSystem, hook_id: str) -> frozenset[tuple[str, str | None]]:
    """The outcomes accepted alike for this hook's behaviour, where more than one is: SPEC section 0
    lets a hook that writes into its input fail as producer_failed or answer not_applicable; and a
    hook that fails on its first call only counts its calls wherever its provider runs (a process
    worker forked again after a restart counts from one again, a thread does not), so which call is
    its first is the testbed's, not the RFC's."""
    spec = system.hooks.get(hook_id)
    if spec is None:
        return frozenset()
    if spec.behaviour == FIRST_FAILS:
        first, later = expected(FIRST_FAILS, 1, {}), expected(FIRST_FAILS, 2, {})
        return frozenset({(first.status, first.code), (later.status, later.code)})
    also = ALSO.get(spec.behaviour)
    if also is None:
        return frozenset()
    first = expected(spec.behaviour, 1, {})
    return frozenset({(first.status, first.code), (also.status, also.code)})


def _calls_before(system: ModelSystem, episode: Episode) -> dict[str, int]:
    """Provider calls per hook for this episode's receipt in every earlier episode of the run:
    each call is an attempt (the reference counts one before each call), so a hook not called now
    after the profile's ``max_attempts`` of them was stopped by the retry cap."""
    counts: dict[str, int] = {}
    for earlier in system.episodes:
        if earlier is episode:
            break
        if earlier.receipt_id == episode.receipt_id:
            for call in earlier.calls:
                counts[call.hook_id] = counts.get(call.hook_id, 0) + 1
    return counts


def _episode(episode: Episode, system: ModelSystem, before: dict[str, int]) -> EpisodeAnswer:
    outcome = episode.outcome
    if outcome is None:
        return EpisodeAnswer(episode.kind, True, False, None, None, ())
    calls: dict[str, int] = {}
    for call in episode.calls:
        calls[call.hook_id] = calls.get(call.hook_id, 0) + 1
    hooks = tuple(
        sorted(
            (
                HookAnswer(
                    h.hook_id,
                    h.status,
                    h.failure_code,
                    len(h.intents),
                    calls.get(h.hook_id, 0),
                    h.attempts,
                    tuple(str(i.get("intent_id")) for i in h.intents),
                    _readings(system, h.hook_id),
                    calls.get(h.hook_id, 0) == 0 and max(h.attempts, before.get(h.hook_id, 0)) >= system.max_attempts,
                    system.hooks[h.hook_id].behaviour if h.hook_id in system.hooks else "",
                )
                for h in outcome.hooks
            ),
            key=lambda h: h.hook_id,
        )
    )
    path = outcome.rejection.path if outcome.rejection is not None else None
    return EpisodeAnswer(episode.kind, False, outcome.admitted, outcome.code, path, hooks)


@dataclass(frozen=True)
class Difference:
    """Where two answers to the same step part: each fact by name, in RFC or in profile terms."""

    rfc: tuple[str, ...]
    profile: tuple[str, ...]
    labels: dict[str, str] = field(default_factory=dict, compare=False)  # hook id -> behaviour; "" -> the step

    @property
    def key(self) -> str:
        """What kind of difference this is, stable across histories and hook ids (the soak keeps
        one history of each): the first fact that parts, in the order a step's effects follow
        (an escape, the registration, the primary, the dispatch, each hook's status, class,
        intents, calls, then the journal), with what the hook it parts on was installed to do
        (or, for a fact of the whole step, the step), never the hook's id."""
        fact = self.rfc[0] if self.rfc else self.profile[0]
        name, _, hook = fact.partition(" (")
        hook = hook.removesuffix(")")
        if name == ESCAPED:
            cause: str | None = hook  # what escaped, wherever in the history it surfaced
        else:
            cause = self.labels.get(hook) if hook else self.labels.get("")
        return f"{name} ({cause})" if cause else name

    @property
    def profile_kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(_kind(f) for f in self.profile))


def _kind(fact: str) -> str:
    return fact.split(" (", 1)[0]


def compare(a: StepAnswer, b: StepAnswer, excused: set[str] | None = None) -> Difference | None:
    """How ``b`` differs from ``a`` (None: alike, or one of them cannot express the step).

    ``excused`` (kept by the caller over one history, and added to here) holds the hooks whose
    answers parted only as SPEC section 0 allows (an open reading, a retry cap's number): their
    records in the journal may then differ too, on this step and every later one, in profile
    terms only."""
    if a.unsupported is not None or b.unsupported is not None:
        return None  # a refused step: nothing to compare (the run goes on, as the models do)
    excused = set() if excused is None else excused
    for ea, eb in zip(a.episodes, b.episodes, strict=False):
        by_id = {h.hook_id: h for h in eb.hooks}
        excused.update(h.hook_id for h in ea.hooks if (o := by_id.get(h.hook_id)) and (h.capped != o.capped or _open_reading(h, o)))
    rfc = list(_rfc_differences(a, b, excused))
    profile = list(_profile_differences(a, b))
    if a.finals != b.finals and not any(f.startswith("final journal records") for f in rfc):
        profile.append("records of a hook parted by an open reading")
    if not rfc and not profile:
        return None
    labels = {h.hook_id: h.behaviour for e in a.episodes for h in e.hooks if h.behaviour}
    labels[""] = a.label
    return Difference(tuple(dict.fromkeys(rfc)), tuple(dict.fromkeys(profile)), labels)


def _rfc_differences(a: StepAnswer, b: StepAnswer, excused: set[str]) -> Iterator[str]:
    if a.escaped != b.escaped:
        yield f"{ESCAPED} ({a.escaped_as or b.escaped_as})"
    if a.registration_accepted != b.registration_accepted:
        yield "registration accepted or rejected"
    if a.committed != b.committed:
        yield "primary writebacks committed"
    if len(a.episodes) != len(b.episodes):
        yield "dispatch episodes"
    for ea, eb in zip(a.episodes, b.episodes, strict=False):
        # A hook parted earlier only as SPEC section 0 allows may now be in another state on each
        # side (a failed record retried on one, a final one replayed on the other): left out.
        hooks_a = [h for h in ea.hooks if h.hook_id not in excused]
        hooks_b = [h for h in eb.hooks if h.hook_id not in excused]
        if ea.died != eb.died:
            yield "the process died inside the dispatch"
        elif _reached(ea.admitted, hooks_a) != _reached(eb.admitted, hooks_b):
            yield "source dispatched or refused"
        elif not _reached(ea.admitted, hooks_a):
            continue  # no provider called and nothing held on either side: how each says so is profile
        elif [h.hook_id for h in hooks_a] != [h.hook_id for h in hooks_b]:
            yield "admitted hooks"
        else:
            for ha, hb in zip(hooks_a, hooks_b, strict=True):
                if ha.status != hb.status:
                    yield f"hook status ({ha.hook_id})"
                elif ha.code != hb.code and ha.code in RFC_CODES and hb.code in RFC_CODES:
                    yield f"§10 failure class ({ha.hook_id})"
                if ha.intents != hb.intents:
                    yield f"intents held ({ha.hook_id})"
                if ha.calls != hb.calls:
                    yield f"provider calls ({ha.hook_id})"
    if [f for f in a.finals if f[0] not in excused] != [f for f in b.finals if f[0] not in excused]:
        yield "final journal records"


def _reached(admitted: bool, hooks: Sequence[HookAnswer]) -> bool:
    """Whether a dispatch reached any of ``hooks``: a provider called, an intent held, or a hook
    stopped at its retry cap (its record was read). A hook reported as refused before any call
    (LoopX reports one for a source it will not run) is not reached."""
    return admitted and any(h.calls or h.intents or h.capped for h in hooks)


def _open_reading(a: HookAnswer, b: HookAnswer) -> bool:
    here, there = (a.status, a.code), (b.status, b.code)
    return here != there and here in a.readings and there in a.readings


def _profile_differences(a: StepAnswer, b: StepAnswer) -> Iterator[str]:
    if a.registration_codes != b.registration_codes:
        yield "registration rejection codes"
    if a.records != b.records:
        yield "journal records (final or not)"
    for ea, eb in zip(a.episodes, b.episodes, strict=False):
        if (
            not _reached(ea.admitted, ea.hooks)
            and not _reached(eb.admitted, eb.hooks)
            and (ea.admitted, ea.hooks) != (eb.admitted, eb.hooks)
        ):
            yield "how a source no hook is called for is reported"
        if ea.code != eb.code:
            yield "dispatch-level code"
        if ea.rejection_path != eb.rejection_path:
            yield "rejection path"
        by_id = {h.hook_id: h for h in eb.hooks}
        for ha in ea.hooks:
            hb = by_id.get(ha.hook_id)
            if hb is None:
                continue
            if ha.capped != hb.capped:
                yield "the retry cap's number"
            elif _open_reading(ha, hb):
                yield "which call of a provider is its first" if ha.behaviour == FIRST_FAILS else "how a mutation attempt surfaces"
            elif ha.code != hb.code and not (ha.code in RFC_CODES and hb.code in RFC_CODES):
                yield "failure code name beyond the §10 classes"
            if ha.attempts != hb.attempts:
                yield "attempt counter"
            if len(ha.intent_ids) == len(hb.intent_ids) and ha.intent_ids != hb.intent_ids:
                yield "identity digest bytes"

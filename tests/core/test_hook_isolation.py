"""Hooks that must not reach each other, and configuration that must not reach a dispatch unchecked
(issue 16: repros r03, r04, r17, r23, r24 in the project's own words).

Built on the public API, as a host would compose the dispatcher: a registry with or without a
scanner of its own, and a dispatcher whose scanner knows the host's declared private names.
"""

from __future__ import annotations

import ast
import atexit
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from fakes._packets import (
    GENERIC_INTENT_KIND,
    GENERIC_PAYLOAD_SCHEMA,
    intent_for,
    not_applicable,
    proposed,
    source,
)
from fakes._packets import registration as _registration
from pwh import (
    BoundaryScanner,
    Dispatcher,
    IntentKindCatalog,
    MemoryJournal,
    Profile,
    ProfileRejected,
    RegistrationRejected,
    Registry,
    dispatch_id,
)
from pwh._core import codes

REG_V = "loopx_post_writeback_capability_hook_registration_v0"

ON = Profile(phase_enabled=True)


def registration(hook_id: str = "a.reporter", **overrides: Any) -> dict[str, Any]:
    """fakes' registration with a generous limit (10 s, not 500 ms) unless the test names one: a
    provider that must not time out still answers in time when a loaded machine forks its worker
    slowly; every test of a timeout here names its own limit."""
    return _registration(hook_id, **{**overrides, "budget": {"timeout_ms": 10000, **overrides.get("budget", {})}})


def compose(
    *,
    profile: Profile = ON,
    scanner: BoundaryScanner | None = None,
    registry_scanner: BoundaryScanner | None = None,
    payload_schema: Mapping[str, Any] = GENERIC_PAYLOAD_SCHEMA,
) -> tuple[Registry, Dispatcher]:
    catalog = IntentKindCatalog()
    catalog.register(GENERIC_INTENT_KIND, payload_schema)
    registry = Registry(catalog, scanner=registry_scanner)
    return registry, Dispatcher(registry, MemoryJournal(), profile, scanner=scanner)


class CallLog:
    """The hook ids providers were called with, in order, written by the providers themselves in
    whatever process they run (the reference calls them in a worker process): a file."""

    def __init__(self) -> None:
        handle, name = tempfile.mkstemp(prefix="pwh-calls-")
        os.close(handle)
        self.path = Path(name)
        atexit.register(self.path.unlink, missing_ok=True)

    def append(self, hook_id: str) -> None:
        with open(self.path, "a", encoding="utf-8") as log:
            log.write(hook_id + "\n")

    def seen(self) -> list[str]:
        return self.path.read_text("utf-8").split()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, list) and self.seen() == other

    def __iter__(self) -> Any:
        return iter(self.seen())

    def __contains__(self, hook_id: object) -> bool:
        return hook_id in self.seen()

    def __repr__(self) -> str:
        return repr(self.seen())


def calling(log: CallLog, answer: Callable[[Mapping[str, Any]], Any] | None = None) -> Callable[[Mapping[str, Any]], Any]:
    def produce(hook_input: Mapping[str, Any]) -> Any:
        log.append(hook_input["hook_id"])
        return answer(hook_input) if answer else proposed(intent_for(hook_input))

    return produce


def ends(outcome: Any) -> dict[str, tuple[str, str | None]]:
    return {h.hook_id: (h.status, h.failure_code) for h in outcome.hooks}


# -- each hook judged on its own input and ids (r03, r04) ------------------------------------------


@pytest.mark.parametrize("order", [("a.ci.acme.com", "b.reporter", "c.reporter"), ("a.reporter", "b.reporter", "z.ci.acme.com")])
def test_a_flagged_id_refuses_only_its_own_hook_wherever_it_sorts(order: tuple[str, ...]) -> None:
    registry, dispatcher = compose()  # the registry does not scan: the dispatcher must
    log = CallLog()
    for hook_id in order:
        registry.install(registration(hook_id), calling(log))
    outcome = dispatcher.dispatch(source())
    flagged = next(h for h in order if "acme" in h)
    assert ends(outcome)[flagged] == ("failed", codes.REGISTRATION_REJECTED)
    assert sorted(log) == sorted(h for h in order if h != flagged)
    assert all(ends(outcome)[h] == ("proposed", None) for h in order if h != flagged)
    assert "acme" not in json.dumps(dispatcher.journal.records())


def test_a_declared_private_name_in_an_id_never_reaches_the_journal() -> None:
    registry, dispatcher = compose(scanner=BoundaryScanner(private_names=["acme"]))
    log = CallLog()
    registry.install(registration("acme_ops.sync"), calling(log))
    registry.install(registration("b.witness"), calling(log, lambda i: not_applicable()))
    outcome = dispatcher.dispatch(source())
    assert ends(outcome) == {"acme_ops.sync": ("failed", codes.REGISTRATION_REJECTED), "b.witness": ("not_applicable", None)}
    assert log == ["b.witness"]
    records = dispatcher.journal.records()
    assert [r["hook_id"] for r in records] == ["b.witness"] and "acme" not in json.dumps(records)


def test_a_registry_with_a_scanner_refuses_the_id_at_install() -> None:
    registry, _ = compose(registry_scanner=BoundaryScanner(private_names=["acme"]))
    for hook_id, path in (("build.ci.acme.com", "$.hook_id"), ("acme_ops.sync", "$.hook_id")):
        with pytest.raises(RegistrationRejected) as caught:
            registry.install(registration(hook_id), calling(CallLog()))
        assert [r.path for r in caught.value.rejections][:1] == [path]
        assert "acme" not in str(caught.value)
    assert registry.hooks() == ()


# -- a failed hook frees its slot (r23) -------------------------------------------------------------


@pytest.mark.parametrize("first", ["raises", "times out", "answers badly", "is over a lowered ceiling"])
def test_a_failed_hook_does_not_take_a_hook_slot(first: str) -> None:
    import time

    def boom(_: Any) -> Any:
        raise RuntimeError("boom")

    answers = {
        "raises": boom,
        "times out": lambda i: time.sleep(0.5),
        "answers badly": lambda i: {"status": "maybe"},
        "is over a lowered ceiling": None,
    }
    profile = ON.with_(max_hooks_per_dispatch=2)
    if first == "is over a lowered ceiling":
        profile = profile.with_(budget_ceilings={**profile.budget_ceilings, "timeout_ms": 20000})
    registry, dispatcher = compose(profile=profile)
    log = CallLog()
    registry.install(
        registration("a.first", budget={"timeout_ms": {"times out": 20, "is over a lowered ceiling": 25000}.get(first, 10000)}),
        calling(log, answers[first]),
    )
    for hook_id in ("b.ok", "c.ok", "d.late"):
        registry.install(registration(hook_id), calling(log, lambda i: not_applicable()))
    outcome = dispatcher.dispatch(source())
    got = ends(outcome)
    assert got["a.first"][0] == "failed"
    assert got["b.ok"] == got["c.ok"] == ("not_applicable", None)
    assert got["d.late"] == ("failed", codes.DISPATCH_BUDGET_EXHAUSTED)  # both slots taken by accepted results
    assert "d.late" not in log


# -- registration and profile validated (r17, r24) --------------------------------------------------


@pytest.mark.parametrize("ref", ["#/definitions/nope", "https://schemas.invalid/note.json", "other.json#/x"])
def test_an_unresolvable_payload_schema_is_refused_when_registered(ref: str) -> None:
    catalog = IntentKindCatalog()
    with pytest.raises(RegistrationRejected) as caught:
        catalog.register("synthetic.note", {"type": "object", "properties": {"n": {"$ref": ref}}})
    assert [(r.code, r.path) for r in caught.value.rejections] == [(codes.REGISTRATION_REJECTED, "$.payload_schema")]
    assert "synthetic.note" not in catalog.kinds


def test_resolvable_references_and_ref_shaped_data_are_accepted() -> None:
    catalog = IntentKindCatalog()
    catalog.register("synthetic.a", {"$defs": {"n": {"type": "integer"}}, "properties": {"n": {"$ref": "#/$defs/n"}}})
    catalog.register("synthetic.b", {"const": {"$ref": "not a reference, a value"}})
    assert catalog.kinds == {"synthetic.a", "synthetic.b"}


def test_a_payload_validator_that_fails_rejects_its_intent_only() -> None:
    registry, dispatcher = compose()

    class Broken:
        @property
        def schema(self) -> Any:
            raise LookupError("a validator that cannot run")

        def is_valid(self, _: Any) -> bool:
            raise LookupError("a validator that cannot run")

        def iter_errors(self, _: Any) -> Any:
            raise LookupError("a validator that cannot run")

    registry.catalog._validators[GENERIC_INTENT_KIND] = Broken()  # a catalog built some other way
    log = CallLog()
    registry.install(registration("a.hook"), calling(log))
    registry.install(registration("z.witness"), calling(log, lambda i: not_applicable()))
    outcome = dispatcher.dispatch(source())
    assert ends(outcome) == {"a.hook": ("failed", codes.RESULT_CONTRACT_REJECTED), "z.witness": ("not_applicable", None)}
    assert [r["hook_id"] for r in dispatcher.journal.records()] == ["a.hook", "z.witness"]


BAD_PROFILES = [
    ({"phase_enabled": "false"}, "phase_enabled"),
    ({"phase_enabled": 1}, "phase_enabled"),
    ({"phase_enabled": True, "allowlist": "billing.report"}, "allowlist"),
    ({"phase_enabled": True, "allowlist": ["ok.hook", ""]}, "allowlist"),
    ({"phase_enabled": True, "max_hooks_per_dispatch": "4"}, "max_hooks_per_dispatch"),
    ({"phase_enabled": True, "max_attempts": 0}, "max_attempts"),
    ({"phase_enabled": True, "max_result_bytes_per_dispatch": 2.5}, "max_result_bytes_per_dispatch"),
    ({"phase_enabled": True, "max_intents_per_dispatch": True}, "max_intents_per_dispatch"),
    ({"phase_enabled": True, "budget_ceilings": {"timeout_ms": "500"}}, "budget_ceilings.timeout_ms"),
    ({"phase_enabled": True, "budget_ceilings": {"timeout": 500}}, "budget_ceilings"),
    ({"phase_enabled": True, "budget_ceilings": [("timeout_ms", 5)]}, "budget_ceilings"),
]


@pytest.mark.parametrize(("values", "field"), BAD_PROFILES)
def test_a_profile_of_the_wrong_type_calls_nothing_and_names_its_field(values: dict[str, Any], field: str) -> None:
    profile = Profile(**values)
    assert [p.field for p in profile.problems][:1] == [field]
    with pytest.raises(ProfileRejected, match=rf"^Profile\.{field.split('.')[0]}"):
        profile.check()
    registry, dispatcher = compose(profile=profile)
    log = CallLog()
    registry.install(registration("billing.rep"), calling(log))
    outcome = dispatcher.dispatch(source())
    assert (outcome.admitted, outcome.code, outcome.rejection.path if outcome.rejection else None) == (
        False,
        codes.PROFILE_REJECTED,
        f"$.profile.{field}",
    )
    assert log == [] and dispatcher.journal.records() == []


def test_a_well_typed_profile_has_no_problems_and_an_allowlist_matches_whole_ids() -> None:
    profile = Profile(phase_enabled=True, allowlist=["billing.report"]).check()
    assert profile.problems == () and profile.allowlist == frozenset({"billing.report"})
    assert profile.admits("billing.report") and not profile.admits("billing.rep")


# -- a provider's call ends with it: nothing of it answers for, or outlives into, another (n03, n12) --


def _worker_local(name: str, check: Callable[[Any], bool]) -> Any:
    """What a provider can dig out of the worker's memory: a local of the worker code that called it."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        value = frame.f_locals.get(name)
        if check(value):
            return value
        frame = frame.f_back
    return None


def _answer_pipes() -> list[int]:
    """The worker's answer pipe, as the provider finds it in the worker's locals."""
    fd = _worker_local("resp", lambda v: type(v) is int)
    return [] if fd is None else [fd]


def _own_token() -> bytes:
    """The token of the call the provider is serving, from the worker's locals."""
    return _worker_local("token", lambda v: isinstance(v, bytes) and len(v) == 16) or bytes(16)


def _forged_frames(value: Any) -> list[bytes]:
    """``value`` as an answer frame, in every layout the worker has used: the old one without a
    token, and the present one with the token of the forger's own call."""
    data = json.dumps(value).encode()
    return [struct.pack("<cdI", b"P", 0.0, len(data)) + data, struct.pack("<c16sI", b"P", _own_token(), len(data)) + data]


def _settled(path: Path, *, quiet: float = 0.5, guard: float = 60.0) -> bool:
    """Whether the beat file stops changing for ``quiet`` seconds (``guard``: a hang guard)."""
    deadline = time.monotonic() + guard
    last, since = _beats(path), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = _beats(path)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return True
    return False


def _beats(path: Path) -> int:
    try:
        return int(path.read_text() or -1)
    except (OSError, ValueError):
        return -1


def test_an_answer_written_on_the_worker_s_pipe_is_never_taken_for_another_hook_s(tmp_path: Path) -> None:
    registry, dispatcher = compose()
    log = CallLog()
    victim_source = source()

    def hostile(hook_input: Mapping[str, Any]) -> Any:
        log.append(hook_input["hook_id"])
        victim_id = dispatch_id(victim_source["receipt_id"], "b.victim", REG_V, victim_source["event_kind"])
        forged = intent_for(dict(hook_input, hook_id="b.victim", capability_id="b", dispatch_id=victim_id))
        for fd in _answer_pipes():
            for layout in range(2):
                os.write(fd, _forged_frames(not_applicable())[layout] + _forged_frames(proposed(forged))[layout])
        time.sleep(5)

    registry.install(registration("a.hostile", budget={"timeout_ms": 300}), hostile)
    registry.install(registration("b.victim"), calling(log, lambda i: not_applicable()))
    try:
        outcome = dispatcher.dispatch(victim_source)
        assert log == ["a.hostile", "b.victim"]  # the victim's own provider was called
        assert ends(outcome) == {"a.hostile": ("failed", ends(outcome)["a.hostile"][1]), "b.victim": ("not_applicable", None)}
        assert ends(outcome)["a.hostile"][1] in (codes.PRODUCER_FAILED, codes.PRODUCER_TIMED_OUT)
        victim = next(r for r in dispatcher.journal.records() if r["hook_id"] == "b.victim")
        assert victim["status"] == "not_applicable" and not victim.get("intents")
    finally:
        dispatcher.close()


def test_a_provider_that_answers_for_itself_and_runs_on_is_stopped_at_its_limit(tmp_path: Path) -> None:
    beat = tmp_path / "beat"
    registry, dispatcher = compose()

    def sneaky(hook_input: Mapping[str, Any]) -> Any:
        for fd in _answer_pipes():
            for frame in _forged_frames(not_applicable()):
                os.write(fd, frame)
        for n in range(100):
            beat.write_text(str(n))
            time.sleep(0.05)

    registry.install(registration("a.sneaky", budget={"timeout_ms": 100}), sneaky)
    try:
        outcome = dispatcher.dispatch(source())
        assert ends(outcome)["a.sneaky"][0] == "failed"
        time.sleep(0.3)
        seen = _beats(beat)
        time.sleep(0.5)
        assert _beats(beat) == seen  # stopped: no beat since the dispatch returned
    finally:
        dispatcher.close()


def test_a_thread_a_provider_leaves_running_ends_with_its_call(tmp_path: Path) -> None:
    beat, started = tmp_path / "beat", tmp_path / "started"
    registry, dispatcher = compose()

    def spawner(hook_input: Mapping[str, Any]) -> Any:
        # The second call starts nothing. Marked before the thread starts: on a busy machine the
        # first worker may be killed before its thread writes a single beat, and a second call
        # that read "no beat yet" as "first call" started a thread of its own.
        if started.exists():
            return not_applicable()
        started.write_text("1")

        def loop() -> None:
            for n in range(100_000):  # beats for half an hour unless its process ends
                beat.write_text(str(n))
                time.sleep(0.02)

        threading.Thread(target=loop, daemon=True).start()
        return not_applicable()

    registry.install(registration("a.spawner", budget={"timeout_ms": 10000}), spawner)  # must not time out: generous
    try:
        assert ends(dispatcher.dispatch(source(1))) == {"a.spawner": ("not_applicable", None)}
        # The thread ends with the worker its call ran in: the beat stops (however late a busy
        # machine lets the worker go); a thread that outlived it would beat on and never settle.
        assert _settled(beat), "the provider's thread kept running after its call"
        seen = _beats(beat)
        dispatcher.dispatch(source(2))  # the next dispatch gets a worker with nothing of the last call in it
        time.sleep(0.4)
        assert _beats(beat) == seen
    finally:
        dispatcher.close()


_SIGNALLING_HOST = textwrap.dedent("""
    import os, signal, sys, time
    from pwh import Dispatcher, IntentKindCatalog, MemoryJournal, Profile, Registry
    from pwh._harness.examples import example_receipt, example_registration
    NA = {"schema_version": "loopx_post_writeback_hook_result_v0", "status": "not_applicable", "intents": []}
    SIG = getattr(signal, sys.argv[1])
    HOST, SESSION = os.getpid(), os.getsid(0)
    catalog = IntentKindCatalog(); catalog.register("x.note", {"type": "object"})
    registry = Registry(catalog)
    def hostile(i):
        if os.getppid() == HOST or os.getsid(0) == SESSION or os.getpgid(0) == os.getpgid(HOST):
            return {"schema_version": "loopx_post_writeback_hook_result_v0", "status": "not_applicable", "intents": [], "x": "next to the host"}
        os.kill(os.getppid(), SIG)
        os.killpg(0, SIG)
        time.sleep(1)
        return NA
    registry.install(example_registration("a.hostile", intent_kinds=["x.note"], budget={"timeout_ms": 300}), hostile)
    registry.install(example_registration("z.witness", intent_kinds=["x.note"], budget={"timeout_ms": 10000}), lambda i: NA)
    d = Dispatcher(registry, MemoryJournal(), Profile(phase_enabled=True))
    try:
        out = d.dispatch(example_receipt(1))
    except BaseException as exc:
        print("escaped", type(exc).__name__, flush=True)
        raise SystemExit(1)
    print([(h.hook_id, h.status, h.failure_code) for h in out.hooks], flush=True)
    d.close()
    print("host alive", flush=True)
""")


@pytest.mark.parametrize("name", ["SIGINT", "SIGSTOP", "SIGTERM", "SIGUSR1", "SIGKILL"])
def test_a_provider_signalling_its_parent_or_group_never_reaches_the_host(name: str) -> None:
    p = subprocess.Popen([sys.executable, "-c", _SIGNALLING_HOST, name], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGCONT)
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"the host was frozen by its provider's {name}")
    lines = out.splitlines()
    assert p.returncode == 0 and lines[-1:] == ["host alive"], (p.returncode, out, err[-2000:])
    hostile, witness = ast.literal_eval(lines[0])
    assert hostile[1] == "failed" and hostile[2] in ("producer_failed", "producer_timed_out")
    assert witness == ("z.witness", "not_applicable", None)

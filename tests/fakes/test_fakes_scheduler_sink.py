"""Fake scheduler, governed admission, sink and network guard: the separate effect authority.

JNL-7 (dedupe on intent_id), M09 (a requested scope is only a request), M10/M11 (the trigger
intent reaches the capability reducer through the scheduler), M12 (no sink or network call
without separate governed admission), REC-1 (readback before retry).
"""

from __future__ import annotations

import functools
import socket
import threading
import types
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakes._scheduler import (
    AdmissionRefused,
    AdmissionTicket,
    FakeScheduler,
    GovernedAdmission,
)
from fakes._sink import (
    FakeSink,
    SimulatedProviderCrash,
    SinkReceipt,
    SinkViolation,
    blind_retry_recover,
    recover_effect,
)
from pwh import intent_id
from pwh._harness.network_guard import NetworkRefused, guard_active, refuse_outbound
from pwh.capabilities import periodic_report as pr

SINK_SCOPE = "report_sink.write"


def hook_input(event_kind: str, transition: str, segment_ref: str, receipt: int = 0) -> dict[str, Any]:
    return {
        "schema_version": "loopx_post_writeback_hook_input_v0",
        "dispatch_id": f"pwh_{receipt:064x}",
        "hook_id": pr.HOOK_ID,
        "capability_id": pr.CAPABILITY_ID,
        "source": {"event_kind": event_kind, "receipt_id": f"receipt_{receipt}"},
        "projection": {
            "schema_version": "loopx_post_writeback_event_projection_v0",
            "transition": transition,
            "segment_ref": segment_ref,
            "fact_refs": [f"fact_{receipt}"],
        },
        "boundary": {},
    }


def trigger_intent(n: int, transition: str = "segment_completed", **changes: Any) -> dict[str, Any]:
    """A validated trigger-evaluation intent as the producer proposes it, with optional changes."""
    event_kind = "replan_recorded" if transition == "replanned" else "todo_completed"
    result = pr.produce(hook_input(event_kind, transition, f"segment_{n}", receipt=n))
    intent = {**result["intents"][0], **changes}
    intent["intent_id"] = intent_id(intent["source_dispatch_id"], intent["intent_kind"], intent["policy_version"], intent["payload"])
    return intent


class CountingReducer:
    """Wraps the real reducer so a test can see every call that reached it."""

    def __init__(self, threshold: int = 2) -> None:
        self.inner = pr.TriggerReducer(threshold)
        self.seen: list[str] = []

    def __call__(self, intent: Mapping[str, Any]) -> pr.TriggerDecision:
        self.seen.append(intent["intent_id"])
        return self.inner.reduce(intent)


def scheduler(allowed: frozenset[str] = frozenset(), **kw: Any) -> tuple[FakeScheduler, CountingReducer]:
    reducer = CountingReducer()
    admission = GovernedAdmission(allowed_write_scopes=allowed, **kw)
    return FakeScheduler(admission, {pr.INTENT_KIND: reducer}), reducer


# -- JNL-7: the executor deduplicates again on intent_id ---------------------------------------


def test_redelivered_intent_is_recorded_as_duplicate_and_never_re_executed() -> None:
    sched, reducer = scheduler()
    intent = trigger_intent(1)
    first = sched.consume([intent, types.MappingProxyType(dict(intent))])
    second = sched.consume([intent])
    assert [e.status for e in first + second] == ["executed", "duplicate", "duplicate"]
    assert sched.executions == {intent["intent_id"]: 1}
    assert reducer.seen == [intent["intent_id"]]
    assert len(sched.admission.decisions) == 1  # the duplicate is not even re-admitted
    assert len(sched.decisions) == 1
    assert [e.sequence for e in sched.entries] == [0, 1, 2]


def test_same_intent_id_with_different_content_is_a_flagged_duplicate() -> None:
    sched, reducer = scheduler()
    intent = trigger_intent(1)
    sched.consume([intent])
    (entry,) = sched.consume([{**intent, "failure_policy": "retry_forever"}])
    assert (entry.status, entry.code) == ("duplicate", "duplicate_intent_id_content_differs")
    assert len(reducer.seen) == 1


def test_distinct_intents_each_execute_once() -> None:
    sched, reducer = scheduler()
    intents = [trigger_intent(i) for i in range(4)]
    sched.consume(intents + intents[::-1])
    assert set(sched.executions.values()) == {1}
    assert reducer.seen == [i["intent_id"] for i in intents]


# -- M09: a requested scope is judged by the admission's own policy -----------------------------


def test_granted_scope_is_exactly_what_was_requested_never_the_wider_allowance() -> None:
    sched, _ = scheduler(frozenset({"report_sink.write", "doc.update", "mail.send"}))
    entries = sched.consume(
        [
            trigger_intent(1, requested_write_scope=["doc.update"]),
            trigger_intent(2, requested_write_scope=[]),
            trigger_intent(3, requested_write_scope=["mail.send", "mail.send"]),
        ]
    )
    assert [(e.status, e.granted_scope) for e in entries] == [
        ("executed", ("doc.update",)),
        ("executed", ()),
        ("executed", ("mail.send",)),
    ]


@settings(max_examples=100)
@given(
    requested=st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=4),
    allowed=st.frozensets(st.sampled_from(["a", "b", "c", "d"])),
)
def test_admission_never_widens_and_only_grants_a_subset_of_its_policy(requested: list[str], allowed: frozenset[str]) -> None:
    admission = GovernedAdmission(allowed_write_scopes=allowed)
    decision = admission.admit(trigger_intent(1, requested_write_scope=requested))
    if set(requested) <= allowed:
        assert decision.admitted and decision.code is None
        assert set(decision.granted_scope) == set(requested)
        assert len(decision.granted_scope) == len(set(requested))
    else:
        assert not decision.admitted
        assert decision.code == "write_scope_not_admitted"
        assert decision.granted_scope == ()


def test_denied_scope_never_reaches_the_reducer() -> None:
    sched, reducer = scheduler()  # default policy: no write scope at all
    intent = trigger_intent(1, requested_write_scope=[SINK_SCOPE])
    (entry,) = sched.consume([intent])
    assert (entry.status, entry.code, entry.granted_scope) == ("denied", "write_scope_not_admitted", ())
    assert reducer.seen == [] and sched.executions == {} and sched.decisions == []
    assert sched.consume([intent])[0].status == "duplicate"  # a redelivery does not sneak through
    assert reducer.seen == []


@pytest.mark.parametrize("flag", ["grants_new_action_authority", "external_write_performed"])
def test_authority_claims_are_denied_before_the_reducer(flag: str) -> None:
    sched, reducer = scheduler(frozenset({SINK_SCOPE}))
    (entry,) = sched.consume([trigger_intent(1, **{flag: True})])
    assert (entry.status, entry.code) == ("denied", "authority_claim_rejected")
    assert reducer.seen == []


def test_kind_outside_the_admission_allowlist_or_without_reducer_is_not_executed() -> None:
    sched, reducer = scheduler(allowed_intent_kinds=frozenset({"other.kind"}))
    assert sched.consume([trigger_intent(1)])[0].code == "intent_kind_not_admitted"
    bare = FakeScheduler(GovernedAdmission(), {})
    (entry,) = bare.consume([trigger_intent(2)])
    assert (entry.status, entry.code) == ("unrouted", "no_reducer_for_intent_kind")
    assert reducer.seen == [] and bare.executions == {}


def test_malformed_receipts_and_reducer_refusals_are_compact_codes() -> None:
    sched, reducer = scheduler()
    forged_payload = {"transition": "replanned", "segment_ref": "s", "source_event_refs": []}
    tampered = {**trigger_intent(1), "payload": forged_payload}  # intent_id no longer matches
    garbage: list[Any] = [None, {"intent_id": 3}, {"schema_version": "x", "intent_id": "i"}]
    entries = sched.consume(garbage + [tampered])
    assert [(e.status, e.code) for e in entries] == [
        ("rejected", "intent_receipt_rejected"),
        ("rejected", "intent_receipt_rejected"),
        ("rejected", "intent_receipt_rejected"),
        ("reducer_rejected", "trigger_intent_rejected"),
    ]
    assert sched.executions == {tampered["intent_id"]: 1}


def test_a_reducer_crash_is_recorded_as_a_compact_code_without_its_text() -> None:
    def explode(intent: Mapping[str, Any]) -> Any:
        raise RuntimeError("token=hunter2 at /home/someone/private")

    sched = FakeScheduler(GovernedAdmission(), {pr.INTENT_KIND: explode})
    (entry,) = sched.consume([trigger_intent(1)])
    assert (entry.status, entry.code) == ("reducer_rejected", "reducer_failed")
    assert "hunter2" not in repr(entry.to_json()) and "/home" not in repr(sched.entries)


# -- M10 / M11: the trigger intent reaches the capability reducer through the scheduler ---------


def test_completion_threshold_and_replan_decisions_come_through_the_scheduler() -> None:
    sched, _ = scheduler()
    sink = FakeSink()
    with refuse_outbound() as guard:
        entries = sched.consume([trigger_intent(1), trigger_intent(2), trigger_intent(3), trigger_intent(4, "replanned")])
    assert guard.attempts == []  # M12: not even a loopback connection on the way
    assert [e.status for e in entries] == ["executed"] * 4
    assert [(d["report_due"], d["reason"]) for d in sched.decisions] == [
        (False, "below_threshold"),
        (True, "completion_threshold_reached"),
        (False, "below_threshold"),
        (True, "replan_transition"),
    ]
    # It stops before any sink: no ticket was ever issued, the sink was never touched.
    assert sched.admission.tickets_issued == 0
    assert not sink.touched and sink.effect_count() == 0


# -- M12: the sink only accepts a separately governed admission ---------------------------------


def admitted_ticket(scope: tuple[str, ...] = (SINK_SCOPE,)) -> tuple[GovernedAdmission, AdmissionTicket]:
    admission = GovernedAdmission(allowed_write_scopes=frozenset({SINK_SCOPE}))
    intent = trigger_intent(9, requested_write_scope=[SINK_SCOPE])
    assert admission.admit(intent).admitted
    return admission, admission.issue_ticket(intent["intent_id"], scope)


def test_sink_call_without_a_ticket_is_a_violation_and_is_recorded() -> None:
    sink = FakeSink()
    with pytest.raises(SinkViolation):
        sink.write("report:week-1", {"n": 1}, admission=None)
    assert sink.violated
    assert [(c.effect_key, c.outcome) for c in sink.calls] == [("report:week-1", "refused")]
    assert sink.effect_count() == 0 and sink.readback("report:week-1") is None


def test_forged_foreign_or_too_narrow_tickets_are_violations() -> None:
    admission, ticket = admitted_ticket()
    forged = AdmissionTicket(ticket.intent_id, ticket.scope, "0" * 32, admission)
    other_admission, other_ticket = admitted_ticket()
    _, narrow = admitted_ticket(scope=())
    for candidate, sink in (
        (forged, FakeSink()),
        (other_ticket, FakeSink(trusted=admission)),
        (narrow, FakeSink()),
        ("a ticket, honest", FakeSink()),
    ):
        with pytest.raises(SinkViolation):
            sink.write("report:week-1", {}, admission=candidate)  # type: ignore[arg-type]
        assert sink.violated and sink.effect_count() == 0


def test_tickets_are_only_issued_within_an_admitted_grant() -> None:
    admission = GovernedAdmission(allowed_write_scopes=frozenset({SINK_SCOPE}))
    unscoped = trigger_intent(1)
    denied = trigger_intent(2, requested_write_scope=["mail.send"])
    admission.admit(unscoped)
    admission.admit(denied)
    for key, scope in (
        (unscoped["intent_id"], [SINK_SCOPE]),  # admitted, but never asked for the sink
        (denied["intent_id"], ["mail.send"]),  # denied
        ("pwi_never_seen", [SINK_SCOPE]),
    ):
        with pytest.raises(AdmissionRefused) as caught:
            admission.issue_ticket(key, scope)
        assert caught.value.code == "ticket_not_admitted"
    assert admission.tickets_issued == 0


def test_a_governed_ticket_is_the_legal_path_and_writes_are_idempotent_per_key() -> None:
    admission, ticket = admitted_ticket()
    sink = FakeSink(trusted=admission)
    first = sink.write("report:week-1", {"n": 1}, admission=ticket)
    again = sink.write("report:week-1", {"n": 1}, admission=ticket)
    assert again == first == sink.readback("report:week-1")
    assert isinstance(first, SinkReceipt) and first.intent_id == ticket.intent_id
    assert [c.outcome for c in sink.calls] == ["written", "replayed"]
    assert sink.effect_count() == 1 and not sink.violated


# -- REC-1: recover a crash after an external effect by readback, never by blind retry ----------


def crashed_sink(idempotent: bool) -> tuple[FakeSink, AdmissionTicket]:
    admission, ticket = admitted_ticket()
    sink = FakeSink(trusted=admission, idempotent=idempotent)
    sink.crash_after_effect = True
    with pytest.raises(SimulatedProviderCrash):
        sink.write("report:week-1", {"n": 1}, admission=ticket)
    assert sink.effect_count("report:week-1") == 1  # the effect happened; the caller never heard
    assert not sink.crash_after_effect  # one-shot
    return sink, ticket


@pytest.mark.parametrize("idempotent", [True, False])
def test_readback_recovery_returns_the_existing_effect_without_retrying(idempotent: bool) -> None:
    sink, ticket = crashed_sink(idempotent)
    retries: list[int] = []

    def retry() -> SinkReceipt:
        retries.append(1)
        return sink.write("report:week-1", {"n": 1}, admission=ticket)

    receipt = recover_effect("report:week-1", sink, retry)
    assert receipt == sink.readback("report:week-1")
    assert retries == [] and len(sink.calls) == 1 and sink.effect_count() == 1


def test_blind_retry_calls_the_sink_again_and_duplicates_a_non_idempotent_effect() -> None:
    for idempotent, effects in ((True, 1), (False, 2)):
        sink, ticket = crashed_sink(idempotent)
        blind_retry_recover("report:week-1", sink, functools.partial(sink.write, "report:week-1", {"n": 1}, admission=ticket))
        assert len(sink.calls) == 2  # a second external call either way
        assert sink.effect_count("report:week-1") == effects  # and a duplicate mail, say


def test_readback_recovery_retries_only_an_effect_that_never_happened() -> None:
    admission, ticket = admitted_ticket()
    sink = FakeSink(trusted=admission)
    receipt = recover_effect("report:week-2", sink, lambda: sink.write("report:week-2", {"n": 2}, admission=ticket))
    assert receipt == sink.readback("report:week-2") and sink.effect_count() == 1


# -- M12: no outbound network while the guard is active -----------------------------------------

TEST_NET_1 = ("192.0.2.1", 9)  # RFC 5737 documentation address: never routed


class Tripwire:
    """Stands in for the real network primitives: reaching one means the guard let a call through.

    Installed *under* the guard, so a broken guard trips it instead of sending anything.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reached: list[str] = []
        for name in ("connect", "connect_ex", "sendto", "sendmsg"):
            monkeypatch.setattr(socket.socket, name, self._trip(name))
        monkeypatch.setattr(socket, "create_connection", self._trip("create_connection"))
        monkeypatch.setattr(socket, "getaddrinfo", self._trip("getaddrinfo"))

    def _trip(self, name: str) -> Any:
        def trip(*args: Any, **kwargs: Any) -> Any:
            self.reached.append(name)
            raise ConnectionAbortedError("tripwire: the real network call was reached")

        return trip


def test_non_loopback_connect_is_refused_before_the_real_call(monkeypatch: pytest.MonkeyPatch) -> None:
    wire = Tripwire(monkeypatch)
    with refuse_outbound() as guard, socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        with pytest.raises(NetworkRefused) as caught:
            sock.connect(TEST_NET_1)
        with pytest.raises(NetworkRefused):
            sock.connect_ex(TEST_NET_1)
    assert wire.reached == []  # refused before the real call: not a packet left
    assert isinstance(caught.value, OSError)
    assert [(a.api, a.family, a.loopback, a.refused) for a in guard.attempts] == [
        ("connect", "AF_INET", False, True),
        ("connect_ex", "AF_INET", False, True),
    ]
    published = repr(guard.attempts) + str(caught.value) + repr([a.to_json() for a in guard.attempts])
    assert "192.0.2" not in published


def test_other_outbound_paths_are_refused_before_the_real_call(monkeypatch: pytest.MonkeyPatch) -> None:
    wire = Tripwire(monkeypatch)
    with refuse_outbound() as guard:
        with pytest.raises(NetworkRefused):
            socket.create_connection(TEST_NET_1, timeout=0.5)
        with pytest.raises(NetworkRefused):
            socket.getaddrinfo("report-host.invalid", 443)  # no DNS query leaves either
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            with pytest.raises(NetworkRefused):
                udp.sendto(b"x", TEST_NET_1)
            with pytest.raises(NetworkRefused):
                udp.sendmsg([b"x"], [], 0, TEST_NET_1)
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as six:
            with pytest.raises(NetworkRefused):
                six.connect(("2001:db8::1", 9, 0, 0))
    assert wire.reached == []
    assert [(a.api, a.loopback, a.refused) for a in guard.attempts] == [
        ("create_connection", False, True),
        ("getaddrinfo", False, True),
        ("sendto", False, True),
        ("sendmsg", False, True),
        ("connect", False, True),
    ]


def test_a_real_socket_to_test_net_is_refused_and_left_unconnected() -> None:
    with refuse_outbound(), socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        with pytest.raises(NetworkRefused):
            sock.connect(TEST_NET_1)
        with pytest.raises(OSError) as not_connected:
            sock.getpeername()
        assert not isinstance(not_connected.value, NetworkRefused)


def test_loopback_server_and_client_work_inside_the_guard() -> None:
    with refuse_outbound() as guard, socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        accepted: list[bytes] = []

        def serve() -> None:
            conn, _ = server.accept()
            with conn:
                accepted.append(conn.recv(16))
                conn.sendall(b"pong")

        thread = threading.Thread(target=serve)
        thread.start()
        try:
            with socket.create_connection(("localhost", port), timeout=5) as client:
                client.sendall(b"ping")
                assert client.recv(16) == b"pong"
        finally:
            thread.join(timeout=5)
        assert accepted == [b"ping"]
    assert guard.refused == [] and any(a.loopback for a in guard.attempts)


def test_unix_sockets_stay_allowed(tmp_path: Any) -> None:
    path = str(tmp_path / "s")
    with refuse_outbound(), socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen(1)
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
            conn, _ = server.accept()
            conn.close()


def test_guard_restores_everything_on_exit_even_after_an_exception_and_nests() -> None:
    originals = (
        vars(socket.socket).get("connect"),
        vars(socket.socket).get("connect_ex"),
        socket.create_connection,
        socket.getaddrinfo,
    )

    def current() -> tuple[Any, ...]:
        return (
            vars(socket.socket).get("connect"),
            vars(socket.socket).get("connect_ex"),
            socket.create_connection,
            socket.getaddrinfo,
        )

    with pytest.raises(ZeroDivisionError):
        with refuse_outbound():
            1 / 0  # noqa: B018
    assert current() == originals and not guard_active()

    with refuse_outbound() as outer:
        with refuse_outbound() as inner:
            with pytest.raises(NetworkRefused), socket.socket() as s:
                s.connect(TEST_NET_1)
        assert guard_active()  # the outer block still guards after the inner one closed
        with pytest.raises(NetworkRefused), socket.socket() as s:
            s.connect(TEST_NET_1)
    assert current() == originals and not guard_active()
    assert (len(inner.refused), len(outer.refused)) == (1, 2)


# -- the one guard's stricter answers (issue 17: where the scenario and campaign guards disagreed) --


@pytest.mark.parametrize(
    "call",
    [
        lambda: socket.gethostbyname("report-host.invalid"),
        lambda: socket.gethostbyname_ex("report-host.invalid"),
        lambda: socket.gethostbyaddr("192.0.2.10"),
        lambda: socket.getnameinfo(("192.0.2.10", 80), 0),
        lambda: socket.getaddrinfo("", 80),
    ],
    ids=["gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo", "getaddrinfo-empty-name"],
)
def test_every_dns_entry_point_is_refused_before_the_resolver_runs(monkeypatch: pytest.MonkeyPatch, call: Any) -> None:
    reached: list[str] = []
    for name in ("gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo", "getaddrinfo"):
        monkeypatch.setattr(socket, name, lambda *a, _n=name, **k: reached.append(_n))
    with refuse_outbound() as guard:
        with pytest.raises(NetworkRefused):
            call()
    assert reached == [] and len(guard.refused) == 1


@pytest.mark.parametrize("host", ["localhost.localdomain", "ip6-localhost", "x.localhost", "::ffff:127.0.0.1", "0.0.0.0", "::"])
def test_names_and_forms_a_resolver_or_the_kernel_might_send_elsewhere_are_refused(host: str) -> None:
    with refuse_outbound(), socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        with pytest.raises(NetworkRefused):
            s.connect((host, 9))


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST.", "127.0.0.1", "127.1.2.3", "::1"])
def test_loopback_literals_and_the_exact_name_localhost_stay_allowed(monkeypatch: pytest.MonkeyPatch, host: str) -> None:
    monkeypatch.setattr(socket, "gethostbyname", lambda h: "127.0.0.1")
    with refuse_outbound() as guard:
        assert socket.gethostbyname(host) == "127.0.0.1"
        socket.getaddrinfo(None, 80)  # the local wildcard: nothing is resolved, nothing judged
    assert guard.refused == [] and [a.api for a in guard.attempts] == ["gethostbyname"]


def test_the_scenario_guard_refuses_dns() -> None:
    """Each scenario runs under the one guard (scenarios/conftest.py): a host-name lookup there
    is refused too (the scenario guard used to let gethostbyname resolve)."""
    import scenarios.conftest as wiring

    assert wiring.refuse_outbound is refuse_outbound  # the fixture's guard is this one
    with wiring.refuse_outbound() as guard:
        with pytest.raises(NetworkRefused):
            socket.gethostbyname("report-host.invalid")
    assert [a.api for a in guard.refused] == ["gethostbyname"] and not guard_active()

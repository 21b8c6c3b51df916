"""The seam as a protocol (pwh/_suts/stdio): values cross unchanged, an implementation that
answers outside the protocol is the adapter's fault (exit 2, one line, no verdict on the RFC),
one process serves many instances that share nothing, a process that dies fails its instances
and the next gets a fresh one, and no process outlives the harness. The reference served over
stdio earning its in-process verdict on the whole matrix is tests/suts/test_stdio_matrix_*.py."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pwh import Profile
from pwh._harness.examples import example_receipt, example_registration
from pwh._suts.seam import SUTLoadError, load_sut
from pwh._suts.stdio import ProtocolError, StdioSUT, client
from pwh._suts.stdio.client import StdioWriteback
from pwh._suts.stdio.protocol import check
from pwh._suts.wire import decode, encode
from pwh._suts.writeback_seam import writeback_boundary_of

ROOT = Path(__file__).resolve().parents[2]
SERVED_ADAPTERS = "stdio:" + sys.executable + " -m pwh._suts.stdio.serve tests.suts.stdio_impls.served:"
MISBEHAVING = ROOT / "tests" / "suts" / "stdio_impls" / "misbehaving.py"
SERVED = "stdio:" + sys.executable + " -m pwh._suts.stdio.serve reference"
TINY_JS = ROOT / "tests" / "suts" / "stdio_impls" / "tiny_dispatcher.mjs"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _open(spec: str, **options: Any) -> StdioSUT:
    sut = load_sut(spec, **options)
    assert isinstance(sut, StdioSUT)
    return sut


@pytest.fixture(autouse=True)
def no_process_left() -> Iterator[None]:
    """Every implementation process a test started is gone once :func:`client.shutdown` ran (as it
    does at exit), whatever the test did to it."""
    yield
    pids = [c.pid for c in client._POOL]
    client.shutdown()
    assert not client._POOL and not [pid for pid in pids if _alive(pid)]


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8) | st.binary(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=4) | st.sampled_from(["$set", "$pairs", "$dict"]), inner, max_size=3)
        | st.dictionaries(st.integers(), inner, max_size=3)
        | st.frozensets(st.integers() | st.text(max_size=4), max_size=3)
    ),
    max_leaves=12,
)


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, frozenset):
        return set(value)
    return value


@given(values)
def test_a_value_crosses_the_wire_as_it_was(value: object) -> None:
    line = json.dumps(encode(value), allow_nan=False)  # strict JSON: any language's parser reads it
    assert decode(json.loads(line)) == _plain(value)


def test_nan_and_infinities_cross_tagged_in_strict_json() -> None:
    back = decode(json.loads(json.dumps(encode({"a": [math.inf, -math.inf, math.nan]}), allow_nan=False)))
    assert back["a"][:2] == [math.inf, -math.inf] and math.isnan(back["a"][2])


def _gate(sut: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pwh", "gate", "--sut", sut, "--quiet", *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


def test_a_handshake_outside_the_protocol_is_one_line_and_exit_2() -> None:
    with pytest.raises(SUTLoadError, match=r"did not start the protocol: handshake at \$"):
        load_sut(f"stdio:{sys.executable} {MISBEHAVING} handshake")
    done = _gate(f"stdio:{sys.executable} {MISBEHAVING} handshake", "-m", "M04")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert [line for line in done.stderr.splitlines() if line.strip()][-1].startswith("pwh: error:")


@pytest.mark.parametrize("mode", ["outcome", "silent"])
def test_a_malformed_or_missing_answer_is_the_adapters_fault_never_a_verdict(mode: str) -> None:
    sut = load_sut(f"stdio:{sys.executable} {MISBEHAVING} {mode}")
    try:
        with pytest.raises(ProtocolError):
            sut.dispatch({"receipt_id": "r", "event_kind": "todo_completed"})
    finally:
        if mode == "outcome":
            sut.close()
    done = _gate(f"stdio:{sys.executable} {MISBEHAVING} {mode}", "-k", "with_the_phase_enabled_the_installed_hook_is_called_once")
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "broke the stdio seam protocol" in done.stderr and "Traceback" not in done.stderr
    assert "verdict:" not in done.stdout


def _node() -> str | None:
    import shutil

    try:
        from pwh._suts.loopx.runtime import node_bin_dir

        where = node_bin_dir()
    except Exception:
        where = None
    found = shutil.which("node", path=str(where)) if where else None
    return found or shutil.which("node")


def test_an_implementation_in_another_language_passes_smoke() -> None:
    """tests/suts/stdio_impls/tiny_dispatcher.mjs, a small dispatcher written in JavaScript from
    the RFC and docs/seam-protocol.md alone, is driven through every smoke scenario: no Python."""
    node = _node()
    if node is None:
        pytest.skip("no Node.js here (the loopx extra ships one: pip install -e '.[loopx]')")
    script = ROOT / "tests" / "suts" / "stdio_impls" / "tiny_dispatcher.mjs"
    done = subprocess.run(
        [sys.executable, "-m", "pwh", "smoke", "--sut", f"stdio:{node} {script}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "smoke: ok" in done.stdout and "0 FAIL" in done.stdout
    assert "dispatch                  ok" in done.stdout


def test_an_open_answer_outside_the_protocol_is_a_load_error() -> None:
    with pytest.raises(SUTLoadError, match=r"did not open an instance: opened at \$"):
        load_sut(f"stdio:{sys.executable} {MISBEHAVING} opened")


KIND = "t.note"
NOTE_SCHEMA = {"type": "object", "properties": {"note_ref": {"type": "string"}}, "required": ["note_ref"], "additionalProperties": False}


def _implementations() -> list[Any]:
    node = _node()
    js = pytest.param(
        f"stdio:{node} {TINY_JS}" if node else "",
        id="javascript",
        marks=pytest.mark.skipif(node is None, reason="no Node.js here (the loopx extra ships one)"),
    )
    return [pytest.param(SERVED, id="reference-served"), js]


@pytest.mark.parametrize("sut_spec", _implementations())
def test_instances_on_one_process_share_nothing(sut_spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two instances on one process: what one is given (intent kinds, hooks, profile, journal) the
    other never sees, and each keeps its durable state in its own workdir, and only there. Every
    message pwh sends on the way fits the protocol's own schema of requests and replies."""
    sent = client._Child._send

    def checked(self: Any, message: dict[str, Any]) -> None:
        check(message, "reply" if "reply" in message else "request")
        sent(self, message)

    monkeypatch.setattr(client._Child, "_send", checked)
    calls: list[str] = []

    def producer(hook_input: Any) -> dict[str, Any]:
        calls.append(hook_input["source"]["receipt_id"])
        return {"status": "not_applicable", "intents": []}

    def composed(sut: Any) -> None:
        assert sut.register_intent_kind(KIND, NOTE_SCHEMA) == []
        assert sut.install(example_registration("a.reporter", intent_kinds=[KIND]), producer) == []
        sut.set_profile(Profile(phase_enabled=True))

    a, b = _open(sut_spec), _open(sut_spec)
    assert a.pid == b.pid  # one process serves both
    composed(a)
    assert [r.code for r in b.install(example_registration("a.reporter", intent_kinds=[KIND]), producer)] != []  # no such kind on b
    assert a.dispatch(example_receipt(1)).admitted
    assert calls == ["receipt_0001"] and len(a.journal_records()) == 1
    assert b.journal_records() == []
    outcome = b.dispatch(example_receipt(2))
    assert (outcome.admitted, outcome.code, calls) == (False, "phase_disabled", ["receipt_0001"])  # b's profile is its own
    a.close()
    assert b.journal_records() == []  # closing one leaves the other open
    b.close()

    first, other = tmp_path / "first", tmp_path / "other"
    first.mkdir()
    other.mkdir()
    c = _open(sut_spec, workdir=first)
    composed(c)
    c.dispatch(example_receipt(3))
    records = c.journal_records()
    c.close()
    d, e = _open(sut_spec, workdir=first), _open(sut_spec, workdir=other)
    assert d.pid == e.pid == a.pid
    assert [r["dispatch_id"] for r in d.journal_records()] == [r["dispatch_id"] for r in records] != []  # durable, there
    assert e.journal_records() == [] and list(first.iterdir()) != []  # and there only
    d.close()
    e.close()


@pytest.mark.parametrize("how", ["killed", "exits_mid_dispatch"])
def test_a_process_that_dies_fails_its_instances_and_the_next_open_gets_a_fresh_one(how: str) -> None:
    spec = SERVED if how == "killed" else f"stdio:{sys.executable} {MISBEHAVING} silent"
    a, b = _open(spec), _open(spec)
    dead = a.pid
    assert b.pid == dead
    if how == "killed":
        os.kill(dead, signal.SIGKILL)  # the process this test's harness started, by its id
        with pytest.raises(ProtocolError):
            a.journal_records()
    else:
        with pytest.raises(ProtocolError):  # it exits without answering
            a.dispatch(example_receipt(1))
    with pytest.raises(ProtocolError, match="process"):
        b.journal_records()
    assert not _alive(dead)  # reaped, not a zombie: pwh stopped what was left of it
    c = _open(spec)
    assert c.pid != dead and c.journal_records() == []
    a.close()  # nothing to close on a process that is gone
    b.close()
    c.close()


def test_a_call_of_another_instances_provider_is_a_protocol_error() -> None:
    spec = f"stdio:{sys.executable} {MISBEHAVING} leaky"
    a, b = _open(spec), _open(spec)
    for sut in (a, b):  # each its own provider: a's token never names b's
        sut.install(example_registration("a.reporter", intent_kinds=[KIND]), lambda hook_input: {"status": "not_applicable"})
    with pytest.raises(ProtocolError, match="no install on this instance"):
        b.dispatch(example_receipt(1))  # the stand-in calls a's provider while b's request is open
    with pytest.raises(ProtocolError):  # the channel is out of step: the process is gone for a too
        a.journal_records()


def test_no_implementation_process_outlives_the_harness() -> None:
    """A harness that ends with an instance still open stops its implementation process on the
    way out (atexit), by its id, even one that does not exit when its stdin ends."""
    code = (
        "import sys\n"
        "from pwh._suts.seam import load_sut\n"
        f"sut = load_sut({f'stdio:{sys.executable} {MISBEHAVING} lingering'!r})\n"
        "sut.journal_records()\n"
        "print(sut.pid, flush=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    pid = int(done.stdout.split()[-1])
    try:
        assert not _alive(pid)
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)  # the one process this test's harness started, by its id


# -- the writeback seam over the protocol --------------------------------------------------------


def test_bytes_cross_tagged_as_base64() -> None:
    assert encode(b"\x00{receipt}") == {"$bytes": "AHtyZWNlaXB0fQ=="}
    assert decode(json.loads(json.dumps(encode({"r": b"\xff"})))) == {"r": b"\xff"}
    assert decode({"$bytes": "not base64!"}) == {"$bytes": "not base64!"}  # not the tag's form: data as it came


def _drive(boundary: Any, calls: list[str]) -> dict[str, Any]:
    """One script through a writeback boundary: a hooked completion, a crash and recovery, a replay,
    and every read; what it answered, in plain terms."""

    def producer(hook_input: Any) -> dict[str, Any]:
        calls.append(hook_input["source"]["receipt_id"])
        return {"status": "not_applicable", "intents": []}

    boundary.prepare(todos=2, phase_enabled=True, report_capability=False)
    assert boundary.register_intent_kind(KIND, NOTE_SCHEMA) == []
    assert boundary.install(example_registration("a.reporter", intent_kinds=[KIND]), producer) == []
    boundary.plant({"todo_text": "planted-value-1"})
    first = boundary.commit_completion(1)
    crashed = boundary.commit_completion(2, crash="after_primary_commit")
    boundary.recover()
    replayed = boundary.replay(1)
    failed = boundary.commit_replan(fail="writeback")
    with pytest.raises(LookupError):
        boundary.primary_receipt(99)
    with pytest.raises(LookupError):
        boundary.spend_eligibility(99)
    return {
        "commits": [(c.committed, c.receipt_id, c.event_kind, c.raised, c.notes) for c in (first, crashed, replayed, failed)],
        "dispatch": first.dispatch,
        "receipts": [boundary.primary_receipt(n) for n in (1, 2)],
        "spend": [dict(boundary.spend_eligibility(n)) for n in (1, 2)],
        "records": boundary.sidecar_records(),
        "intents": boundary.intent_receipts(),
        "seen": [(h.hook_id, h.receipt_id, h.hook_input) for h in boundary.hooks_seen()],
    }


def test_the_writeback_seam_crosses_the_protocol_as_it_answers_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The served reference's writeback boundary, driven over the protocol, answers what the
    reference's boundary answers in-process: the same commits, primary receipt bytes, spends,
    records and hook inputs; a read past the last commit is a LookupError; a crash is the
    reference's simulated one, and the process serves on. pwh's world takes the proxy, and every
    message pwh sends fits the protocol's schema."""
    from fakes._world import World
    from fakes._writeback import ReferenceWriteback

    sent = client._Child._send

    def checked(self: Any, message: dict[str, Any]) -> None:
        check(message, "reply" if "reply" in message else "request")
        sent(self, message)

    monkeypatch.setattr(client._Child, "_send", checked)
    sut = _open(SERVED)
    assert "writeback_open" in sut.operations
    world = World(sut, tmp_path / "world")
    try:
        assert isinstance(world.writeback.wrapped, StdioWriteback)  # the world drives the protocol's boundary
    finally:
        world.close()

    sut, other = _open(SERVED), _open(SERVED)
    served_calls: list[str] = []
    boundary = writeback_boundary_of(sut)
    assert isinstance(boundary, StdioWriteback) and "commit_completion" in boundary.operations
    served = _drive(boundary, served_calls)
    assert sut.pid == other.pid and other.journal_records() == []  # the crash was the reference's own, simulated
    baseline = writeback_boundary_of(sut)  # a second boundary on the instance: no hooks, as pwh's world's baseline
    assert baseline is not None
    baseline.prepare(todos=1, phase_enabled=True, report_capability=False)
    assert baseline.commit_completion(1).committed and baseline.hooks_seen() == []
    baseline.close()
    boundary.close()
    sut.close()
    other.close()

    reference = load_sut("reference")
    in_process = ReferenceWriteback(reference)
    in_process_calls: list[str] = []
    try:
        expected = _drive(in_process, in_process_calls)
    finally:
        in_process.close()
        reference.close()
    assert served == expected != {}
    # The providers ran here, in the harness (in-process the reference's runner may run them in a
    # worker process, so only the boundary's own account is compared).
    assert served_calls == [receipt for _, receipt, _ in served["seen"]] != []
    assert all(isinstance(r, bytes) for r in served["receipts"]) and served["commits"][1][3] == "killed"


def test_a_malformed_writeback_answer_is_the_adapters_fault_never_a_verdict() -> None:
    spec = f"stdio:{sys.executable} {MISBEHAVING} commit"
    sut = _open(spec)
    boundary = writeback_boundary_of(sut)
    assert boundary is not None
    boundary.prepare(todos=1, phase_enabled=True, report_capability=False)
    with pytest.raises(ProtocolError, match=r"commit at \$: 'committed' is a required property"):
        boundary.commit_completion(1)
    done = _gate(spec, "-k", "with_the_phase_off_a_committed_completion_calls_no_provider")
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "broke the stdio seam protocol" in done.stderr and "Traceback" not in done.stderr
    assert "verdict:" not in done.stdout


def _writeback_scenarios(
    spec: str, rows: str, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]], dict[str, Any]]:
    out = tmp_path / "v.json"
    done = _gate(spec, "--rows", rows, "--json", str(out))
    assert done.returncode in (0, 3) and "Traceback" not in done.stderr, done.stdout[-2000:] + done.stderr[-2000:]
    verdict = json.loads(out.read_text())
    scenarios = verdict["scenarios"]
    wb = [x for x in scenarios if x["feature"].startswith("features/wb_")]
    assert wb and [x for x in scenarios if x not in wb]
    return done, wb, verdict


# `declining` (writeback_open answered unsupported) is extended: `plain` (no writeback_open at all)
# holds the same rule in the test command, and each is its own gate over the protocol.
@pytest.mark.parametrize("factory", ["plain", pytest.param("declining", marks=pytest.mark.extended)])
def test_an_implementation_with_no_writeback_boundary_has_its_writeback_scenarios_not_applicable(factory: str, tmp_path: Path) -> None:
    """``plain`` lists no ``writeback_open``; ``declining`` answers it ``unsupported``: either way
    every writeback scenario is skipped with the reason, none failed, and the rest are judged."""
    done, wb, verdict = _writeback_scenarios(SERVED_ADAPTERS + factory, "M01", tmp_path)
    reason = "no writeback_open in its handshake" if factory == "plain" else "this stand-in declines the writeback seam"
    assert all(x["outcome"] == "skipped" and reason in x["reason"] for x in wb), [(x["outcome"], x.get("reason")) for x in wb]
    row = verdict["rows"]["M01"]
    assert (row["failed"], row["skipped"], row["passed"]) == (0, len(wb), row["scenarios"] - len(wb))
    assert all(x["outcome"] == "passed" for x in verdict["scenarios"] if x not in wb)


def test_an_implementation_not_named_reference_passes_its_writeback_scenarios_over_the_protocol(tmp_path: Path) -> None:
    """pwh's world wires a writeback boundary of its own only to an SUT named ``reference``: this
    served reference dispatcher is named otherwise, so its writeback scenarios can pass only
    through the protocol's ``writeback_*`` requests (the crashed and recovered ones included)."""
    done, wb, verdict = _writeback_scenarios(SERVED_ADAPTERS + "renamed", "M01,M05", tmp_path)
    assert done.returncode == 0 and verdict["summary"]["verdict"] == "pass"
    assert all(x["outcome"] == "passed" and x["seam"] == "writeback" for x in wb)
    assert any("after_primary_commit" in x["id"] for x in wb)


# -- the turn seam over the protocol --------------------------------------------------------------


def test_a_turn_seam_crosses_the_protocol_and_none_is_none(tmp_path: Path) -> None:
    """A served adapter's turn seam answers over the protocol what it answers in-process; the
    served reference offers none (its seed-003 rows stay on pwh's testbed); a malformed turn answer
    is a ProtocolError."""
    from dataclasses import asdict

    from fakes import FakeOrchestrator
    from fakes._turn import TestbedTurn

    assert _open(SERVED).turn_contracts() is None
    sut = _open(f"stdio:{sys.executable} -m pwh._suts.stdio.serve tests.suts.turn_adapters:testbed_turn")
    turn = sut.turn_contracts()
    assert turn is not None and turn.operations == frozenset(TestbedTurn().operations)
    local = TestbedTurn()
    dispatcher = load_sut("reference")
    orchestrator = FakeOrchestrator(dispatcher, tmp_path / "primary", seed=7)
    try:
        plan = asdict(orchestrator.plan())  # the plan pwh's orchestrator hands a Turn
    finally:
        orchestrator.close()
        dispatcher.close()
    for flags in ({"declared": True, "installed": True, "enabled": True, "ready": True}, {"enabled": True}):
        assert turn.register_provider("report_renderer", flags) == local.register_provider("report_renderer", flags)
    assert turn.build_host_request(plan) == local.build_host_request(plan)
    for raw in (b"{ not json", b"\x00" * 3, json.dumps({"result_kind": "completion"}).encode()):
        assert turn.accept_host_output(plan, raw) == local.accept_host_output(plan, raw)
    sut.close()

    odd = _open(f"stdio:{sys.executable} {MISBEHAVING} turn")
    contracts = odd.turn_contracts()
    assert contracts is not None
    with pytest.raises(ProtocolError, match=r"host_verdict at \$.accepted"):
        contracts.accept_host_output({}, b"{}")


def test_a_served_turn_seam_earns_its_in_process_verdict_on_the_seed_003_rows(tmp_path: Path) -> None:
    """tests/suts/turn_adapters.py served over the protocol: the conforming seam passes every
    seed-003 row it reaches through the turn seam, and the lenient one fails the rows that judge it
    (tests/suts/test_turn_seam.py holds the same of them in-process)."""
    from tests.suts.test_turn_seam import LENIENT_FAILS, SEED003, UNREACHABLE

    prefix = f"stdio:{sys.executable} -m pwh._suts.stdio.serve tests.suts.turn_adapters:"
    verdicts = {}
    for name in ("testbed_turn", "lenient_turn"):
        out = tmp_path / f"{name}.json"
        done = _gate(prefix + name, "--rows", ",".join(SEED003), "--json", str(out))
        assert done.returncode == (0 if name == "testbed_turn" else 1), done.stdout[-2000:] + done.stderr[-2000:]
        verdicts[name] = json.loads(out.read_text())
    rows = verdicts["testbed_turn"]["rows"]
    reached = [r for r in SEED003 if r not in UNREACHABLE]
    assert {r: (rows[r]["rfc"], rows[r]["seams"]) for r in reached} == dict.fromkeys(reached, ("pass", ["turn"]))
    lenient = verdicts["lenient_turn"]["rows"]
    assert {r for r in SEED003 if lenient[r]["rfc"] == "fail"} >= LENIENT_FAILS

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
from pwh._suts.stdio.protocol import check
from pwh._suts.wire import decode, encode

ROOT = Path(__file__).resolve().parents[2]
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
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
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

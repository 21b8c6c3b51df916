"""The seam as a protocol (pwh/_suts/stdio): values cross unchanged, an implementation that
answers outside the protocol is the adapter's fault (exit 2, one line, no verdict on the RFC),
and the reference served over stdio earns the verdict it earns in-process."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pwh._suts.seam import SUTLoadError, load_sut
from pwh._suts.stdio import ProtocolError
from pwh._suts.wire import decode, encode

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING = ROOT / "tests" / "suts" / "stdio_impls" / "misbehaving.py"
SERVED = "stdio:" + sys.executable + " -m pwh._suts.stdio.serve reference"

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


def test_the_reference_served_over_stdio_earns_its_in_process_verdict(tmp_path: Path) -> None:
    """The protocol's conformance test, on the rows whose scenarios cross it most (providers called
    back by message, crashes and restarts, replays and conflicts, the journal read back); the
    whole matrix is `pwh gate --sut 'stdio:python -m pwh._suts.stdio.serve reference'`."""
    out = tmp_path / "v.json"
    done = _gate(SERVED, "-m", "M04 or M05 or M06 or M08", "--json", str(out))
    assert done.returncode == 0, done.stdout[-3000:]
    verdict = json.loads(out.read_text())
    assert verdict["summary"]["verdict"] == "pass"
    assert {r: verdict["rows"][r]["status"] for r in ("M04", "M05", "M06", "M08")} == dict.fromkeys(("M04", "M05", "M06", "M08"), "pass")


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

"""The command line trusts no file with code, and reads hostile input in bounded memory.

- ``pwh replay``: a trace runs only a built-in SUT on its own word; any other adapter must be named
  with ``--sut``, and the trace's ``sut_options`` never become keyword arguments. A trace that is
  too deep, too big, not UTF-8, not JSON, a directory or a FIFO is one line and exit 2.
- ``pwh packet verify``: an iterative, bounded walk (a 1,100-deep directory chain is one problem,
  not a RecursionError) and files streamed in chunks (a 3 GiB sparse extra under a 1 GiB address
  limit is reported ``extra``, not a MemoryError); the chunked boundary scan finds what the
  whole-file scan finds, at the same lines.
- ``pwh scenarios check`` / the gate's preflight: symbolic links, directories, FIFOs, huge files
  and deep trees under ``--features`` are problems, never read or followed.
- ``pwh gate``: a built-in SUT imports nothing from the working directory (a stray ``random.py``
  there never runs, in pwh or in the child); an explicit ``--sut module:factory`` found there is
  searched after the standard library.
- ``pwh report``, ``compare``, ``gate --failed-in``, ``divergences``, ``corpus``: a file nested too
  deeply, of the wrong shape, too large, a directory or a FIFO is one line naming the file (and the
  field) with exit 2, never "internal error" and never a wait; ``--failed-in`` a verdict with
  thousands of failures passes its selection to the child in a file (never E2BIG).
- Ctrl-C: a SIGINT to pwh's PID during ``gate``, ``soak`` and ``replay`` gives exit 130, one line,
  no traceback and no process left behind; so does a terminal's SIGINT to the process group.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import pwh._harness.packet.verify as packet_mod
from pwh._campaigns.counterexamples.reader import MAX_TRACE_BYTES
from pwh._cli import main
from pwh._core.boundary import BoundaryScanner
from pwh._harness.gate import SUT_PATH_ENV, GateRun, child_import_env
from pwh._harness.interrupt import descendants
from pwh._harness.packet import verify_packet
from pwh._harness.packet.build import build_packet
from pwh._harness.scenarios_check import feature_files
from pwh._harness.text_scan import scan_text
from tests.tiers import beyond

ROOT = Path(__file__).resolve().parents[2]
SETUP = {"op": "setup", "ceiling": None, "segment": 1}
VIOLATION = {"row": "M05", "invariant": "replay_identical", "step": 0, "message": "see trace"}


def trace(**fields: Any) -> dict[str, Any]:
    return {
        "schema_version": "pwh_model_trace_v0",
        "seed": 0,
        "sut": "reference-memory",
        "steps": [SETUP],
        "violation": VIOLATION,
        **fields,
    }


def pwh(*args: str, cwd: Path, timeout: float = 300, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pwh", *args],
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        **kw,
    )


def deep_chain(top: Path, levels: int, chains: list[Path]) -> Path:
    """``top/d/d/.../d`` (``levels`` deep); the deepest directory. ``chains`` remembers ``top``
    so the test removes it bottom up (a recursive rmtree would exhaust its own stack)."""
    top.mkdir(exist_ok=True)
    chains.append(top)
    p = top
    for _ in range(levels):
        p = p / "d"
        p.mkdir()
    return p


@pytest.fixture
def chains() -> Iterator[list[Path]]:
    made: list[Path] = []
    yield made
    for top in made:
        p, depth = top, 0
        while (p / "d").is_dir():
            p, depth = p / "d", depth + 1
        for _ in range(depth):
            for child in p.iterdir():
                child.unlink()
            p.rmdir()
            p = p.parent


class Blocked(BaseException):
    """What :func:`never_waits` raises where the code under test blocked (a BaseException: no
    handler of pwh's may take it for an error it reports)."""


@contextmanager
def never_waits(seconds: float = 120) -> Iterator[None]:
    """A hang guard for an in-process call: a read that blocks (a FIFO opened for reading waits for
    a writer for ever) is interrupted after ``seconds`` and fails the test. Generous: a loaded
    machine never trips it, and nothing is asked to be fast."""

    def expired(signum: int, frame: Any) -> None:
        raise Blocked(f"still waiting after {seconds:g} s: it blocked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pwh: error: "), err
    assert "Traceback" not in err and "internal error" not in err
    return lines[0]


# --------------------------------------------------------------------------------------------
# pwh replay: the trace is data
# --------------------------------------------------------------------------------------------


def test_a_trace_naming_code_is_refused_and_the_code_never_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "PWNED"
    path = tmp_path / "counterexample.json"
    path.write_text(json.dumps(trace(sut="os:system", sut_options={"command": f"echo ran > {marker}"})))
    assert main(["replay", str(path)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert not marker.exists()
    assert "'os:system'" in line and "not built in" in line and "--sut os:system" in line
    assert str(tmp_path) not in line


def test_a_trace_naming_a_non_plain_sut_withholds_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace(sut="/home/alice/evil.py:\x1b[31mrun")))
    assert main(["replay", str(path)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "alice" not in line and "\x1b" not in line and "withheld" in line


@pytest.mark.parametrize("sut", ["reference", "reference-memory"])
def test_a_trace_naming_a_builtin_sut_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str], sut: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace(sut=sut, steps=[SETUP, {"op": "turn", "action": "complete_todo"}])))
    assert main(["replay", str(path)]) == 0
    assert f"against {sut!r}: every invariant holds" in capsys.readouterr().out


def test_an_explicit_adapter_runs_from_the_cwd_without_the_traces_options(tmp_path: Path) -> None:
    """--sut names the code; the trace's sut_options still never reach it (docs/models.md: pwh replay)."""
    seen = tmp_path / "kwargs.json"
    (tmp_path / "spy_adapter.py").write_text(
        "import json\nfrom pwh._suts.reference import memory_sut\n\n"
        "def factory(**kw):\n"
        f"    open({str(seen)!r}, 'w').write(json.dumps(sorted(kw)))\n"
        "    return memory_sut()\n"
    )
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace(sut="spy_adapter:factory", sut_options={"planted": "x", "journal": "sqlite"})))
    refused = pwh("replay", "t.json", cwd=tmp_path)
    assert refused.returncode == 2 and not seen.exists(), refused.stderr
    ran = pwh("replay", "t.json", "--sut", "spy_adapter:factory", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "sut_options are not applied" in ran.stderr and "Traceback" not in ran.stderr
    assert "planted" not in json.loads(seen.read_text()) and "journal" not in json.loads(seen.read_text())


def _deep(n: int) -> str:
    return '{"schema_version": "pwh_model_trace_v0", "sut": "reference", "steps": ' + "[" * n + "]" * n + "}"


BAD_TRACES: dict[str, tuple[Any, str]] = {
    "deep.json": (_deep(100_000), "nested too deeply"),
    "deep-object.json": ('{"a":' * 50_000 + "1" + "}" * 50_000, "nested too deeply"),
    "latin1.json": (b'{"schema_version": "pwh_model_trace_v0", "sut": "caf\xe9"}', "not UTF-8"),
    "nan.json": ('{"schema_version": "pwh_model_trace_v0", "sut": "reference", "seed": NaN, "steps": []}', "not JSON"),
    "bigint.json": ('{"seed": ' + "9" * 10_000 + "}", "not JSON"),
    "list.json": ("[1, 2]", "not a pwh_model_trace_v0 trace"),
    "unhashable-op.json": (json.dumps(trace(steps=[{"op": ["setup"]}])), "step 0"),
    "unhashable-behaviour.json": (json.dumps(trace(steps=[SETUP, {"op": "install", "hook": "a.alpha", "behaviour": {}}])), "step 1"),
    "no-setup.json": (json.dumps(trace(steps=[{"op": "restart"}])), "'setup'"),
    "options-list.json": (json.dumps(trace(sut_options=[1])), "'sut_options' must be an object"),
}


@pytest.mark.parametrize("name", sorted(BAD_TRACES))
def test_a_file_that_is_not_a_trace_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    content, expected = BAD_TRACES[name]
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main(["replay", str(path)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert expected in line and str(tmp_path) not in line


def test_a_recorded_violation_of_any_shape_is_no_internal_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace(violation=[1, 2], steps=[SETUP, {"op": "turn", "action": "complete_todo"}])))
    assert main(["replay", str(path)]) == 0
    assert "internal error" not in capsys.readouterr().err


def test_replay_reads_no_directory_fifo_device_or_huge_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dir.json").mkdir()
    os.mkfifo(tmp_path / "fifo.json")  # opening it for reading must not block
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as fh:
        fh.truncate(MAX_TRACE_BYTES + 1)  # sparse: costs no disk
    cases = {
        "dir.json": "is a directory",
        "fifo.json": "not a regular file",
        "huge.json": "more than a trace may be",
        "missing.json": "no such file",
    }
    for name, expected in cases.items():
        with never_waits():
            assert main(["replay", str(tmp_path / name)]) == 2, name
        assert expected in one_error_line(capsys.readouterr().err), name
    assert main(["replay", os.devnull]) == 2
    assert "not a regular file" in one_error_line(capsys.readouterr().err)


# --------------------------------------------------------------------------------------------
# pwh packet verify: bounded walk, chunked reading
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built_small_packet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real packet (every file kind) from a gate that ran no scenario, over one feature file:
    built and verified once (the tests below verify it again and again, some reading every file
    two bytes at a time; the whole matrix in a packet is tests/harness/test_packet.py's)."""
    root = tmp_path_factory.mktemp("small-packet")
    features = root / "features"
    features.mkdir()
    shutil.copyfile(ROOT / "features" / "m06_conflict.feature", features / "m06_conflict.feature")
    out = root / "pkt"
    build_packet(out, ["reference"], gate=lambda sut, **kw: GateRun(sut, []), features=features)
    assert verify_packet(out).ok and (out / "features" / "m06_conflict.feature").is_file()
    return out


@pytest.fixture
def small_packet(built_small_packet: Path, tmp_path: Path) -> Path:
    """A copy of the small packet of this test's own, to damage."""
    return Path(shutil.copytree(built_small_packet, tmp_path / "pkt"))


# `extended`: a directory chain thousands deep; the feature walk's other refusals are held in the test command by tests/harness/test_gate_refuses.py.
@pytest.mark.extended
def test_a_deep_directory_chain_is_one_problem_not_a_recursion_error(
    small_packet: Path, capsys: pytest.CaptureFixture[str], chains: list[Path]
) -> None:
    (deep_chain(small_packet / "d", 1099, chains) / "x.txt").write_text("x\n")
    report = verify_packet(small_packet)
    assert report.exit_code == 1
    assert [(kind, why) for _, kind, why in report.problems] == [("unsafe", "a directory nested more than 16 levels deep (not walked)")]
    assert main(["packet", "verify", str(small_packet)]) == 1
    out, err = capsys.readouterr()
    assert "unsafe" in out and "does not verify" in err
    assert "internal error" not in out + err and "Traceback" not in out + err


def test_a_huge_sparse_extra_is_reported_in_bounded_memory(small_packet: Path, tmp_path: Path) -> None:
    with open(small_packet / "big.bin", "wb") as fh:
        fh.truncate(3 * 1024**3)
    with open(small_packet / "rules.json", "r+b") as fh:  # a listed file grown to 2 GiB: altered, not parsed
        fh.truncate(2 * 1024**3)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1024**3, 1024**3))

    proc = pwh("packet", "verify", str(small_packet), cwd=tmp_path, timeout=120, preexec_fn=limit)
    assert proc.returncode == 1, proc.stderr
    report = proc.stdout  # the report is the output; stderr says only that the packet does not verify
    assert "pkt" in report and "internal error" not in report + proc.stderr and "Traceback" not in report + proc.stderr
    assert "big.bin: extra — in the packet, not in the manifest" in report
    assert "big.bin: leak — line 1: unscannable" in report
    assert f"rules.json: altered — size {2 * 1024**3} bytes" in report
    assert "rules.json: invalid — larger than 16 MiB: too large to check" in report
    assert "does not verify" in proc.stderr


# The smallest chunk (a line split at every other byte) and one chunk for the whole file stay in
# the test command; the chunk sizes between them are extended.
@pytest.mark.parametrize("chunk", beyond([2, 3, 5, 8, 64, 1 << 20], lambda chunk: chunk in (2, 1 << 20)))
def test_the_chunked_scan_finds_what_the_whole_file_scan_finds(small_packet: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    lines = [
        "plain words",
        "token ghp_" + "a" * 36,
        "",
        "path /home/alice/notes.txt",
        "café ok",
        "x" * 50,
        "AKIA" + "B" * 16,
        "last line without newline /Users/bob",
    ]
    text = "\n".join(lines)
    (small_packet / "extra.txt").write_text(text, "utf-8")
    whole = {(f.path, f.category) for f in scan_text(text)}
    assert len({p for p, _ in whole}) >= 3  # the planted values are found at all
    monkeypatch.setattr(packet_mod, "CHUNK", chunk)
    leaks = {tuple(d.split(": ", 1)) for f, kind, d in verify_packet(small_packet).problems if kind == "leak"}
    assert leaks == whole


def test_over_long_lines_and_late_bad_bytes_are_unscannable_not_held(small_packet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packet_mod, "CHUNK", 1000)
    monkeypatch.setattr(packet_mod, "MAX_LINE_BYTES", 100)
    (small_packet / "long.txt").write_bytes(b"ok\n" + b"y" * 5000 + b"\n/home/alice/x\n")
    (small_packet / "late.txt").write_bytes(b"fine\n" * 400 + b"\xff\xfe\n")
    problems = {(f, d) for f, kind, d in verify_packet(small_packet).problems if kind == "leak"}
    assert ("long.txt", "line 2: unscannable") in problems
    assert any(f == "long.txt" and d.startswith("line 3: ") and "unscannable" not in d for f, d in problems)
    assert ("late.txt", "line 0: unscannable") in problems


def test_a_scan_stops_at_its_limit_and_says_so(small_packet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packet_mod, "CHUNK", 64)
    monkeypatch.setattr(packet_mod, "MAX_SCANNED_BYTES", 1000)
    (small_packet / "long.txt").write_bytes(b"ok\n" * 400 + b"/home/alice/x\n")  # past the limit
    problems = {(f, d) for f, kind, d in verify_packet(small_packet).problems if kind == "leak" and f == "long.txt"}
    assert problems == {("long.txt", "line 334: unscannable")}


def test_fifos_directories_and_non_utf8_names_in_a_packet(small_packet: Path) -> None:
    os.mkfifo(small_packet / "pipe.txt")
    (small_packet / "README.md").unlink()
    (small_packet / "README.md").mkdir()  # a directory where a listed file should be
    os.mkdir(os.fsencode(small_packet) + b"/caf\xe9")
    Path(os.fsdecode(os.fsencode(small_packet) + b"/caf\xe9/x.txt")).write_text("x\n")
    report = verify_packet(small_packet)
    kinds = {(f, kind) for f, kind, _ in report.problems}
    assert ("pipe.txt", "unsafe") in kinds and ("README.md", "missing") in kinds and ("<withheld>/x.txt", "extra") in kinds
    assert report.exit_code == 1


def test_a_huge_or_deep_manifest_is_not_a_packet(small_packet: Path) -> None:
    manifest = small_packet / "manifest.json"
    manifest.write_text("[" * 100_000 + "]" * 100_000)
    report = verify_packet(small_packet)
    assert report.exit_code == 2 and "not JSON" in str(report.not_a_packet)
    with open(manifest, "wb") as fh:
        fh.truncate(packet_mod.MAX_MANIFEST_BYTES + 1)
    report = verify_packet(small_packet)
    assert report.exit_code == 2 and "larger than 16 MiB" in str(report.not_a_packet)


# --------------------------------------------------------------------------------------------
# --features: what the scenarios check and the gate's preflight read
# --------------------------------------------------------------------------------------------


def test_feature_directories_never_follow_links_or_read_what_is_not_a_feature(tmp_path: Path, chains: list[Path]) -> None:
    features = tmp_path / "features"
    features.mkdir()
    (features / "ok.feature").write_text("Feature: ok\n")
    (features / "dir.feature").mkdir()
    (features / "passwd.feature").symlink_to("/etc/passwd")
    (features / "everything").symlink_to("/")
    os.mkfifo(features / "fifo.feature")
    with open(features / "huge.feature", "wb") as fh:
        fh.truncate(1024**3)
    (deep_chain(features / "deep", 1100, chains) / "lost.feature").write_text("Feature: lost\n")
    found, problems = feature_files(features, tmp_path)
    assert found == [features / "ok.feature"]
    said = {str(problem).split(": ", 1)[1] for problem in problems}
    assert said == {
        "a directory, not a feature file",
        "a symbolic link (not followed: features live in the directory itself)",
        "not a regular file",
        "larger than 4 MiB (not read)",
        "nested more than 16 directories deep (not searched)",
    }
    assert {str(problem).split(":")[0] for problem in problems} >= {"features/passwd.feature", "features/everything"}


# --------------------------------------------------------------------------------------------
# pwh gate: the working directory imports nothing unasked, and never first
# --------------------------------------------------------------------------------------------


def test_the_childs_import_path_never_holds_the_cwd(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", "/opt/user-lib")
    env = child_import_env(None)
    assert env["PYTHONPATH"].split(os.pathsep) == [str(ROOT), "/opt/user-lib"] and env[SUT_PATH_ENV] == ""
    assert child_import_env(str(tmp_path))[SUT_PATH_ENV] == str(tmp_path)
    assert str(tmp_path) not in child_import_env(str(tmp_path))["PYTHONPATH"]


def test_a_stray_module_in_the_cwd_never_runs_and_an_explicit_adapter_there_is_found_last(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    for shadow in ("random", "json", "tempfile", "colorsys"):  # colorsys: imported by the adapter alone
        (tmp_path / f"{shadow}.py").write_text(f"open({str(marker)!r}, 'a').write('{shadow} ')\nraise ImportError('shadowed')\n")
    (tmp_path / "my_adapter.py").write_text(
        "import colorsys  # the stdlib's, not the cwd's\nfrom pwh._suts.reference import memory_sut\n\n"
        "def factory(**kw):\n    return memory_sut(**kw)\n"
    )

    def gate(sut: str) -> subprocess.CompletedProcess[str]:
        return pwh("gate", "--rows", "M01", "--quiet", "--sut", sut, cwd=tmp_path)

    with ThreadPoolExecutor(max_workers=2) as pool:
        builtin, explicit = pool.map(gate, ["reference", "my_adapter:factory"])
    assert not marker.exists(), marker.read_text()
    assert builtin.returncode == 0, builtin.stdout[-2000:] + builtin.stderr
    assert explicit.returncode == 0, explicit.stdout[-2000:] + explicit.stderr
    assert "verdict: PASS (RFC)" in explicit.stdout


# --------------------------------------------------------------------------------------------
# Ctrl-C: exit 130, one line, nothing left running
# --------------------------------------------------------------------------------------------


def _long_trace(path: Path) -> Path:
    """A trace of real crashes (each one a child process killed at a crash point): replaying it
    takes far longer than the test waits, and there is nearly always a child to be left behind."""
    steps: list[dict[str, Any]] = [SETUP, {"op": "install", "hook": "a.alpha", "behaviour": "proposes one intent"}]
    for _ in range(400):
        steps += [{"op": "crash", "point": "sidecar.before_checkpoint", "action": "complete_todo", "real": True}, {"op": "restart"}]
    path.write_text(json.dumps(trace(sut="reference", steps=steps)))
    return path


def _until(done: Callable[[], bool], seconds: float = 60) -> None:
    """Poll ``done`` until it holds or ``seconds`` pass: waits as long as a loaded machine needs
    (a hang guard, not a budget); the assertion after it says what should hold."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)


def _alive(pids: list[int]) -> list[int]:
    left = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state != "Z":
            left.append(pid)
    return left


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:  # whatever a failed assertion left: by PID, then its descendants by PID
        if proc.poll() is None:
            below = descendants(proc.pid)
            proc.kill()
            for pid in below:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        proc.wait(timeout=30)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
@pytest.mark.parametrize(
    "command, to_group",
    [
        (("gate", "--quiet"), False),
        (("gate", "--quiet"), True),
        (("replay", "LONG"), False),
        (("soak", "--minutes", "5", "--seed", "3"), False),
    ],
)
def test_ctrl_c_exits_130_with_one_line_and_leaves_no_process(
    tmp_path: Path, started: list[subprocess.Popen[str]], command: tuple[str, ...], to_group: bool
) -> None:
    args = [str(_long_trace(tmp_path / "long.json")) if a == "LONG" else a for a in command]
    env = {**os.environ, "PWH_COUNTEREXAMPLES": str(tmp_path / "found")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pwh", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    started.append(proc)
    deadline = time.monotonic() + 60
    below: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None:
        below = descendants(proc.pid)
        if below:  # pwh is past its imports and has a child running
            break
        time.sleep(0.05)
    assert below, "pwh started no child process to leave behind"
    below = sorted(set(below) | set(descendants(proc.pid)))
    if to_group:  # what a terminal's Ctrl-C does: the whole foreground process group
        os.killpg(proc.pid, signal.SIGINT)
    else:  # a supervisor's: pwh's PID only
        os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out[-2000:], err[-2000:])
    assert err.strip() == "pwh: interrupted", err[-3000:]
    _until(lambda: not _alive(below))
    assert _alive(below) == []


def test_a_file_swapped_after_the_walk_is_never_read(small_packet: Path) -> None:
    """The walk saw a regular file; what is opened later must be that file (same device and
    inode), and never a FIFO, which would block the reader."""
    os.mkfifo(small_packet / "pipe")
    with pytest.raises(packet_mod._NotRegular):
        packet_mod._read_file(small_packet / "pipe", BoundaryScanner(), "pipe")
    readme = small_packet / "README.md"
    seen = readme.stat()
    readme.rename(small_packet / "old.md")
    readme.write_text("swapped in\n")
    assert packet_mod._verify_one(small_packet, "README.md", (seen.st_dev, seen.st_ino), BoundaryScanner(), None) == [
        ("README.md", "unsafe", "not a regular file, or replaced while being verified")
    ]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _runs_pytest(pid: int) -> bool:
    try:
        return b"pytest" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _ignores_sigint(pid: int) -> bool:
    """SIGINT ignored or blocked (the gate blocks it: pwh._harness.interrupt.children_ignore_sigint)."""
    bit = 1 << (signal.SIGINT - 1)
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("SigIgn:", "SigBlk:")) and int(line.split()[1], 16) & bit:
            return True
    return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
def test_children_ignore_the_terminals_sigint_and_pwh_stops_them_before_unwinding(
    tmp_path: Path, started: list[subprocess.Popen[str]]
) -> None:
    """A terminal's Ctrl-C reaches every process of the group: the reliability campaign's racing
    dispatchers ignore it (else each prints its own traceback while it is stopped); pwh stops
    them by PID, and ends promptly with 130."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pwh", "soak", "--campaign", "reliability", "--quick"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    started.append(proc)
    racers: list[int] = []
    deadline = time.monotonic() + 120
    while not racers and time.monotonic() < deadline and proc.poll() is None:
        racers = [pid for pid in descendants(proc.pid) if b"spawn_main" in _cmdline(pid)]
        time.sleep(0.02)
    assert len(racers) >= 1, "the campaign never started its racing dispatchers"
    _until(lambda: all(_ignores_sigint(pid) for pid in racers if _alive([pid])))  # in the race, at its barrier
    assert all(_ignores_sigint(pid) for pid in racers if _alive([pid]))
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and err.strip() == "pwh: interrupted", err[-3000:]
    # Stopped there, not at the campaign's end: its later categories and its verdict never came.
    assert "leaks:" not in out and "verdict:" not in out, out[-3000:]
    assert _alive(racers) == []


def test_the_gates_child_ignores_sigint(tmp_path: Path, started: list[subprocess.Popen[str]]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pwh", "gate", "--quiet"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    started.append(proc)
    deadline = time.monotonic() + 60
    child: list[int] = []
    while not child and time.monotonic() < deadline:
        child = [pid for pid in descendants(proc.pid) if _runs_pytest(pid)]  # not a short-lived helper (git)
        time.sleep(0.02)
    assert child and _ignores_sigint(child[0]) and not _ignores_sigint(proc.pid)
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=60) == 130


def test_a_clean_up_failing_as_ctrl_c_unwinds_is_still_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pwh._cli as cli

    def handler(args: Any) -> int:
        try:
            os.kill(os.getpid(), signal.SIGINT)  # a real SIGINT: the user's Ctrl-C
            time.sleep(5)
        finally:
            raise RuntimeError("a clean-up that broke while unwinding")
        return 0

    monkeypatch.setattr("pwh._cli.gate._vectors", handler)
    assert cli.main(["vectors"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "pwh: interrupted"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
def test_ctrl_c_stops_what_an_adapter_started_in_pwh_and_in_the_gates_child(tmp_path: Path, started: list[subprocess.Popen[str]]) -> None:
    """An adapter that starts a process of its own at construction (a long sleep that leaves its
    parent at once, as a daemon does), once in pwh (the load check) and once per scenario in the
    child: after a Ctrl-C to pwh's PID none is left (pwh is their subreaper, so it still finds them)."""
    pids = tmp_path / "pids"
    daemon = f"import os, time\nif os.fork():\n    os._exit(0)\nopen({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\ntime.sleep(300)\n"
    (tmp_path / "spawner.py").write_text(
        "import subprocess, sys\nfrom pwh._suts.reference import memory_sut\n\n"
        "def factory(**kw):\n"
        "    # a process that leaves its parent at once: an orphan, re-parented away from whoever started it\n"
        f"    subprocess.run([sys.executable, '-c', {daemon!r}], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,\n"
        "                   stderr=subprocess.DEVNULL, check=True)\n"
        "    return memory_sut(**kw)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "pwh", "gate", "--quiet", "--sut", "spawner:factory"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    started.append(proc)
    sleepers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(sleepers) < 3 and time.monotonic() < deadline and proc.poll() is None:
            sleepers = [int(n) for n in pids.read_text().split()] if pids.exists() else []
            time.sleep(0.05)
        assert len(sleepers) >= 3, "the adapter's processes never started"
        os.kill(proc.pid, signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130 and err.strip() == "pwh: interrupted", err[-3000:]
        _until(lambda: not _alive(sleepers))
        assert _alive(sleepers) == []
    finally:  # by PID: only what this test's adapter started (read again: some may have started late)
        for pid in _alive([int(n) for n in pids.read_text().split()] if pids.exists() else []):
            os.kill(pid, signal.SIGKILL)


def test_an_output_path_naming_a_directory_is_refused_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pwh._cli.common as cli

    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("pwh._harness.gate.run_gate", lambda *a, **kw: pytest.fail("the gate ran"))
    assert main(["gate", "--json", "out"]) == 2
    assert one_error_line(capsys.readouterr().err) == "pwh: error: --json out is a directory; name a file"
    assert main(["soak", "--campaign", "reliability", "--json", str(tmp_path / "out")]) == 2
    assert "--json out is a directory" in one_error_line(capsys.readouterr().err)
    with pytest.raises(cli.UsageError, match=r"^cannot write out: ") as caught:
        cli.write(str(tmp_path / "out"), "x")
    assert str(tmp_path) not in str(caught.value)


def test_a_sigint_while_a_child_is_started_is_held_not_lost() -> None:
    """While a child is started the parent holds SIGINT blocked (the child inherits the mask): a
    Ctrl-C arriving then is delivered by the time the block ends, never dropped."""
    from pwh._harness.interrupt import children_ignore_sigint

    seen: list[str] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append("sigint"))
    try:
        with children_ignore_sigint():
            os.kill(os.getpid(), signal.SIGINT)  # held by this thread (another thread may take it early)
            child = subprocess.run(
                [sys.executable, "-c", "print(open('/proc/self/status').read())"], check=True, capture_output=True, text=True
            )
        time.sleep(0.05)
        assert seen == ["sigint"]
    finally:
        signal.signal(signal.SIGINT, previous)
    blocked = next(line for line in child.stdout.splitlines() if line.startswith("SigBlk:"))
    assert int(blocked.split()[1], 16) & (1 << (signal.SIGINT - 1))


def test_a_real_crash_childs_import_path_never_holds_the_cwd(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    (tmp_path / "random.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nraise ImportError('shadowed')\n")
    steps = [
        SETUP,
        {"op": "install", "hook": "a.alpha", "behaviour": "proposes one intent"},
        {"op": "crash", "point": "sidecar.before_checkpoint", "action": "complete_todo", "real": True},
        {"op": "restart"},
    ]
    (tmp_path / "t.json").write_text(json.dumps(trace(sut="reference", steps=steps)))
    proc = pwh("replay", "t.json", cwd=tmp_path, timeout=120)
    assert not marker.exists() and proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------------------------
# verdicts and corpora: one named line, exit 2, never a wait
# --------------------------------------------------------------------------------------------


def _verdict_cases(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "deep.json").write_text('{"schema_version": "pwh_gate_verdict_v1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (tmp_path / "deep65.json").write_text('{"schema_version": "pwh_gate_verdict_v1", "x": ' + "[" * 65 + "]" * 65 + "}")
    (tmp_path / "dir.json").mkdir()
    os.mkfifo(tmp_path / "fifo.json")
    with open(tmp_path / "huge.json", "wb") as fh:
        fh.truncate(64 * 1024 * 1024 + 1)  # sparse
    return {
        "deep.json": "deep.json is not a pwh gate verdict: its JSON is nested too deeply",
        "deep65.json": "nested more than 64 levels deep",
        "dir.json": "dir.json is a directory",
        "fifo.json": "fifo.json is not a regular file",
        "huge.json": "more than a pwh gate verdict may be",
        "missing.json": "cannot read missing.json",
    }


def test_report_and_compare_name_a_hostile_verdict_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, expected in _verdict_cases(tmp_path).items():
        for args in (["report", name], ["compare", name, name]):
            with never_waits():
                assert main(args) == 2, (args, capsys.readouterr().err)
            assert expected in one_error_line(capsys.readouterr().err), args


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ('{"scenarios": 5}', "scenarios is not a list"),
        ('{"scenarios": [1]}', "scenarios[0] is not an object"),
        ('{"scenarios": [{"outcome": "failed", "tags": [["M01"]]}]}', "scenarios[0].tags"),
        ('{"scenarios": [{"outcome": ["failed"]}]}', "scenarios[0].outcome"),
        ('{"scenarios": [{"profile": "divergence", "divergences": [{"expected": 1}]}]}', "scenarios[0].divergences"),
        ('{"scenarios": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ],
)
def test_divergences_names_the_field_a_verdict_gets_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, field: str
) -> None:
    (tmp_path / "v.json").write_text(content)
    assert main(["divergences", str(tmp_path / "v.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pwh divergences: error:") and field in err and "\n" not in err and "internal error" not in err


def test_divergences_and_corpus_never_wait_on_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.json")
    for args in (("divergences", "fifo.json"), ("corpus", "fifo.json")):
        done = pwh(*args, cwd=tmp_path, timeout=30)  # TimeoutExpired: it waited
        assert done.returncode == 2 and "not a regular file" in done.stderr and "internal error" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"value": "x", "label": "private", "kind": "k", "field": ' + "[" * 100_000 + "]" * 100_000 + "}", "line 2 is nested too deeply"),
        ('{"value": "x", "label": "private", "kind": "k", "field": ' + "[" * 70 + "]" * 70 + "}", "line 2 is nested more than 64"),
        ('{"value": "x", "label": "legitimate", "kind": "k", "field": [1]}', "line 2: field, when given, is a string"),
    ],
)
def test_a_hostile_corpus_line_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, says: str) -> None:
    (tmp_path / "c.jsonl").write_text('{"value": "y", "label": "legitimate", "kind": "k"}\n' + line + "\n")
    assert main(["corpus", str(tmp_path / "c.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"pwh corpus: error: c.jsonl: {says}" or (says in err and "\n" not in err), err


# `extended`: a whole gate run with thousands of failures; --failed-in's selection is held in the test command by tests/harness/test_gate_selection.py.
@pytest.mark.extended
def test_failed_in_with_thousands_of_failures_never_exceeds_argv(tmp_path: Path) -> None:
    done = pwh("gate", "--sut", "reference-memory", "--rows", "M06", "--json", "small.json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    verdict = json.loads((tmp_path / "small.json").read_text())
    failed = dict(verdict["scenarios"][0], rfc="fail", profile="fail", outcome="failed", counts_for="sut")
    verdict["scenarios"] = [dict(failed, id=f"t{i}") for i in range(6000)]  # one selection of > 128 KiB
    (tmp_path / "many.json").write_text(json.dumps(verdict))
    done = pwh("gate", "--sut", "reference-memory", "--failed-in", "many.json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0 and "internal error" not in done.stderr, done.stderr


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
def test_ctrl_c_during_a_gate_says_what_ran_before_it(started: list[subprocess.Popen[str]]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pwh", "gate"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    started.append(proc)
    assert proc.stdout is not None
    lines = [proc.stdout.readline() for _ in range(4)]  # the header, then three finished scenarios
    assert lines[-1].startswith("["), lines
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    said = err.strip().splitlines()
    assert proc.returncode == 130 and said[-1] == "pwh: interrupted", err[-2000:]
    assert re.fullmatch(r"pwh gate: interrupted after [1-9]\d*/\d+ scenarios: \d+ (pass|self|FAIL|skip)\b.*", said[0]), said

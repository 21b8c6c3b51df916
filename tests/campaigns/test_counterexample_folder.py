"""The soak's counterexample folder in the shared temp dir is this user's own, and nothing is
written through a link planted there (repro n04 in the project's own words).

The temp dir is shared by every local user: a fixed-name folder another user made first (open to
all), or a link planted in it under the predictable name of a trace (``ROW-INVARIANT-SUT-seedN``),
must never receive the soak's files.
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path
from typing import Any

import pytest

from pwh._campaigns.counterexamples import trace as trace_module
from pwh._campaigns.counterexamples.trace import counterexample_dir, make_trace, run_steps, write_counterexample
from pwh._campaigns.models.names import sut_slug


@pytest.fixture
def shared_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setattr(trace_module, "_TEMP_AT_START", shared)
    monkeypatch.delenv(trace_module.COUNTEREXAMPLES_ENV, raising=False)
    return shared


SUT = "mutant:admits_uncommitted"


def _a_trace() -> dict[str, Any]:
    from tests.campaigns.test_models import EXPLICIT

    steps = EXPLICIT["admits_uncommitted"]
    n, violation = run_steps(SUT, steps)
    assert violation is not None
    return make_trace(1, SUT, {}, steps[:n], violation)


def test_the_default_folder_is_made_private_to_this_user(shared_tmp: Path) -> None:
    folder = counterexample_dir()
    assert folder.parent == shared_tmp and folder.name == f"pwh-counterexamples-{os.getuid()}"
    info = os.lstat(folder)
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o700
    assert counterexample_dir() == folder  # found again, and trusted: it is ours


@pytest.mark.parametrize("planted", ["open to all", "a link to a folder", "another user's"])
def test_a_folder_someone_else_could_write_is_refused(shared_tmp: Path, tmp_path: Path, planted: str) -> None:
    name = shared_tmp / f"pwh-counterexamples-{os.getuid()}"
    if planted == "open to all":
        name.mkdir()
        name.chmod(0o777)
    elif planted == "a link to a folder":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        name.symlink_to(tmp_path / "elsewhere")
    else:
        if os.geteuid() != 0:
            pytest.skip("making a folder owned by another user needs root")
        name.mkdir(mode=0o700)
        nobody = pwd.getpwnam("nobody")
        os.chown(name, nobody.pw_uid, nobody.pw_gid)
    with pytest.raises(PermissionError, match="not this user's private folder"):
        counterexample_dir()


def test_no_counterexample_is_written_through_a_planted_link(tmp_path: Path) -> None:
    trace = _a_trace()
    violation = trace["violation"]
    stem = f"{violation['row']}-{violation['invariant']}-{sut_slug(SUT)}-seed1"
    folder = tmp_path / "found"
    folder.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's own file\n")
    (folder / f"{stem}.feature").symlink_to(victim)
    (folder / f"{stem}.json").symlink_to(tmp_path / "dangling.json")
    paths = write_counterexample(trace, folder) + write_counterexample(trace, folder)
    assert len(paths) == 4
    assert victim.read_text() == "the victim's own file\n"
    assert not (tmp_path / "dangling.json").exists()
    for path in paths:
        assert not path.is_symlink() and path.name.startswith(f"{stem}-")

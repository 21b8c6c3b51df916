"""pwh as a wheel for the packet (pwh/_harness/packet/wheel.py): the same bytes on every build,
every module and data file of the install, the credential corpus left out, and an offline
``pip install --no-index`` of it that runs."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from pwh._harness.packet.wheel import EXCLUDED_DATA, build_wheel

# `extended` (CI runs it after the test command): an offline install into a fresh venv; the wheel's bytes and RECORD are held by tests/harness/test_packet.py in the test command.
pytestmark = pytest.mark.extended

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel() -> tuple[str, bytes]:
    return build_wheel(ROOT)


def test_two_builds_are_the_same_bytes(wheel: tuple[str, bytes]) -> None:
    assert build_wheel(ROOT) == wheel
    assert wheel[0] == "pwh-0.1.0-py3-none-any.whl"


def test_it_holds_every_module_and_data_file_and_a_record_of_each(wheel: tuple[str, bytes]) -> None:
    archive = zipfile.ZipFile(io.BytesIO(wheel[1]))
    names = set(archive.namelist())
    for top in ("pwh", "fakes", "scenarios"):
        for path in (ROOT / top).rglob("*.py"):
            if "__pycache__" not in path.parts:
                assert path.relative_to(ROOT).as_posix() in names
    assert {f"pwh_features/{p.name}" for p in (ROOT / "features").glob("*.feature")} <= names
    assert {f"pwh/schemas/{p.name}" for p in (ROOT / "pwh" / "schemas").glob("*.json")} <= names
    assert not [n for n in names if n.startswith(EXCLUDED_DATA)]  # the credential corpus stays out
    assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in archive.infolist())
    record = archive.read("pwh-0.1.0.dist-info/RECORD").decode().splitlines()
    for line in record:
        name, digest, size = line.rsplit(",", 2)
        if name.endswith("RECORD"):
            continue
        data = archive.read(name)
        assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert int(size) == len(data)
    assert len(record) == len(names)
    assert "pwh = pwh._cli:main" in archive.read("pwh-0.1.0.dist-info/entry_points.txt").decode()


def test_it_installs_offline_and_runs_from_outside_the_checkout(wheel: tuple[str, bytes], tmp_path: Path) -> None:
    """A fresh environment that sees this one's dependencies (never its editable pwh), then
    ``pip install --no-index --no-deps``: no package index is reached."""
    (tmp_path / wheel[0]).write_bytes(wheel[1])
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True, check=True
    ).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", "utf-8")  # a path line: its .pth files are not run
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-index", "--no-deps", "--quiet", str(tmp_path / wheel[0])],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    probe = "import pwh, pwh._suts.loopx.writeback, pwh_features, scenarios, fakes; print(pwh.__file__)"
    where = subprocess.run([str(python), "-c", probe], cwd=outside, capture_output=True, text=True, timeout=120, env=clean)
    assert where.returncode == 0 and where.stdout.strip().startswith(str(env_dir)), where.stdout + where.stderr
    vectors = subprocess.run(
        [str(env_dir / "bin" / "pwh"), "vectors", "--check"], cwd=outside, capture_output=True, text=True, timeout=120, env=clean
    )
    assert vectors.returncode == 0, vectors.stdout + vectors.stderr
    corpus = subprocess.run([str(env_dir / "bin" / "pwh"), "corpus"], cwd=outside, capture_output=True, text=True, timeout=120, env=clean)
    assert corpus.returncode == 2 and "pwh corpus FILE" in corpus.stderr and "Traceback" not in corpus.stderr, corpus.stderr

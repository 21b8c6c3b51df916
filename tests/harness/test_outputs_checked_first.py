"""An output that cannot be written is refused in one line before any work: a packet's folder or
tarball under a file, a packet folder where a file is (the gate's own outputs:
tests/harness/test_failure_differences.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pwh(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pwh", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["packet", "build", "a-file/packet"], "pwh: error: a-file/packet cannot be written: a-file is not a folder"),
        (["packet", "build", "a-file"], "pwh: error: a-file is a file; name a folder"),
        (
            ["packet", "build", "p", "--tar", "a-file/p.tar.gz"],
            "pwh: error: --tar a-file/p.tar.gz cannot be written: a-file is not a folder",
        ),
        (
            ["soak", "--examples", "1", "--json", "a-file/s.json"],
            "pwh: error: --json a-file/s.json cannot be written: a-file is not a folder",
        ),
    ],
)
def test_a_packet_or_summary_that_cannot_be_written_is_refused_before_any_gate(args: list[str], says: str, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("", "utf-8")
    done = pwh(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [says], done.stderr
    assert "running the gate" not in done.stdout and "seed" not in done.stdout  # nothing ran
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # nothing made


@pytest.mark.parametrize(
    ("name", "says"),
    [("gone.tar.gz", "no such file"), ("gone", "no such directory"), ("a-file", "not a directory, nor a .tar.gz packet")],
)
def test_verify_says_what_is_not_there_as_the_name_meant_it(name: str, says: str, tmp_path: Path) -> None:
    from pwh._harness.packet import verify_packet

    (tmp_path / "a-file").write_text("", "utf-8")
    assert verify_packet(tmp_path / name).not_a_packet == says

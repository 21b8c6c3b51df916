"""`pwh smoke`: an adapter's wiring checked in seconds, per seam operation, run as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pwh(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pwh", *args], cwd=cwd, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )


def table(out: str) -> dict[str, str]:
    """operation -> its mark and result, from the smoke table."""
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[0].replace(".", "_").isidentifier() and parts[1] in ("ok", "skip", "FAIL", "-"):
            rows[parts[0]] = " ".join(p for p in parts[1:] if not p.isdigit())
    return rows


def test_the_reference_answers_every_operation_of_the_dispatcher_seam() -> None:
    done = pwh("smoke")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    rows = table(done.stdout)
    dispatcher_ops = [op for op in rows if not op.startswith("turn.")]
    assert len(dispatcher_ops) == 9 and all(rows[op].startswith("ok") for op in dispatcher_ops), rows
    assert all(rows[op].startswith("- ") and "no turn seam" in rows[op] for op in rows if op.startswith("turn.")), rows
    assert "not a verdict" in done.stdout and done.stdout.rstrip().endswith("smoke: ok")
    assert "Traceback" not in done.stdout + done.stderr


# `extended`: tests/harness/test_gate_refuses.py holds an adapter that raises, named at its line, in the test command.
@pytest.mark.extended
def test_an_adapter_that_raises_is_named_at_its_line() -> None:
    done = pwh("smoke", "--sut", "tests.hollow_suts:raises")
    assert done.returncode == 1, done.stdout[-3000:]
    rows = table(done.stdout)
    assert rows["set_profile"].startswith("FAIL") and "raised: RuntimeError at tests.hollow_suts:" in rows["set_profile"], rows
    assert "smoke: FAIL" in done.stdout and "Traceback" not in done.stdout + done.stderr


def test_an_adapter_that_supports_nothing_is_not_wired_exit_3() -> None:
    done = pwh("smoke", "--sut", "tests.hollow_suts:unsupported")
    assert done.returncode == 3, done.stdout[-3000:]
    assert table(done.stdout)["set_profile"].startswith("skip unsupported: set_profile is not offered by this adapter")
    assert "smoke: not wired: dispatch never answered" in done.stdout


def test_a_wrong_answer_fails_the_smoke_with_expected_and_seen() -> None:
    done = pwh("smoke", "--sut", "tests.broken_suts:replay_calls_provider")
    assert done.returncode == 1, done.stdout[-3000:]
    fails = [line for line in done.stdout.splitlines() if line.startswith("  FAIL features/")]
    assert fails and all("expected" in line and "seen" in line for line in fails), done.stdout
    assert table(done.stdout)["dispatch"].startswith("ok")  # it answered; the answer was wrong


def test_the_template_is_a_skeleton_that_smokes_as_not_wired_and_is_never_written_over(tmp_path: Path) -> None:
    done = pwh("smoke", "--template", "my_adapter.py", cwd=tmp_path)
    assert done.returncode == 0 and "wrote my_adapter.py" in done.stdout, done.stderr
    assert "raise Unsupported" in (tmp_path / "my_adapter.py").read_text()
    smoked = pwh("smoke", "--sut", "my_adapter:factory", cwd=tmp_path)
    assert smoked.returncode == 3, smoked.stdout[-3000:] + smoked.stderr[-2000:]
    rows = table(smoked.stdout)
    assert "unsupported: dispatch is not wired yet" in rows["dispatch"]
    # Wired (it returns nothing a check reads), its scenarios stopped at another operation: said so.
    assert rows["set_profile"] == "ok called: its scenarios stopped at register_intent_kind, not wired yet", rows
    header = next(line for line in smoked.stdout.splitlines() if line.startswith("operation"))
    assert header.split() == ["operation", "status", "scenarios", "detail"]
    tally = next(line for line in smoked.stdout.splitlines() if line.startswith("scenarios:"))
    assert tally.startswith("scenarios: 0 pass") and "testbed-only" in tally, tally  # pwh's fakes pass, never the skeleton
    assert "from pwh._" not in (tmp_path / "my_adapter.py").read_text()  # the public API only
    (tmp_path / "out").mkdir()
    elsewhere = pwh("smoke", "--template", "out/theirs.py", cwd=tmp_path)
    assert "`cd out && pwh smoke --sut theirs:factory`" in elsewhere.stdout, elsewhere.stdout
    again = pwh("smoke", "--template", "my_adapter.py", cwd=tmp_path)
    assert again.returncode == 2 and "exists" in again.stderr and len(again.stderr.strip().splitlines()) == 1
    assert pwh("smoke", "--template", "x.txt", cwd=tmp_path).returncode == 2

"""`pwh soak --cluster` and `--against` on the command line without a cluster: what is refused,
and the one line a machine without the cluster extra gets (the extra is simulated away)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _pwh(*args: str, without_distributed: bool = False) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        + ("sys.modules['distributed'] = None\n" if without_distributed else "")
        + ("from pwh._cli import main\nsys.exit(main())\n")
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120
    )


def test_without_the_cluster_extra_a_cluster_soak_is_one_line_naming_it() -> None:
    done = _pwh("soak", "--cluster", "tcp://127.0.0.1:9", "--minutes", "0.05", without_distributed=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().startswith("pwh: error:") and "[cluster]" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (("soak", "--cluster", "tcp://127.0.0.1:9", "--workers", "2", "--minutes", "0.05"), "--workers does not apply with --cluster"),
        (
            ("soak", "--against", "loopx", "--cluster", "tcp://127.0.0.1:9", "--minutes", "0.05"),
            "--cluster does not apply to a differential soak",
        ),
        (("soak", "--campaign", "reliability", "--cluster", "tcp://127.0.0.1:9"), "--cluster applies to the models"),
        (("soak", "--benchmark", "--cluster", "tcp://127.0.0.1:9"), "drop --cluster"),
    ],
)
def test_what_a_cluster_soak_refuses(args: tuple[str, ...], message: str) -> None:
    done = _pwh(*args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1

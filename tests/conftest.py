"""Test-wide settings: the Hypothesis profile (pwh/_campaigns/models/profiles.py; quick for CI, deeper ones by name)."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile

import pytest
from hypothesis import settings

from pwh._campaigns.models.profiles import DEFAULT_PROFILE, register_hypothesis_profiles

register_hypothesis_profiles()  # ci, dev, deep: the table `pwh soak --profile` reads too
settings.load_profile(os.environ.get("PWH_HYPOTHESIS_PROFILE", DEFAULT_PROFILE))

# Where the environment says PYTHONDONTWRITEBYTECODE (this machine's does), every Python process the
# tests start (several hundred: gate runs, their child pytests, CLI calls) would compile pwh, the
# fakes and the step library from source again, ~0.15 s each. The tests let them keep their bytecode
# (under __pycache__, ignored by git); what the tests check never depends on it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# The soaks the tests run keep their counterexamples and Hypothesis example database in a folder of
# this test run (removed at its end), never in the user's own folder that `pwh soak` uses by default
# (one per user, shared by every checkout): a test run neither reads nor leaves anything there. The
# processes the tests start (xdist workers, soak workers, gate children) inherit it.
if not os.environ.get("PWH_COUNTEREXAMPLES"):
    _RUN_COUNTEREXAMPLES = tempfile.mkdtemp(prefix="pwh-test-counterexamples-")
    os.environ["PWH_COUNTEREXAMPLES"] = _RUN_COUNTEREXAMPLES
    atexit.register(shutil.rmtree, _RUN_COUNTEREXAMPLES, True)
sys.dont_write_bytecode = False

# A shell starts a background job (`pytest ... &`) with SIGINT ignored, and an ignored signal stays
# ignored across exec: every process the tests start would then ignore the Ctrl-C the interrupt tests
# send it (Python installs its KeyboardInterrupt handler only where SIGINT is not ignored at start).
# The tests run as from a terminal: SIGINT handled here, so the processes they start get the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# The slowest files are collected first, longest first (as measured: `--durations` times summed
# per file, quiet 2-core machine, 2026-12-04, after the test command left the coverage gate to the
# extended tier): with `-n auto --dist loadfile` each worker takes whole files in collection order
# (the next one when at most two tests of its own are left), so starting the long ones first lets
# the workers finish together instead of one waiting on a late long file. pytest-xdist would
# otherwise reorder the files by their number of tests (`--loadscope-reorder`, on by default),
# putting these few-test files last. The files the test command leaves out or skips without an
# extra (the extended tier's, the cluster's) come last: they order the extended run.
SLOW_FIRST = (
    "tests/harness/test_packet.py",  # 41 s
    "tests/campaigns/test_models.py",  # 40 s
    "tests/suts/test_stdio_seam.py",  # 31 s
    "tests/suts/test_loopx_writeback.py",  # 29 s
    "tests/suts/test_loopx.py",  # 24 s
    "tests/harness/test_cli_hostile.py",  # 22 s
    "tests/whole_gate/test_gate_mutants.py",  # 19 s
    "tests/whole_gate/test_gate.py",  # 17 s (the reference's whole run, sharded)
    "tests/harness/test_gate_refuses.py",
    "tests/harness/test_gate_selection.py",
    "tests/campaigns/test_differential.py",
    "tests/harness/test_html_report.py",
    "tests/harness/test_hostile_packets.py",
    "tests/whole_gate/test_gate_hollow.py",
    "tests/harness/test_gate_speed.py",
    "tests/harness/test_verdict_commands.py",
    "tests/harness/test_smoke.py",
    "tests/suts/test_adapter_author.py",
    "tests/campaigns/test_reliability.py",
    "tests/harness/test_report_from_saved_verdict.py",
    "tests/harness/test_m13_credentials.py",
    "tests/suts/test_stdio_matrix_b.py",
    "tests/suts/test_stdio_matrix_a.py",
    "tests/suts/test_loopx_differential.py",
    "tests/campaigns/test_cluster.py",
)


TIERS_LEFT_OUT = ("slow", "extended")  # markers the test command leaves out (below)


def pytest_configure(config: object) -> None:
    option = getattr(config, "option", None)
    if option is not None and hasattr(option, "loadscopereorder"):
        option.loadscopereorder = False  # keep SLOW_FIRST's order (xdist reads it when it schedules)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def rank(item: object) -> int:
        path = str(getattr(item, "nodeid", ""))
        return next((i for i, prefix in enumerate(SLOW_FIRST) if path.startswith(prefix)), len(SLOW_FIRST))

    items.sort(key=rank)  # stable: the order within each group stays as collected
    # Two tiers are left out unless a -m expression is given (or a test is named by its id): the
    # test command stays about three minutes long. `extended` runs check again, at a wider scale, a
    # rule the test command already checks (more parameters, more SUTs, another whole matrix):
    # `.ci/run` runs them right after the test command (`python -m pytest -m extended -n auto
    # --dist loadfile`). `slow` runs are release-scale (every mutant's own gate, LoopX's whole
    # matrix): `python -m pytest -m slow`. Here, not in pyproject's addopts: `pwh gate`'s child
    # pytest reads those too, and must never leave out a scenario a feature file tags @slow.
    if config.getoption("markexpr", "") or any("::" in str(arg) for arg in config.args):
        return
    left_out = [item for item in items if any(item.get_closest_marker(tier) is not None for tier in TIERS_LEFT_OUT)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        kept = set(map(id, left_out))
        items[:] = [item for item in items if id(item) not in kept]

"""A Ctrl-C ends pwh with 130 and one line even where Python cannot raise its KeyboardInterrupt.

Each case runs pwh's ``main`` as the program in a fresh interpreter (its handling of SIGINT is
process-wide), with a command handler that puts the signal where a real run met it: inside a
garbage collector callback, as Hypothesis keeps one (the interrupt is dropped there, and a soak
went on for minutes), or inside code that catches the interrupt and carries on. A wrong handling
hangs (the test's timeout), prints a traceback, or exits with another status.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pwh._harness import interrupt
from scenarios.models._system import ModelSystem

ROOT = Path(__file__).resolve().parents[2]

RUN_AS_PWH = """
import os, signal, sys
import pwh._cli as cli
import pwh._harness.interrupt as ctrl_c
ctrl_c.GRACE_S = {grace}
{body}
cli._vectors = handler
sys.argv = ["pwh", "vectors"]
sys.exit(cli.main())
"""


def _run_as_pwh(body: str, grace: float) -> subprocess.CompletedProcess[str]:
    script = RUN_AS_PWH.format(grace=grace, body=textwrap.dedent(body))
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)


def test_a_ctrl_c_dropped_inside_a_gc_callback_is_raised_again_at_once() -> None:
    """The grace is longer than the test's timeout: only the redelivery can end this run."""
    done = _run_as_pwh(
        """
        import gc, time
        def handler(args):
            def callback(phase, info):
                if phase == "start" and not sent:
                    sent.append(1)
                    os.kill(os.getpid(), signal.SIGINT)
                    sum(range(1000))  # Python code: the handler runs here, and gc drops what it raises
            sent = []
            gc.callbacks.append(callback)
            gc.collect()
            while True:  # the command carries on: only a KeyboardInterrupt ends it
                time.sleep(0.05)
        """,
        grace=600,
    )
    assert (done.returncode, done.stderr.strip()) == (130, "pwh: interrupted"), done.stderr[-2000:]


def test_a_ctrl_c_that_the_command_swallows_ends_pwh_after_the_grace() -> None:
    done = _run_as_pwh(
        """
        import time
        def handler(args):
            sent = False
            while True:
                try:
                    if not sent:
                        sent = True
                        os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.05)
                except KeyboardInterrupt:  # code pwh ran that catches everything
                    pass
        """,
        grace=0.5,
    )
    assert (done.returncode, done.stderr.strip()) == (130, "pwh: interrupted"), done.stderr[-2000:]


def test_an_interrupted_run_flushes_and_runs_its_exit_handlers_before_ending_with_130(tmp_path: Path) -> None:
    marker = tmp_path / "atexit-ran"
    done = _run_as_pwh(
        f"""
        import atexit
        def handler(args):
            atexit.register(lambda: open({str(marker)!r}, "w").close())
            sys.stdout.write("unflushed output")
            os.kill(os.getpid(), signal.SIGINT)
            return 0
        """,
        grace=600,
    )
    assert (done.returncode, done.stdout, done.stderr.strip()) == (130, "unflushed output", "pwh: interrupted")
    assert marker.exists()


def test_a_ctrl_c_handled_in_time_stands_the_last_resort_down() -> None:
    """Called in-process (as the tests call it), ``main`` returns 130 and the process lives on past
    the grace: the last resort must not end it later."""
    script = textwrap.dedent(
        """
        import os, signal, sys, time
        import pwh._cli as cli
        import pwh._harness.interrupt as ctrl_c
        ctrl_c.GRACE_S = 0.2
        def handler(args):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        cli._vectors = handler
        code = cli.main(["vectors"])
        time.sleep(1.0)
        print("lived on after", code)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "lived on after 130"), done.stderr[-2000:]


def test_the_models_stop_before_the_next_step_once_a_ctrl_c_came(monkeypatch: pytest.MonkeyPatch) -> None:
    system = ModelSystem("reference-memory")
    try:
        system.apply({"op": "setup", "ceiling": None, "segment": 3})
        monkeypatch.setattr(interrupt, "_interrupted", True)
        with pytest.raises(KeyboardInterrupt):
            system.apply({"op": "turn", "action": "complete_todo"})
        assert len(system.steps) == 1  # the step was never started
    finally:
        system.close()


def test_a_ctrl_c_handled_in_process_leaves_no_interrupted_state_behind() -> None:
    """After ``main`` returned 130, later work in the same process (a test worker) runs normally."""
    restore = interrupt.install()
    try:
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        assert interrupt.interrupted()
    finally:
        restore()
    assert not interrupt.interrupted()
    interrupt.raise_if_interrupted()

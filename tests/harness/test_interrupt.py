"""A Ctrl-C ends pwh with 130 and one line even where Python cannot raise its KeyboardInterrupt.

Each case runs pwh's ``main`` as the program in a fresh interpreter (its handling of SIGINT is
process-wide), with a command handler that puts the signal where a real run met it: inside a
garbage collector callback, as Hypothesis keeps one (the interrupt is dropped there, and a soak
went on for minutes), or inside code that catches the interrupt and carries on. A wrong handling
hangs (the test's timeout), prints a traceback, or exits with another status.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pwh._campaigns.models.system import ModelSystem
from pwh._harness import interrupt

ROOT = Path(__file__).resolve().parents[2]

RUN_AS_PWH = """
import os, signal, sys
import pwh._cli as cli
import pwh._cli.gate
import pwh._harness.interrupt as ctrl_c
ctrl_c.GRACE_S = {grace}
{body}
pwh._cli.gate._vectors = handler
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


def test_a_redelivered_ctrl_c_that_lands_inside_the_hook_that_arms_it_is_raised_again() -> None:
    """The main thread is held in the unraisable hook past the redelivery's delay (as a busy
    machine holds it): what the hook raises is dropped without reaching any hook, so the handling
    must see it is there and try again. Without that, the run goes on until the test's timeout."""
    done = _run_as_pwh(
        """
        import gc, threading, time
        class HeldTimer(threading.Timer):
            held = []
            def start(self):
                super().start()
                if not HeldTimer.held:  # the first start only: the hook's own
                    HeldTimer.held.append(1)
                    time.sleep(0.3)
        threading.Timer = HeldTimer
        def handler(args):
            def callback(phase, info):
                if phase == "start" and not sent:
                    sent.append(1)
                    os.kill(os.getpid(), signal.SIGINT)
            sent = []
            gc.callbacks.append(callback)
            gc.collect()
            while True:
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
    the grace: the last resort must not end it later. The script waits for the last resort's own
    thread to end (it ends the process instead, when not stood down), however late it runs."""
    script = textwrap.dedent(
        """
        import os, signal, sys, threading, time
        import pwh._cli as cli
        import pwh._cli.gate
        import pwh._harness.interrupt as ctrl_c
        ctrl_c.GRACE_S = 0.2
        def handler(args):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        pwh._cli.gate._vectors = handler
        code = cli.main(["vectors"])
        last_resort = [t for t in threading.enumerate() if t.name == "pwh-ctrl-c"]
        for thread in last_resort:
            thread.join(timeout=50)
        print("lived on after", code, "past", len(last_resort), "last resort")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "lived on after 130 past 1 last resort"), done.stderr[-2000:]


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


# -- SIGTERM and SIGHUP end pwh as a Ctrl-C does (repro n05) ----------------------------------------


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_sigterm_or_sighup_stops_what_pwh_started_removes_its_temp_folders_and_ends_with_128_plus_the_signal(
    tmp_path: Path, name: str, code: int
) -> None:
    pids = tmp_path / "pids"
    folder = tmp_path / "folder"
    done = _run_as_pwh(
        f"""
        import subprocess, tempfile, time
        from pwh._harness.paths import fast_tmp
        def handler(args):
            child = subprocess.Popen(["sleep", "60"])
            with tempfile.TemporaryDirectory(prefix="pwh-test-", dir=fast_tmp()) as tmp:
                open({str(pids)!r}, "w").write(str(child.pid))
                open({str(folder)!r}, "w").write(tmp)
                os.kill(os.getpid(), signal.{name})
                time.sleep(30)
            return 0
        """,
        grace=600,
    )
    assert (done.returncode, done.stderr.strip()) == (code, f"pwh: terminated ({name})"), done.stderr[-2000:]
    assert not _alive(int(pids.read_text()))
    assert not Path(folder.read_text()).exists()


def _in_use(folders: set[str]) -> bool:
    """Some folder of the run holds something already (its children are at work in it)."""
    for folder in folders:
        try:
            if os.listdir(folder):
                return True
        except OSError:
            continue
    return False


def _gone_within(seconds: float, done: Callable[[], bool]) -> None:
    """Poll ``done`` until it holds or ``seconds`` pass (a hang guard, not a budget)."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)


def _descendants(root: int) -> list[int]:
    return [pid for pid in interrupt.descendants(root) if _alive(pid)]


def _shm_runs() -> set[str]:
    """The soak runs' folders in /dev/shm (every worker's stores are made inside its run's)."""
    shm = Path("/dev/shm")
    return {str(shm / d) for d in os.listdir(shm) if d.startswith("pwh-soak-")} if shm.is_dir() else set()


def _their_folders(pids: list[int], runs_before: set[str]) -> set[str]:
    """The run's temporary folders, as its children name them (argument or environment), and the
    soak run folder that appeared since it started."""
    found: set[str] = _shm_runs() - runs_before
    for pid in pids:
        for part in ("cmdline", "environ"):
            try:
                data = Path(f"/proc/{pid}/{part}").read_bytes()
            except OSError:
                continue
            found.update(m.decode() for m in re.findall(rb"/[^\0=]*?/pwh-(?:gate|soak)-[A-Za-z0-9_]+", data))
    return found


@pytest.mark.parametrize(
    ("command", "want"),
    [
        (["soak", "--minutes", "10", "--workers", "2", "--sut", "reference-memory", "--no-database"], 2),
        (["gate", "--quiet"], 1),
    ],
    ids=["soak --workers 2", "gate"],
)
def test_a_sigterm_to_pwh_leaves_no_process_and_no_temp_folder_behind(tmp_path: Path, command: list[str], want: int) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    p = subprocess.Popen([sys.executable, "-m", "pwh", *command], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    before: list[int] = []
    folders: set[str] = set()
    runs_before = _shm_runs()
    try:
        # Until pwh's children run and have made something in its folders (the gate's child pytest
        # its basetemp, a soak worker its stores): waited for, however long that takes (hang guard).
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and p.poll() is None and (len(before) < want or not _in_use(folders)):
            time.sleep(0.1)
            before = _descendants(p.pid)
            folders = _their_folders(before, runs_before)
        assert len(before) >= want, "pwh never started its children"
        assert _in_use(folders)  # the gate's folder; the soak's run folder, holding every worker's stores
        p.send_signal(signal.SIGTERM)
        _out, err = p.communicate(timeout=60)
        assert (p.returncode, err.strip().splitlines()[-1:]) == (143, ["pwh: terminated (SIGTERM)"]), err[-2000:]
        # What pwh stopped and removed is gone at once; another test's soak folder in /dev/shm, if
        # one was taken for this run's, is gone when that soak ends: waited for, not slept on.
        _gone_within(60, lambda: not [pid for pid in before if _alive(pid)] and not [d for d in folders if os.path.exists(d)])
        assert not [pid for pid in before if _alive(pid)]
        assert not [d for d in folders if os.path.exists(d)]
    finally:
        for pid in [p.pid, *before]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if p.poll() is None:
            p.wait()

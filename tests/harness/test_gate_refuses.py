"""A gate that cannot be fooled: a bad matrix or a misbehaving adapter is exit 2, named by
file:line, before any scenario runs — never a PASS, never a quiet exit 0, never a traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.tiers import beyond, collected_cases

ROOT = Path(__file__).resolve().parents[2]
ENABLED = "    Given the post-writeback phase is enabled\n"


def pwh(*args: str, pythonpath: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-m", "pwh", *args],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def assert_refused(proc: subprocess.CompletedProcess[str], *expected: str, private: Path) -> None:
    """Exit 2, each expected text on stderr, no traceback, no absolute path."""
    err = proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], err[-2000:])
    for text in expected:
        assert text in err, (text, err)
    assert "Traceback" not in err + proc.stdout
    assert str(private) not in err + proc.stdout and str(ROOT) not in err + proc.stdout


# ---------------------------------------------------------------------------------------------
# A bad matrix: refused by the preflight, one line per problem at its file and line
# ---------------------------------------------------------------------------------------------


def _features(tmp_path: Path, name: str | None = None, text: str = "") -> Path:
    target = tmp_path / "features"
    shutil.copytree(ROOT / "features", target)
    if name:
        (target / name).write_text(text)
    return target


BAD_MATRICES = {
    "untagged": (
        "Feature: x\n\n  Scenario: nobody tagged me\n" + ENABLED,
        "features/extra.feature:3: scenario 'nobody tagged me' has no row or rule tag",
    ),
    "unknown_row_M99": ("Feature: x\n\n  @M99\n  Scenario: row ninety-nine\n" + ENABLED, "features/extra.feature:4: unknown tag @M99"),
    "lower_case_m04": (
        "Feature: x\n\n  @m04\n  Scenario: lower case\n" + ENABLED,
        "features/extra.feature:4: unknown tag @m04 (tags are case-sensitive: @M04?)",
    ),
    "two_row_tags": (
        "Feature: x\n\n  @M04 @M05\n  Scenario: greedy\n" + ENABLED,
        "features/extra.feature:4: scenario 'greedy' has 2 row tags (M04, M05)",
    ),
    "undefined_step": (
        "Feature: x\n\n  @M04\n  Scenario: moon\n" + ENABLED + "    When the moon is full\n",
        "features/extra.feature:6: no step definition for when: 'the moon is full'",
    ),
    "gherkin_syntax_error": (
        "Feature: x\n\n  @M04\n  Scenario: s\n" + ENABLED + "  Examples oops\n    | a |\n",
        "features/extra.feature:6: Gherkin syntax error (6:3): expected:",
    ),
}


# The test command refuses the first three kinds of bad matrix by name; CI's extended tier the rest.
@pytest.mark.parametrize("kind", beyond(sorted(BAD_MATRICES), lambda kind: kind in sorted(BAD_MATRICES)[:3]))
def test_gate_refuses_a_bad_matrix_before_running_it(kind: str, tmp_path: Path) -> None:
    text, problem = BAD_MATRICES[kind]
    features = _features(tmp_path, "extra.feature", text)
    proc = pwh("gate", "--features", str(features))  # not --quiet: a scenario that ran would print its progress line
    assert_refused(proc, problem, "no scenario was run", private=tmp_path)
    assert "verdict" not in proc.stdout  # nothing ran: no table
    assert not re.search(r"^\[ *\d+/\d+[ \]]", proc.stdout, re.M), proc.stdout[-2000:]


def test_gate_refuses_a_bad_matrix_under_rows_too(tmp_path: Path) -> None:
    """``--rows`` looks at some rows; the rest of the matrix must still be sound."""
    features = _features(tmp_path, "extra.feature", "Feature: x\n\n  Scenario: nobody tagged me\n" + ENABLED)
    proc = pwh("gate", "--quiet", "--rows", "M01", "--features", str(features))
    assert_refused(proc, "features/extra.feature:3: scenario 'nobody tagged me' has no row or rule tag", private=tmp_path)


def test_gate_refuses_a_row_with_no_scenario(tmp_path: Path) -> None:
    features = _features(tmp_path)
    for row_file in features.glob("m06_*.feature"):  # every file of row M06 (its scenarios and the survivor ones)
        row_file.unlink()
    proc = pwh("gate", "--quiet", "--features", str(features))
    assert_refused(proc, "features/: row M06 has no scenario", private=tmp_path)


def test_every_problem_is_one_line_at_its_file_and_line(tmp_path: Path) -> None:
    text = "Feature: x\n\n  Scenario: untagged\n" + ENABLED + "\n  @M04 @M05\n  Scenario: two\n" + ENABLED
    features = _features(tmp_path, "extra.feature", text)
    (features / "broken.feature").write_text("Feature: y\n\n  @M04\n  Scenario: s\n" + ENABLED + "  Examples oops\n")
    proc = pwh("gate", "--quiet", "--features", str(features))
    assert_refused(proc, private=tmp_path)
    lines = proc.stderr.strip().splitlines()[1:]
    assert len(lines) == 3 and all(re.match(r"features/\w+\.feature:\d+: \S", line) for line in lines), lines


# ---------------------------------------------------------------------------------------------
# Adapters that raise at import or construction: exit 2 from gate, soak and packet build
# ---------------------------------------------------------------------------------------------

RAISES = {
    "exit0": "raise SystemExit(0)",
    "exit1": "raise SystemExit(1)",
    "interrupt": "raise KeyboardInterrupt",
    "value": 'raise ValueError("adapter misconfigured")',
}
SHOWN = {"exit0": "SystemExit: 0", "exit1": "SystemExit: 1", "interrupt": "KeyboardInterrupt", "value": "ValueError: adapter misconfigured"}
COMMANDS = ("gate", "soak", "packet")
PHASES = ("import", "construction")
CASES = [(c, p, k) for c in COMMANDS for p in PHASES for k in RAISES]
# The test command keeps one kind per command and phase, every kind among them; the rest are extended.
KEPT = {
    ("gate", "import", "exit0"),
    ("gate", "construction", "value"),
    ("soak", "import", "interrupt"),
    ("soak", "construction", "exit1"),
    ("packet", "import", "value"),
    ("packet", "construction", "interrupt"),
}


def _write_adapters(folder: Path) -> None:
    """One module per exception raised at import (line 3), and one with a factory per exception
    raised at construction (line 3 + 3*i)."""
    for kind, statement in RAISES.items():
        (folder / f"refuse_at_import_{kind}.py").write_text(f'"""Raises while imported."""\n\n{statement}\n')
    body = ['"""Each factory raises while constructing the adapter."""']
    for kind, statement in RAISES.items():
        body += ["", f"def make_{kind}():", f"    {statement}"]
    (folder / "refuse_at_construction.py").write_text("\n".join(body) + "\n")


def _expected_line(phase: str, kind: str) -> str:
    if phase == "import":
        return f"refuse_at_import_{kind}.py:3"
    return f"refuse_at_construction.py:{4 + 3 * list(RAISES).index(kind)}"


def _spec(phase: str, kind: str) -> str:
    return f"refuse_at_import_{kind}:make" if phase == "import" else f"refuse_at_construction:make_{kind}"


def _run(command: str, spec: str, adapters: Path, out: Path) -> subprocess.CompletedProcess[str]:
    if command == "gate":
        return pwh("gate", "--quiet", "--sut", spec, pythonpath=adapters)
    if command == "soak":
        return pwh("soak", "--examples", "1", "--no-real-crashes", "--sut", spec, pythonpath=adapters)
    # the broken adapter first: it is refused at load, before the reference would run its matrix
    return pwh("packet", "build", str(out / spec.replace(":", "-")), "--sut", spec, "--sut", "reference", pythonpath=adapters)


@pytest.fixture(scope="module")
def adapter_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[tuple[str, str, str], subprocess.CompletedProcess[str]], Path]:
    cases = collected_cases(request, "test_an_adapter_that_raises_is_exit_2_naming_its_file_and_line", ("command", "phase", "kind"))
    base = tmp_path_factory.mktemp("adapters")
    adapters, out = base / "adapters", base / "out"
    adapters.mkdir()
    out.mkdir()
    _write_adapters(adapters)
    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = {case: pool.submit(_run, case[0], _spec(case[1], case[2]), adapters, out) for case in cases}
    return {case: f.result() for case, f in futures.items()}, base


@pytest.mark.parametrize(("command", "phase", "kind"), beyond(CASES, KEPT.__contains__, unpack=True), ids=["-".join(c) for c in CASES])
def test_an_adapter_that_raises_is_exit_2_naming_its_file_and_line(adapter_runs, command: str, phase: str, kind: str) -> None:  # type: ignore[no-untyped-def]
    runs, base = adapter_runs
    proc = runs[(command, phase, kind)]
    assert_refused(proc, f"failed at {phase}: {SHOWN[kind]} (at {_expected_line(phase, kind)})", private=base)
    assert len([line for line in proc.stderr.splitlines() if line.startswith("pwh:")]) == 1


def test_a_private_value_in_the_adapters_message_is_withheld(tmp_path: Path) -> None:
    (tmp_path / "refuse_private.py").write_text('def make():\n    raise ValueError("no key in /home/alice/.config/x")\n')
    proc = pwh("gate", "--quiet", "--sut", "refuse_private:make", pythonpath=tmp_path)
    assert_refused(proc, "ValueError: (message withheld: it would carry a private value) (at refuse_private.py:2)", private=tmp_path)
    assert "alice" not in proc.stderr


def test_an_adapter_whose_close_raises_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "refuse_close.py").write_text(
        "from pwh._suts.reference import ReferenceSUT\n\n\nclass ClosesBadly(ReferenceSUT):\n"
        "    def close(self):\n        raise GeneratorExit('bye')\n"
    )
    for args in (["gate", "--quiet"], ["soak", "--examples", "1", "--no-real-crashes"]):
        proc = pwh(*args, "--sut", "refuse_close:ClosesBadly", pythonpath=tmp_path)
        assert_refused(proc, "failed at close: GeneratorExit: bye (at refuse_close.py:6)", private=tmp_path)


# ---------------------------------------------------------------------------------------------
# Inside the scenario run: an adapter's BaseException fails its scenario, never ends the run
# ---------------------------------------------------------------------------------------------


def test_an_adapters_keyboard_interrupt_in_a_scenario_fails_that_scenario(tmp_path: Path) -> None:
    """Only in the scenario process (the gate sets PWH_FEATURES_ROOT there) does close raise:
    pytest would take it for a Ctrl-C and stop the run after the first scenario, reported passed."""
    (tmp_path / "refuse_in_scenario.py").write_text(
        "import os\n\nfrom pwh._suts.reference import ReferenceSUT\n\n\nclass Interrupts(ReferenceSUT):\n"
        "    def close(self):\n        super().close()\n        if os.environ.get('PWH_FEATURES_ROOT'):\n"
        "            raise KeyboardInterrupt\n"
    )
    verdict = tmp_path / "v.json"
    proc = pwh("gate", "--quiet", "--rows", "M01", "--json", str(verdict), "--sut", "refuse_in_scenario:Interrupts", pythonpath=tmp_path)
    assert proc.returncode == 1, (proc.stdout[-2000:], proc.stderr[-2000:])
    scenarios = json.loads(verdict.read_text())["scenarios"]
    assert len(scenarios) >= 2 and all(s["tags"] == ["M01"] for s in scenarios)
    for s in scenarios:
        assert s["outcome"] == "failed" and "KeyboardInterrupt (at refuse_in_scenario.py:10)" in s["seen"], s

"""What a file holds is made safe for the medium pwh writes it to (pwh._harness.safe_text).

A verdict from a packet or a colleague, or a feature file a packet ships, is someone else's text:

- on a terminal (``pwh report``, ``pwh compare``, ``pwh packet verify``, ``pwh scenarios check``
  and the gate's progress lines) no control sequence arrives raw: escape sequences, carriage
  returns and newlines inside a name are shown escaped, so a file cannot erase lines, retitle the
  window or print a line pwh never wrote;
- in JUnit XML nothing XML 1.0 forbids: the file CI reads always parses;
- in Markdown no live HTML: markup characters are entities, so a viewer shows them as text.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pwh._cli import main
from pwh._harness.report import junit_xml, markdown_report
from pwh._harness.safe_text import for_markdown, for_terminal, for_xml
from pwh._harness.scenarios_check import Problem

ROOT = Path(__file__).resolve().parents[2]
ERASE = "\x1b[1A\x1b[2K" * 3 + "\x1b]0;pwh: all good\x07" + "\r"
SPOOF = "\nno difference: every row and scenario has the same RFC and profile status\x1b[8m"
CONTROLS = ("\x1b", "\x07", "\r", "\x9b", "\u202e")


def pwh(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pwh", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("verdict") / "m06.json"
    done = pwh("gate", "--sut", "reference-memory", "--rows", "M06", "--quiet", "--json", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(out.read_text("utf-8"))


def hostile(verdict: dict[str, Any]) -> dict[str, Any]:
    """The verdict failed by hand, every string a file may carry loaded with controls and markup."""
    bad = copy.deepcopy(verdict)
    for s in bad["scenarios"]:
        s.update(rfc="fail", profile="fail", outcome="failed", counts_for="sut")
        s.update(
            scenario=s["scenario"] + ERASE + " <script>alert(2)</script>\u202e\x9b",
            expected="an answer \x01\x1b[31m",
            seen='<img src=x onerror="alert(1)"> | cell',
            clause="§9 \x1b[31m",
            failed_step="Then \x1b]0;owned\x07 it",
        )
    bad["scenarios"][-1]["scenario"] += SPOOF
    return bad


def assert_no_raw_controls(text: str) -> None:
    for ch in CONTROLS:
        assert ch not in text, f"{ch!r} reached the output raw"


def test_the_helpers_escape_every_control_and_keep_plain_text() -> None:
    plain = "features/m06.feature:12 a second delivery — ünïcode, tabs\tstay"
    assert for_terminal(plain) == plain and for_xml(plain) == plain
    assert for_terminal("a\x1b[2Kb\r\nc\x9b\u202e") == "a\\x1b[2Kb\\x0d\\x0ac\\x9b\\u202e"
    assert for_terminal("one\ntwo\x1b", lines=True) == "one\ntwo\\x1b"
    assert for_xml("x\x01y\nz\ud800") == "x\\x01y\nz\\ud800"
    assert for_markdown('<img onerror="x"> a|b\nc & d') == '&lt;img onerror="x"&gt; a\\|b c &amp; d'


def test_report_and_compare_never_write_a_control_sequence_to_the_terminal(
    genuine: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.json").write_text(json.dumps(genuine), "utf-8")
    (tmp_path / "b.json").write_text(json.dumps(hostile(genuine)), "utf-8")
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    out = capsys.readouterr().out
    assert_no_raw_controls(out)
    assert "\\x1b[1A" in out and "\\x0ano difference" in out  # shown, escaped, on the scenario's own line
    assert not any(line.startswith("no difference") for line in out.splitlines())
    assert main(["report", str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert_no_raw_controls(out)
    assert "RFC FAIL" in out and "expected an answer \\x01\\x1b[31m" in out


def test_a_file_name_with_controls_is_shown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    name = "v\x1b]0;x\x07.json"
    (tmp_path / name).write_text("{not json", "utf-8")
    assert main(["report", name]) == 2
    err = capsys.readouterr().err
    assert_no_raw_controls(err) and "v\\x1b]0;x\\x07.json is not JSON" in err


def test_junit_parses_and_markdown_carries_no_live_html(genuine: dict[str, Any]) -> None:
    bad = hostile(genuine)
    ET.fromstring(junit_xml(bad).encode("utf-8"))  # well-formed whatever the verdict holds
    md = markdown_report(bad)
    assert "<script>" not in md and "<img" not in md and "&lt;script&gt;" in md
    assert_no_raw_controls(md)
    assert "\\| cell" in md  # a '|' never splits a table cell


def test_report_writes_a_junit_file_ci_can_parse(genuine: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "h.json").write_text(json.dumps(hostile(genuine)), "utf-8")
    assert main(["report", str(tmp_path / "h.json"), "--junit", str(tmp_path / "j.xml"), "--md", str(tmp_path / "r.md")]) == 0
    ET.parse(tmp_path / "j.xml")
    assert "<script>" not in (tmp_path / "r.md").read_text("utf-8")


def test_scenarios_check_shows_a_files_controls_escaped() -> None:
    shown = str(Problem("features/x\x1b[2K.feature", 3, "scenario 'a\rb' has no row tag\x1b]0;t\x07"))
    assert_no_raw_controls(shown)
    assert shown.startswith("features/x\\x1b[2K.feature:3: ")


def test_the_gates_progress_lines_escape_a_feature_files_names(tmp_path: Path) -> None:
    feats = tmp_path / "features"
    shutil.copytree(ROOT / "features", feats)
    f = feats / "m06_conflict.feature"
    text = f.read_text("utf-8")
    assert "Scenario: a second delivery with a different" in text
    f.write_text(
        text.replace(
            "Scenario: a second delivery with a different", "Scenario: \x1b]0;owned\x07\x1b[2K\ra second delivery with a different", 1
        ),
        "utf-8",
    )
    done = pwh("gate", "--sut", "reference-memory", "--features", str(feats), "--rows", "M06", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_no_raw_controls(done.stdout)
    assert "\\x1b]0;owned\\x07\\x1b[2K" in done.stdout  # (Gherkin ends the name at the carriage return)

"""Campaign observations: JSON lines under a schema, merged by concatenation, refused line by line
when they are not observations (pwh/_campaigns/observations.py). A whole soak writing them is
tested with its workers in tests/campaigns/test_models.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pwh._campaigns.observations import SCHEMA_VERSION, ObservationError, ObservationLog, merge, read_observations
from pwh._cli import main as run_cli

RUN = {"engine": "models", "sut": "reference", "seed": 7}


def _write(path: Path, run: dict[str, object], *, found: bool) -> None:
    log = ObservationLog(path, run)
    log("start", budget={"minutes": None, "examples": 4})
    log("round", index=0, seed=11, examples=2, steps=30)
    if found:
        log("finding", key="M05 no_call_after_final", round=1, first=True, detail={"row": "M05"})
    log("round", index=1, seed=12, examples=4, steps=61)
    log("end", rounds=2, examples=4, steps=61, elapsed_s=1.5, findings=int(found), counterexamples=[])
    log.close()


def test_files_merge_by_concatenation(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write(a, RUN, found=True)
    _write(b, {**RUN, "seed": 8}, found=True)
    both = tmp_path / "both.jsonl"
    both.write_bytes(a.read_bytes() + b.read_bytes())
    merged = merge(read_observations([both]))
    assert merged == merge(read_observations([a, b]))
    assert (merged["rounds"], merged["examples"], merged["steps"], merged["ended"]) == (4, 8, 122, 2)
    assert merged["findings"] == [{"key": "M05 no_call_after_final", "times": 2, "first": RUN, "round": 1, "row": "M05"}]


def test_a_line_that_is_not_an_observation_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "obs.jsonl"
    _write(path, RUN, found=False)
    lines = path.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["examples"] = -1
    path.write_text("\n".join([lines[0], json.dumps(bad), *lines[2:]]) + "\n")
    with pytest.raises(ObservationError, match=r"obs\.jsonl:2: not a pwh_campaign_observation_v0 record at \$\.examples"):
        read_observations([path])
    path.write_text(lines[0] + "\n{not json\n")
    with pytest.raises(ObservationError, match=r"obs\.jsonl:2: not JSON"):
        read_observations([path])
    unknown = {"schema_version": SCHEMA_VERSION, "record": "start", "run": {**RUN, "code": "x"}, "budget": {"minutes": 1, "examples": None}}
    path.write_text(json.dumps(unknown) + "\n")
    with pytest.raises(ObservationError, match=r"at \$\.run"):
        read_observations([path])


def test_pwh_report_renders_observations_and_refuses_a_mix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean, found = tmp_path / "clean.jsonl", tmp_path / "found.jsonl"
    _write(clean, RUN, found=False)
    _write(found, {**RUN, "seed": 9, "worker": 2}, found=True)
    assert run_cli(["report", str(clean)]) == 0
    assert run_cli(["report", str(clean), str(found), "--json", str(tmp_path / "m.json")]) == 1
    out = capsys.readouterr().out
    assert "2 run(s), 2 ended" in out and "first by models 'reference' seed 9 worker 2" in out
    assert json.loads((tmp_path / "m.json").read_text())["examples"] == 8
    verdict = tmp_path / "v.json"
    verdict.write_text("{}")
    assert run_cli(["report", str(clean), str(verdict)]) == 2
    assert "not both" in capsys.readouterr().err


def test_soak_refuses_an_observations_path_it_cannot_write_before_any_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run_cli(["soak", "--examples", "1", "--observations", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and len(err.strip().splitlines()) == 1
    assert run_cli(["soak", "--examples", "1", "--observations", str(tmp_path / "no" / "such" / "dir.jsonl")]) == 2
    assert "cannot be written" in capsys.readouterr().err


def test_a_deeply_nested_or_unreadable_file_is_not_taken_for_observations(tmp_path: Path) -> None:
    from pwh._campaigns.observations import is_observation_file

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert not is_observation_file(deep) and not is_observation_file(tmp_path / "missing.jsonl") and not is_observation_file(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert not is_observation_file(fifo)  # returns at once: a FIFO is never opened
    with pytest.raises(ObservationError, match="not a regular file"):
        read_observations([fifo])
    assert run_cli(["soak", "--examples", "1", "--observations", str(fifo)]) == 2


def test_strings_from_a_file_reach_the_terminal_made_safe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "obs.jsonl"
    log = ObservationLog(path, {**RUN, "sut": "evil\x1b[2Jsut"})
    log("finding", key="M05 \x1b]0;title\x07boom", round=0, first=True)
    log.close()
    assert run_cli(["report", str(path)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "boom" in out

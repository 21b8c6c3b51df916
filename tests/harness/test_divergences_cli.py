"""`pwh divergences`: a saved verdict's divergences, through the one CLI, and bad input as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pwh import _cli

VERDICT = {"sut": "reference", "schema_version": "pwh_gate_verdict_v1", "rows": {}, "scenarios": []}


def test_the_verb_renders_a_saved_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "v.json"
    saved.write_text(json.dumps(VERDICT))
    assert _cli.main(["divergences", str(saved)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["sut"] == "reference" and shown["divergences"] == []
    assert _cli.main(["divergences", str(saved), str(tmp_path / "out.json")]) == 0
    assert json.loads((tmp_path / "out.json").read_text()) == shown


@pytest.mark.parametrize(
    "content",
    [None, "{not json", json.dumps(["a", "list"]), json.dumps({"sut": "x"})],
    ids=["missing", "not-json", "not-an-object", "not-a-verdict"],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None) -> None:
    saved = tmp_path / "v.json"
    if content is not None:
        saved.write_text(content)
    assert _cli.main(["divergences", str(saved)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pwh divergences: error:") and "\n" not in err and "Traceback" not in err
    assert str(tmp_path) not in err  # the file's name, never its absolute path

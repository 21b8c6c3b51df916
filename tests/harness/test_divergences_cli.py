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


def test_each_file_written_is_said_and_an_unchanged_table_is_said_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pwh._harness.divergences import README_BEGIN, README_END
    from pwh._harness.gate import run_gate

    saved = tmp_path / "v.json"
    saved.write_text(json.dumps(run_gate("reference", rows=["M11"], progress=False).verdict()))
    doc = tmp_path / "doc.md"
    doc.write_text(f"# doc\n\n{README_BEGIN.format(sut='reference')}\nold table\n{README_END.format(sut='reference')}\n", "utf-8")
    assert _cli.main(["divergences", str(saved), str(tmp_path / "out.json"), "--readme", str(doc)]) == 0
    said = capsys.readouterr()
    assert said.out.splitlines() == ["wrote out.json", "wrote doc.md (the reference verdict table)"], said
    assert "old table" not in doc.read_text("utf-8")
    assert _cli.main(["divergences", str(saved), "--readme", str(doc)]) == 0
    said = capsys.readouterr()
    assert json.loads(said.out)["sut"] == "reference"  # stdout stays the divergences alone
    assert said.err.splitlines() == ["unchanged: doc.md (the reference verdict table)"]


def test_a_verdict_without_its_table_cannot_refresh_a_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pwh._harness.divergences import README_BEGIN, README_END

    saved = tmp_path / "v.json"
    saved.write_text(json.dumps(VERDICT))
    doc = tmp_path / "doc.md"
    doc.write_text(f"{README_BEGIN.format(sut='reference')}\nold\n{README_END.format(sut='reference')}\n", "utf-8")
    assert _cli.main(["divergences", str(saved), "--readme", str(doc)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pwh divergences: error: not a whole pwh gate verdict") and "\n" not in err, err
    assert "old" in doc.read_text("utf-8")

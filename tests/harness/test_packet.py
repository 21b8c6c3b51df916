"""The public test packet: byte-identical rebuilds, verification that names every tampered file,
and a build that refuses (writing nothing) when any file would leak private data.

The gate runs once per module (the real gate against the reference, over a small matrix that
covers every row); every build reuses that GateRun through the injectable ``gate=`` parameter.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from faker import Faker
from jsonschema import Draft202012Validator

from pwh._cli.packet import add_packet_commands
from pwh._core.schemas import load_schema, validator
from pwh._harness.gate import GateRun, run_gate
from pwh._harness.packet import MANIFEST, PacketError, PacketLeak, VerifyReport, verify_packet
from pwh._harness.packet._common import FRONT_PAGE, front_page
from pwh._harness.packet.build import TAR_ROOT, build_packet, result_dir_name
from pwh._harness.rules import RULE_IDS
from tests.mini_matrix import mini_matrix
from tests.tiers import beyond

ROOT = Path(__file__).resolve().parents[2]
SUTS = ["reference", "tests.broken_suts:no_timeout"]
RESULTS = ["reference", "tests.broken_suts-no_timeout"]  # their results directories


@pytest.fixture(scope="module")
def mini_features(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each row's first scenario: every row covered, a tenth of the time.
    These tests are about packets, not the matrix; the whole matrix's verdict is held to its schema
    by tests/whole_gate/test_gate.py."""
    return mini_matrix(tmp_path_factory.mktemp("mini") / "features")


@pytest.fixture(scope="module")
def reference_run(mini_features: Path) -> GateRun:
    return run_gate("reference", features=str(mini_features), progress=False)


def gate_of(run: GateRun) -> Callable[..., GateRun]:
    """A gate that answers every SUT with the one real run (relabelled), without rerunning the matrix."""
    return lambda sut, **_: dataclasses.replace(run, sut=sut)


@pytest.fixture(scope="module")
def packet(reference_run: GateRun, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("built") / "packet"
    build_packet(out, SUTS, tar_path=out.parent / "packet.tar.gz", gate=gate_of(reference_run))
    return out


@pytest.fixture(scope="module")
def verified(packet: Path) -> VerifyReport:
    """The real build's verification, made once for the tests that read it."""
    return verify_packet(packet)


@pytest.fixture(scope="module")
def reference_only(reference_run: GateRun, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A packet of the reference's results alone, built once: the packet a failed rebuild must keep."""
    out = tmp_path_factory.mktemp("reference-only") / "packet"
    build_packet(out, ["reference"], gate=gate_of(reference_run))
    return out


@pytest.fixture()
def old_packet(reference_only: Path, tmp_path: Path) -> Path:
    """A copy of :func:`reference_only` at ``tmp_path / "packet"``, this test's own to rebuild."""
    return Path(shutil.copytree(reference_only, tmp_path / "packet"))


@pytest.fixture()
def copy_of(packet: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(packet, target)
    return target


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def manifest_of(root: Path) -> dict[str, Any]:
    return json.loads((root / MANIFEST).read_text("utf-8"))


def rehash(root: Path, rel: str) -> None:
    """Make the manifest agree with an edited file, so only the content check can object."""
    manifest = manifest_of(root)
    data = (root / rel).read_bytes()
    manifest["files"][rel] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (root / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", "utf-8")


# --------------------------------------------------------------------------------------------
# Deterministic
# --------------------------------------------------------------------------------------------


def test_two_builds_are_byte_identical(packet: Path, reference_run: GateRun, tmp_path: Path) -> None:
    # Another directory name and parent: nothing of where the packet is built may leak into it.
    again = tmp_path / "elsewhere" / "second-build"
    build_packet(again, SUTS, tar_path=tmp_path / "second.tar.gz", gate=gate_of(reference_run))
    first, second = tree(packet), tree(again)
    assert sorted(first) == sorted(second)
    for rel in first:
        assert first[rel] == second[rel], rel
    assert (packet.parent / "packet.tar.gz").read_bytes() == (tmp_path / "second.tar.gz").read_bytes()


def test_the_archive_carries_no_time_owner_or_file_name(packet: Path) -> None:
    raw = (packet.parent / "packet.tar.gz").read_bytes()
    assert raw[:3] == b"\x1f\x8b\x08" and raw[3] & 0x08 == 0, "gzip header names a file"
    assert raw[4:8] == b"\0\0\0\0", "gzip header carries a time"
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as archive:
        members = archive.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    for m in members:
        assert (m.mtime, m.uid, m.gid, m.uname, m.gname) == (0, 0, 0, "", ""), m.name
        assert m.mode == (0o755 if m.isdir() else 0o644), m.name


def test_the_archive_holds_exactly_the_manifest_files(packet: Path) -> None:
    listed = set(manifest_of(packet)["files"]) | {MANIFEST}
    with tarfile.open(packet.parent / "packet.tar.gz", mode="r:gz") as archive:
        files = {
            m.name.removeprefix(TAR_ROOT + "/"): archive.extractfile(m).read()  # type: ignore[union-attr]
            for m in archive
            if m.isfile()
        }
        assert all(m.name == TAR_ROOT or m.name.startswith(TAR_ROOT + "/") for m in archive)
    assert set(files) == listed
    for rel, data in files.items():
        assert data == (packet / rel).read_bytes(), rel


# --------------------------------------------------------------------------------------------
# What the packet holds
# --------------------------------------------------------------------------------------------


def test_the_manifest_lists_every_file_and_validates(packet: Path) -> None:
    text = (packet / MANIFEST).read_text("utf-8")
    manifest = json.loads(text)
    assert validator("packet_manifest").is_valid(manifest)
    assert text == json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    on_disk = tree(packet)
    assert set(manifest["files"]) == set(on_disk) - {MANIFEST}
    for rel, entry in manifest["files"].items():
        assert entry == {"sha256": hashlib.sha256(on_disk[rel]).hexdigest(), "size": len(on_disk[rel])}, rel
    assert manifest["schema_version"] == "pwh_packet_manifest_v0" and manifest["nondeterministic"] == []
    assert manifest["source_commit"] == "unknown" or len(manifest["source_commit"]) == 40


def test_the_packet_holds_the_matrix_schemas_vectors_rules_and_results(packet: Path) -> None:
    features = {p.name: p.read_bytes() for p in (ROOT / "features").glob("*.feature")}
    assert {p.name: p.read_bytes() for p in (packet / "features").glob("*.feature")} == features
    assert {p.name for p in (packet / "schemas").iterdir()} == {p.name for p in (ROOT / "pwh" / "schemas").glob("*.json")}
    assert (packet / "vectors" / "identity.json").read_bytes() == (ROOT / "pwh" / "vectors" / "identity.json").read_bytes()
    rules = json.loads((packet / "rules.json").read_text())["rules"]
    assert [r["id"] for r in rules] == list(RULE_IDS)
    assert all(set(r) == {"id", "group", "case", "required_outcome", "clauses"} and r["required_outcome"] and r["clauses"] for r in rules)
    document = json.loads((packet / "rules.json").read_text())
    assert {c["id"] for c in document["clauses"]} >= {c for r in rules for c in r["clauses"]}
    for name in ("reference", "tests.broken_suts-no_timeout"):
        assert sorted(p.name for p in (packet / "results" / name).iterdir()) == [
            "cucumber.json",
            "junit.xml",
            "report.html",
            "report.md",
            "verdict.json",
        ]
    readme = (packet / "README.md").read_text()
    assert "pwh gate --features PACKET/features --sut" in readme and "pwh packet verify PACKET" in readme
    assert "`index.html` — the front page" in readme


def test_the_front_page_is_the_matrix_of_every_published_verdict(packet: Path) -> None:
    page = (packet / FRONT_PAGE).read_text("utf-8")
    verdicts = {name: json.loads((packet / "results" / name / "verdict.json").read_text("utf-8")) for name in RESULTS}
    assert page == front_page(verdicts)  # what verify renders again
    assert page.startswith("<!doctype html>") and "pwh report — 2 verdicts, row × SUT" in page
    # the reference first, each column linking to its own report beside its verdict
    heads = re.findall(r'<a href="(results/[^"]+/report\.html)">report</a>', page.split("</thead>")[0])
    assert heads == ["results/reference/report.html", "results/tests.broken_suts-no_timeout/report.html"]
    assert all((packet / href).is_file() for href in heads)
    # every in-page link reaches an anchor on the page, every other link a file of the packet
    ids = set(re.findall(r' id="([^"]+)"', page))
    for href in re.findall(r' href="([^"]+)"', page):
        if href.startswith("#"):
            assert href[1:] in ids, href
        else:
            path, _, line = href.partition("#L")
            assert (packet / path).is_file() and (not line or line.isdigit()), href
    assert str(packet) not in page and "/tmp/" not in page


def test_a_rewritten_front_page_is_inconsistent_however_the_manifest_was_rehashed(copy_of: Path) -> None:
    page = (copy_of / FRONT_PAGE).read_text("utf-8")
    forged = page.replace('<td class="pass">pass/pass', '<td class="fail">FAIL/FAIL', 1)  # a column made to look failing
    assert forged != page
    (copy_of / FRONT_PAGE).write_text(forged, "utf-8")
    rehash(copy_of, FRONT_PAGE)
    problems = verify_packet(copy_of).problems
    assert problems == [(FRONT_PAGE, "inconsistent", "differs from what pwh renders from the verdicts")], problems
    (copy_of / FRONT_PAGE).unlink()
    manifest = manifest_of(copy_of)
    del manifest["files"][FRONT_PAGE]
    (copy_of / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", "utf-8")
    assert [(f, k) for f, k, _ in verify_packet(copy_of).problems] == [(FRONT_PAGE, "missing")]


def test_result_directory_names_are_filesystem_safe() -> None:
    assert result_dir_name("tests.broken_suts:no_timeout") == "tests.broken_suts-no_timeout"
    assert result_dir_name("../../x:y") == "x-y"
    assert result_dir_name(":::") == "sut"


def test_the_gate_verdict_schema_describes_the_real_verdict(reference_run: GateRun) -> None:
    schema = load_schema("gate_verdict")
    Draft202012Validator.check_schema(schema)
    verdict = reference_run.verdict()
    assert validator("gate_verdict").is_valid(verdict)
    broken = copy.deepcopy(verdict)
    broken["rows"]["M01"]["status"] = "passed"
    del broken["scenarios"][0]["outcome"]
    assert len(list(validator("gate_verdict").iter_errors(broken))) == 2


def test_project_features_and_schemas_pass_the_boundary_scan_unweakened(packet: Path, verified: VerifyReport) -> None:
    # Zero false positives on our own material; and the scan that passed them still bites.
    assert verified.ok
    assert verify_packet(packet, private_names=["reference"]).problems


# --------------------------------------------------------------------------------------------
# Verify
# --------------------------------------------------------------------------------------------


def test_verify_passes_on_the_real_build(packet: Path, verified: VerifyReport) -> None:
    report = verified
    assert report.ok and report.exit_code == 0 and report.problems == [], report.render()
    assert report.files_checked == len(manifest_of(packet)["files"]) + 1
    assert "verified" in report.render()


def test_one_changed_byte_in_any_file_is_named(copy_of: Path) -> None:
    listed = sorted(manifest_of(copy_of)["files"])
    for rel in listed:  # one byte each, same size: only the hash can tell
        path = copy_of / rel
        data = bytearray(path.read_bytes())
        data[len(data) // 2] = ord("x") if data[len(data) // 2] != ord("x") else ord("y")
        path.write_bytes(bytes(data))
    report = verify_packet(copy_of)
    altered = {f for f, kind, _ in report.problems if kind == "altered"}
    assert altered == set(listed) and report.exit_code == 1


def test_a_changed_byte_in_the_manifest_is_caught(copy_of: Path) -> None:
    text = (copy_of / MANIFEST).read_text()
    entry = manifest_of(copy_of)["files"]["rules.json"]["sha256"]
    (copy_of / MANIFEST).write_text(text.replace(entry, ("0" if entry[0] != "0" else "1") + entry[1:]))
    report = verify_packet(copy_of)
    assert ("rules.json", "altered", "sha256 differs from the manifest") in report.problems


def test_a_deleted_file_is_missing_and_an_added_one_extra(copy_of: Path) -> None:
    (copy_of / "features" / "m05_replay.feature").unlink()
    (copy_of / "results" / "reference" / "notes.txt").write_text("added later\n")
    report = verify_packet(copy_of)
    assert {(f, k) for f, k, _ in report.problems} == {("features/m05_replay.feature", "missing"), ("results/reference/notes.txt", "extra")}
    assert report.exit_code == 1
    assert "features/m05_replay.feature: missing" in report.render()


def test_verify_revalidates_json_against_its_schema(copy_of: Path) -> None:
    rel = "results/reference/verdict.json"
    verdict = json.loads((copy_of / rel).read_text())
    verdict["summary"]["verdict"] = "green"
    (copy_of / rel).write_text(json.dumps(verdict))
    (copy_of / "rules.json").write_text("{not json")
    rehash(copy_of, rel)
    rehash(copy_of, "rules.json")
    report = verify_packet(copy_of)
    assert {(f, k) for f, k, _ in report.problems} == {(rel, "invalid"), ("rules.json", "invalid")}, report.render()
    manifest = manifest_of(copy_of)
    manifest["built_on"] = "a host"
    (copy_of / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    assert (MANIFEST, "invalid", "$.built_on: field is not allowed here") in verify_packet(copy_of).problems


def test_verify_rescans_every_file_without_echoing_the_value(copy_of: Path) -> None:
    secret = SECRETS["email"][0]
    with (copy_of / "README.md").open("a") as fh:
        fh.write(f"Questions: {secret}\n")
    rehash(copy_of, "README.md")
    report = verify_packet(copy_of)
    assert [(f, k) for f, k, _ in report.problems] == [("README.md", "leak")]
    assert "email" in report.problems[0][2] and secret not in report.render()


@pytest.mark.parametrize("make", ["missing", "file", "empty", "not json", "no files"])
def test_verify_says_not_a_packet_without_a_traceback(make: str, tmp_path: Path) -> None:
    target = tmp_path / "p"
    if make == "file":
        target.write_text("x")
    elif make != "missing":
        target.mkdir()
        if make == "not json":
            (target / MANIFEST).write_text("{")
        elif make == "no files":
            (target / MANIFEST).write_text("[]")
    report = verify_packet(target)
    assert report.exit_code == 2 and not report.ok and "not a packet" in report.render()


def test_verify_never_follows_a_path_out_of_the_packet(copy_of: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("hello\n")
    manifest = manifest_of(copy_of)
    manifest["files"]["../outside.txt"] = {"sha256": hashlib.sha256(b"hello\n").hexdigest(), "size": 6}
    (copy_of / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    (copy_of / "link.txt").symlink_to(outside)
    report = verify_packet(copy_of)
    kinds = {(f, k) for f, k, _ in report.problems}
    assert ("link.txt", "unsafe") in kinds and any(k == "unsafe" and f.startswith("manifest files entry") for f, k in kinds)
    assert "../outside.txt" not in report.render()


# --------------------------------------------------------------------------------------------
# Public-safe: a leak stops the build, names file / line / category, never the value
# --------------------------------------------------------------------------------------------

fake = Faker()
fake.seed_instance(20260826)
SECRETS = {
    "email": (fake.email(), {"email"}),
    "url": (fake.url(), {"url"}),
    "absolute path": (fake.file_path(depth=3, absolute=True), {"absolute_path", "home_dir"}),
    "github token": ("ghp_" + fake.password(length=36, special_chars=False), {"credential"}),
}


def features_with(tmp_path: Path, line: str) -> Path:
    features = tmp_path / "features"
    shutil.copytree(ROOT / "features", features)
    target = features / "m04_committed_writeback.feature"
    lines = target.read_text("utf-8").split("\n")
    target.write_text("\n".join([lines[0], line, *lines[1:]]), "utf-8")  # now line 2
    return features


def assert_nothing_written(parent: Path, before: set[str]) -> None:
    assert {p.name for p in parent.iterdir()} == before, "a half-built packet or temp file was left"


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_a_secret_in_a_feature_file_blocks_the_build(kind: str, reference_run: GateRun, tmp_path: Path) -> None:
    value, categories = SECRETS[kind]
    features = features_with(tmp_path, f"  Contact {value} for access.")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(PacketLeak) as caught:
        build_packet(out / "packet", ["reference"], tar_path=out / "p.tar.gz", gate=gate_of(reference_run), features=features)
    leak = caught.value
    assert (leak.file, leak.line) == ("features/m04_committed_writeback.feature", "line 2")
    assert leak.category in categories
    assert value not in str(leak) and value not in repr(leak.findings)
    assert_nothing_written(out, set())


# The test command blocks a build on a credential; CI's extended tier on every other kind too.
@pytest.mark.parametrize("kind", beyond(sorted(SECRETS), lambda kind: kind == "github token"))
def test_a_secret_in_a_report_blocks_the_build_and_keeps_the_old_packet(
    kind: str, reference_run: GateRun, old_packet: Path, tmp_path: Path
) -> None:
    out = old_packet
    before = tree(out)
    value, categories = SECRETS[kind]
    leaky = copy.deepcopy(reference_run)
    leaky.scenarios[0].update(outcome="failed", expected="a clean run", seen=f"it printed {value}")
    with pytest.raises(PacketLeak) as caught:
        build_packet(out, ["reference"], gate=gate_of(leaky))
    leak = caught.value
    # the front page shows the failing scenario's card too: it is scanned like every other file
    assert {f for f, _, _ in leak.findings} >= {"index.html", "results/reference/verdict.json", "results/reference/report.md"}
    assert leak.file == "index.html" and leak.line.startswith("line ")
    assert {c for _, _, c in leak.findings} & categories
    assert value not in str(leak)
    assert tree(out) == before and verify_packet(out).ok
    assert_nothing_written(tmp_path, {"packet"})


def test_the_private_name_deny_list_is_honoured(reference_run: GateRun, tmp_path: Path) -> None:
    features = features_with(tmp_path, "  Built for Zeta Widgets.")
    build_packet(tmp_path / "ok", ["reference"], gate=gate_of(reference_run), features=features)
    with pytest.raises(PacketLeak) as caught:
        build_packet(tmp_path / "no", ["reference"], gate=gate_of(reference_run), features=features, private_names=["zeta widgets"])
    assert (caught.value.file, caught.value.line, caught.value.category) == (
        "features/m04_committed_writeback.feature",
        "line 2",
        "private_name",
    )
    assert "Zeta" not in str(caught.value) and not (tmp_path / "no").exists()


def test_a_private_name_in_a_sut_is_withheld_from_the_error(reference_run: GateRun, tmp_path: Path) -> None:
    with pytest.raises(PacketLeak) as caught:
        build_packet(tmp_path / "p", ["reference", "acmecorp_adapter:factory"], gate=gate_of(reference_run), private_names=["acmecorp"])
    assert "acmecorp" not in str(caught.value).lower()
    assert any(f == "results/<withheld>/verdict.json" for f, _, _ in caught.value.findings)


# --------------------------------------------------------------------------------------------
# Bad input: clear errors, nothing touched
# --------------------------------------------------------------------------------------------


def test_a_target_that_is_a_file_or_a_foreign_directory_is_refused(reference_run: GateRun, tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("mine\n")
    with pytest.raises(PacketError, match="exists and is not a directory"):
        build_packet(a_file, ["reference"], gate=gate_of(reference_run))
    foreign = tmp_path / "docs"
    foreign.mkdir()
    (foreign / "notes.md").write_text("mine\n")
    with pytest.raises(PacketError, match="holds no packet"):
        build_packet(foreign, ["reference"], gate=gate_of(reference_run))
    (foreign / MANIFEST).write_text('{"name": "a web extension"}\n')  # someone else's manifest.json
    with pytest.raises(PacketError, match="holds no packet"):
        build_packet(foreign, ["reference"], gate=gate_of(reference_run))
    with pytest.raises(PacketError, match="inside the packet"):
        build_packet(tmp_path / "p", ["reference"], tar_path=tmp_path / "p" / "x.tar.gz", gate=gate_of(reference_run))
    assert a_file.read_text() == "mine\n" and sorted(p.name for p in foreign.iterdir()) == [MANIFEST, "notes.md"]


def test_a_failed_write_leaves_the_old_packet_and_no_temp_dir(
    reference_run: GateRun, old_packet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = old_packet
    before = tree(out)

    def disk_full(_: dict[str, bytes]) -> bytes:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pwh._harness.packet.build.tar_bytes", disk_full)
    with pytest.raises(PacketError, match="No space left"):  # a rebuild with more results, failing late
        build_packet(out, SUTS, tar_path=tmp_path / "p.tar.gz", gate=gate_of(reference_run))
    assert tree(out) == before
    assert_nothing_written(tmp_path, {"packet"})


# --------------------------------------------------------------------------------------------
# The command line the lead wires in
# --------------------------------------------------------------------------------------------


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="pwh")
    add_packet_commands(parser.add_subparsers())
    args = parser.parse_args(argv)
    return int(args.handler(args))


def test_the_packet_commands(
    reference_run: GateRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answered: list[str] = []

    def gate(sut: str, **kw: Any) -> GateRun:
        answered.append(sut)
        return gate_of(reference_run)(sut, **kw)

    monkeypatch.setattr("pwh._harness.gate.run_gate", gate)
    monkeypatch.chdir(tmp_path)
    assert run_cli(["packet", "build", "pkt", "--sut", "reference", "--tar", "pkt.tar.gz"]) == 0
    assert answered == ["reference"]  # the patch took effect: the real gate never ran
    assert run_cli(["packet", "verify", "pkt"]) == 0
    assert "verified" in capsys.readouterr().out
    (tmp_path / "pkt" / "rules.json").write_text("{}\n")
    assert run_cli(["packet", "verify", "pkt"]) == 1
    shown = capsys.readouterr()
    assert "rules.json: altered" in shown.out and "does not verify" in shown.err  # the report is the output; the failure is said
    assert run_cli(["packet", "verify", "nowhere"]) == 2
    (tmp_path / "plain").write_text("x")
    assert run_cli(["packet", "build", "plain"]) == 2
    err = capsys.readouterr().err
    assert "plain is a file; name a folder" in err and "Traceback" not in err and str(tmp_path) not in err
    monkeypatch.setenv("PWH_PRIVATE_NAMES", "Ref, other")
    assert run_cli(["packet", "build", "pkt2"]) == 1
    assert "private_name" in capsys.readouterr().err and not (tmp_path / "pkt2").exists()


# `extended`: a whole failing gate run; the build's exit codes are held in the test command by test_the_packet_commands.
@pytest.mark.extended
def test_a_build_whose_reference_fails_is_written_but_exits_1(
    reference_run: GateRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another SUT failing is what the packet publishes; the reference failing means the packet
    must not go out, and a CI step running the build has to see it."""
    failing = copy.deepcopy(reference_run)
    failing.scenarios[0].update(outcome="failed", expected="a clean run", seen="a different run")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        "pwh._harness.gate.run_gate", lambda sut, **_: dataclasses.replace(failing if sut == "reference" else reference_run, sut=sut)
    )
    assert run_cli(["packet", "build", "pkt", "--sut", "reference"]) == 1
    err = capsys.readouterr().err
    assert "reference verdict is FAIL" in err and "results/reference/report.md" in err
    assert verify_packet(tmp_path / "pkt").ok  # written whole, for reading
    monkeypatch.setattr(
        "pwh._harness.gate.run_gate", lambda sut, **_: dataclasses.replace(failing if sut != "reference" else reference_run, sut=sut)
    )
    assert run_cli(["packet", "build", "pkt", "--sut", "reference", "--sut", "tests.broken_suts:no_timeout"]) == 0


# --------------------------------------------------------------------------------------------
# Verify stands apart from the build
# --------------------------------------------------------------------------------------------


def test_verifying_a_packet_never_imports_the_gate() -> None:
    """Checking a published packet runs no scenario, so its module must not load the gate, neither
    itself nor through the build or the package's own __init__ (a fresh interpreter: this one has
    the gate loaded already)."""
    code = (
        "import sys\n"
        "import pwh._harness.packet.verify\n"
        "from pwh._harness.packet import PacketError, VerifyReport, verify_packet\n"
        "loaded = sorted(m for m in sys.modules if m == 'pwh._harness.gate' or m == 'pwh._harness.packet.build')\n"
        "assert not loaded, loaded\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_pwh_packet_verify_never_imports_the_gate(tmp_path: Path) -> None:
    """The same through the command a consumer types: the CLI loads the gate only for the verbs
    that run it."""
    code = (
        "import sys\n"
        "import pwh._cli\n"
        f"code = pwh._cli.main(['packet', 'verify', {str(tmp_path / 'absent')!r}])\n"
        "loaded = sorted(m for m in sys.modules if m == 'pwh._harness.gate' or m == 'pwh._harness.packet.build')\n"
        "assert code == 2 and not loaded, (code, loaded)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


# --------------------------------------------------------------------------------------------
# What a consumer downloads, and a verdict that must agree with itself
# --------------------------------------------------------------------------------------------


def test_verify_reads_the_published_tarball(packet: Path, tmp_path: Path) -> None:
    tarball = packet.parent / "packet.tar.gz"
    report = verify_packet(tarball)
    assert report.ok, report.render()
    assert report.packet.endswith("packet.tar.gz") and report.files_checked == len(manifest_of(packet)["files"]) + 1
    garbage = tmp_path / "garbage.tar.gz"
    garbage.write_bytes(b"not gzip at all")
    assert verify_packet(garbage).not_a_packet == "not a readable .tar.gz"


def test_a_tarball_member_that_is_a_link_or_outside_is_refused_not_unpacked(packet: Path, tmp_path: Path) -> None:
    import io
    import tarfile

    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(packet.parent / "packet.tar.gz", "r:gz") as src, tarfile.open(evil, "w:gz") as out:
        top = src.getmembers()[0].name.partition("/")[0]
        for member in src.getmembers():
            out.addfile(member, src.extractfile(member) if member.isfile() else None)
        link = tarfile.TarInfo(f"{top}/escape")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        out.addfile(link)
        outside = tarfile.TarInfo("../outside.txt")
        data = b"x"
        outside.size = len(data)
        out.addfile(outside, io.BytesIO(data))
    report = verify_packet(evil)
    kinds = {(file, kind) for file, kind, _ in report.problems}
    assert ("escape", "unsafe") in kinds and any(kind == "unsafe" and "outside" in file for file, kind in kinds)
    assert not (tmp_path / "outside.txt").exists()


def test_a_forged_summary_is_inconsistent_even_when_rehashed(copy_of: Path) -> None:
    rel = "results/reference/verdict.json"
    verdict = json.loads((copy_of / rel).read_text("utf-8"))
    verdict["summary"]["verdict"] = verdict["summary"]["rfc"] = "fail"
    (copy_of / rel).write_text(json.dumps(verdict, indent=2) + "\n", "utf-8")
    rehash(copy_of, rel)
    problems = verify_packet(copy_of).problems
    assert (rel, "inconsistent", "summary: verdict, rfc differ from what its rows and scenarios make them") in problems
    assert any(file == "results/reference/report.md" and kind == "inconsistent" for file, kind, _ in problems)


def test_a_forged_row_or_scenario_is_inconsistent(copy_of: Path) -> None:
    rel = "results/reference/verdict.json"
    verdict = json.loads((copy_of / rel).read_text("utf-8"))
    verdict["rows"]["M06"]["passed"] -= 1
    verdict["scenarios"][0]["profile"] = "divergence"
    (copy_of / rel).write_text(json.dumps(verdict, indent=2) + "\n", "utf-8")
    rehash(copy_of, rel)
    details = [d for file, kind, d in verify_packet(copy_of).problems if file == rel and kind == "inconsistent"]
    assert any(d.startswith("row M06: passed") for d in details) and any(d.startswith("scenario 0: profile divergence") for d in details)


def test_a_packet_without_reference_results_is_neither_built_nor_verified(
    packet: Path, copy_of: Path, reference_run: GateRun, tmp_path: Path
) -> None:
    with pytest.raises(PacketError, match="add --sut reference"):
        build_packet(tmp_path / "noref", ["tests.broken_suts:no_timeout"], gate=gate_of(reference_run))
    shutil.rmtree(copy_of / "results" / "reference")
    manifest = manifest_of(copy_of)
    manifest["files"] = {k: v for k, v in manifest["files"].items() if not k.startswith("results/reference/")}
    (copy_of / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", "utf-8")
    assert any(file == "results/reference/" and kind == "missing" for file, kind, _ in verify_packet(copy_of).problems)


# `pwh packet verify --rerun`: the published results judged again from the packet's own features
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mini_packet(reference_run: GateRun, mini_features: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A packet over the small matrix, so a rerun costs seconds; it publishes the reference's run
    relabelled as ``admits_uncommitted``'s."""
    root = tmp_path_factory.mktemp("mini-packet")
    out = root / "packet"
    suts = ["reference", "tests.broken_suts:admits_uncommitted"]
    build_packet(out, suts, tar_path=root / "packet.tar.gz", gate=gate_of(reference_run), features=mini_features)
    return out


# `extended`: a rerun of a whole gate; an honest packet's rerun is held in the test command by test_a_rerun_of_an_honest_packet_is_as_published_and_a_damaged_one_is_never_run.
@pytest.mark.extended
def test_a_rerun_catches_results_the_sut_does_not_give(mini_packet: Path) -> None:
    """Every file of the packet verifies and agrees with itself; only running ``admits_uncommitted``
    again shows that the results published for it are not its own."""
    tarball = mini_packet.parent / "packet.tar.gz"
    assert verify_packet(tarball).ok
    done = subprocess.run(
        [sys.executable, "-m", "pwh", "packet", "verify", str(tarball), "--rerun", "--sut", "tests.broken_suts:admits_uncommitted"],
        cwd=ROOT,  # where the adapter module is found
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "verified:" in done.stdout and "rerunning the gate for tests.broken_suts:admits_uncommitted" in done.stdout
    assert "  M03    pass → fail" in done.stdout, done.stdout[-3000:]
    rows = done.stdout.split("rows that differ")[1].split("scenarios that differ")[0]
    assert [line.split()[0] for line in rows.strip().splitlines()[1:]] == ["M03"]  # only the row the mutant breaks
    assert "differs from the published results for tests.broken_suts:admits_uncommitted" in done.stderr and "Traceback" not in done.stderr


def test_a_rerun_of_an_honest_packet_is_as_published_and_a_damaged_one_is_never_run(
    reference_run: GateRun, packet: Path, copy_of: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran: list[tuple[str, str]] = []

    def gate(sut: str, **kw: Any) -> GateRun:
        ran.append((sut, Path(kw["features"]).name))
        return gate_of(reference_run)(sut, **kw)

    monkeypatch.setattr("pwh._harness.gate.run_gate", gate)
    assert run_cli(["packet", "verify", str(packet), "--rerun", "--sut", "reference"]) == 0
    assert ran == [("reference", "features")]  # over the packet's own features
    assert "every row and scenario as published" in capsys.readouterr().out
    (copy_of / "rules.json").write_text("{}\n")
    ran.clear()
    assert run_cli(["packet", "verify", str(copy_of), "--rerun"]) == 1 and ran == []
    assert "no rerun" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "says"),
    [(("--rerun", "--sut", "nosuch"), "the packet has no results for 'nosuch'"), (("--sut", "reference"), "--sut applies to --rerun only")],
)
def test_pwh_packet_verify_rerun_refuses_what_it_cannot_do(packet: Path, args: tuple[str, ...], says: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pwh", "packet", "verify", str(packet), *args],
        cwd=packet.parent,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _never_gated(sut: str, **_: Any) -> GateRun:
    raise AssertionError(f"{sut} was gated again, though its verdict was given")


def test_a_saved_verdict_publishes_the_same_packet_as_the_run_it_came_from(
    reference_run: GateRun, mini_features: Path, tmp_path: Path
) -> None:
    """``--verdict``: what the maintainer just gated is published as it is, byte for byte the
    packet the gate would have written, and that SUT is not gated again."""
    gated, given = tmp_path / "gated", tmp_path / "given"
    build_packet(gated, ["reference"], gate=gate_of(reference_run), features=mini_features)
    saved = json.loads(json.dumps(reference_run.verdict()))  # what pwh gate --json wrote, read back
    build_packet(given, [], gate=_never_gated, features=mini_features, saved={"reference": saved})
    assert _files(given) == _files(gated)


@pytest.mark.parametrize(
    "change, says",
    [
        ({"partial": True}, "partial run"),
        ({"rows": ["M01"]}, "partial run"),
        ({"selection": {"keyword": "x"}}, "partial run"),
        ({"features_digest": "sha256:" + "0" * 64}, "other features"),
    ],
)
def test_a_saved_verdict_that_is_not_a_whole_run_of_these_features_is_refused(
    reference_run: GateRun, mini_features: Path, tmp_path: Path, change: dict[str, Any], says: str
) -> None:
    saved = json.loads(json.dumps(reference_run.verdict()))
    saved["run"].update(change)
    with pytest.raises(PacketError, match=says):
        build_packet(tmp_path / "p", [], gate=_never_gated, features=mini_features, saved={"reference": saved})
    assert not (tmp_path / "p").exists()


def test_a_saved_verdict_of_another_pwh_commit_is_refused(reference_run: GateRun, mini_features: Path, tmp_path: Path) -> None:
    from pwh._harness.gate import project_root, pwh_commit

    saved = json.loads(json.dumps(reference_run.verdict()))
    if pwh_commit(project_root()) is None:  # an installed pwh knows its version only
        saved["pwh_version"] = "0.0.0-other"
        says = "gated by pwh 0.0.0-other"
    else:
        saved["run"]["pwh_commit"] = "f" * 40
        says = "another pwh commit"
    with pytest.raises(PacketError, match=says):
        build_packet(tmp_path / "p", [], gate=_never_gated, features=mini_features, saved={"reference": saved})


def test_packet_build_refuses_a_saved_verdict_in_one_line_before_gating(reference_run: GateRun, tmp_path: Path) -> None:
    """The mini matrix's verdict is not a run of the project's features: refused at once, exit 2."""
    path = tmp_path / "v.json"
    path.write_text(json.dumps(reference_run.verdict()))
    done = subprocess.run(
        [sys.executable, "-m", "pwh", "packet", "build", str(tmp_path / "p"), "--verdict", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "other features" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "running the gate" not in done.stdout and not (tmp_path / "p").exists()


# --------------------------------------------------------------------------------------------
# pwh itself, as a wheel an outsider installs offline (its install: tests/harness/test_packet_wheel.py)
# --------------------------------------------------------------------------------------------


def test_the_packet_carries_pwh_as_the_wheel_of_its_own_source(packet: Path) -> None:
    from pwh._harness.packet.wheel import build_wheel, packet_wheel_path
    from pwh._version import __version__

    rel = packet_wheel_path(__version__)
    assert (packet / rel).read_bytes() == build_wheel(ROOT)[1]  # the bytes the install test installs
    assert rel in manifest_of(packet)["files"]
    assert f"dist/pwh-{__version__}-py3-none-any.whl" in (packet / "README.md").read_text()


def test_a_wheel_member_changed_behind_its_record_is_caught(copy_of: Path) -> None:
    import zipfile

    from pwh._harness.packet.wheel import packet_wheel_path
    from pwh._version import __version__

    rel = packet_wheel_path(__version__)
    original = zipfile.ZipFile(copy_of / rel)
    members = {i.filename: original.read(i) for i in original.infolist()}
    original.close()
    members["pwh/_core/dispatcher.py"] += b"\n# a line added after the wheel was built\n"
    with zipfile.ZipFile(copy_of / rel, "w") as changed:
        for name, data in members.items():
            changed.writestr(name, data)
    rehash(copy_of, rel)  # the manifest agrees: only the wheel's own RECORD can object
    report = verify_packet(copy_of)
    assert [(f, k) for f, k, _ in report.problems] == [(rel, "altered")], report.problems


def test_a_private_name_in_pwh_s_own_code_stops_the_build(reference_run: GateRun, tmp_path: Path) -> None:
    with pytest.raises(PacketLeak) as caught:
        build_packet(tmp_path / "p", ["reference"], gate=gate_of(reference_run), private_names=["mutmut"])  # a name in its code alone
    assert any(f.startswith("dist/pwh-") and c == "private_name" for f, _, c in caught.value.findings), caught.value.findings

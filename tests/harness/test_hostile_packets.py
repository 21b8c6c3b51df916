"""A packet is someone else's directory: it never names code to run, and every file in it is what
pwh would build from its own inputs.

- ``pwh packet verify --rerun`` gates only SUTs named on the command line (a built-in name, or a
  ``module:factory`` given there); a SUT name taken from the packet that is not built into pwh is
  refused before anything runs, so neither the packet's own Python file nor ``os:abort`` is run.
- One verdict per SUT, in the folder its name gives: a forged PASS beside the genuine FAIL (two
  verdicts naming one SUT) is refused by verify, so a rerun always compares with the one published.
- Beyond the verdicts' own reports, verify compares cucumber.json (rendered from the verdict),
  README.md (rendered from the verdicts, its verdict table among it), the identity vectors and the
  schemas (pwh's own) and rules.json byte for byte: a re-hashed manifest makes none of them pass,
  and a listed file pwh never builds (an ``adapter.py``) is reported.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pwh._harness.gate import GateRun
from pwh._harness.gate_error import GateError
from pwh._harness.packet import verify_packet
from pwh._harness.packet._common import MANIFEST, json_bytes
from pwh._harness.packet.build import build_packet
from pwh._harness.packet.rerun import rerun_packet
from tests.tiers import beyond

ROOT = Path(__file__).resolve().parents[2]


def stub(sut: str, features: Any = None, progress: bool = False) -> GateRun:
    return GateRun(sut, [], covers={})


def rehash(packet: Path, rel: str, data: bytes | None = None) -> None:
    """Write ``data`` to ``rel`` (when given) and list it in the manifest with its true hash."""
    if data is not None:
        (packet / rel).write_bytes(data)
    data = (packet / rel).read_bytes()
    manifest = json.loads((packet / MANIFEST).read_bytes())
    manifest["files"][rel] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (packet / MANIFEST).write_bytes(json_bytes(manifest))


def pwh(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pwh", *args], cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def kinds(packet: Path) -> set[tuple[str, str]]:
    return {(f, k) for f, k, _ in verify_packet(packet).problems}


@pytest.fixture
def vendor_packet(tmp_path: Path) -> Path:
    build_packet(tmp_path / "acme_packet", ["reference", "acme_packet.adapter:factory"], gate=stub)
    return tmp_path / "acme_packet"


def test_a_packet_built_by_pwh_verifies_whatever_order_its_suts_were_named_in(tmp_path: Path) -> None:
    build_packet(tmp_path / "p", ["vendor:factory", "reference"], gate=stub)
    assert verify_packet(tmp_path / "p").problems == []
    readme = (tmp_path / "p" / "README.md").read_text("utf-8")
    assert readme.index("`reference`") < readme.index("`vendor:factory`")  # the table's order is the verdicts', not the command's


def test_rerun_refuses_a_sut_the_packet_names_and_never_loads_it(vendor_packet: Path) -> None:
    ran: list[str] = []

    def gate(sut: str, features: Any = None, progress: bool = False) -> GateRun:
        ran.append(sut)
        return stub(sut)

    with pytest.raises(GateError, match=r"'acme_packet.adapter:factory'.*never chooses code.*--sut"):
        rerun_packet(vendor_packet, None, gate=gate, out=lambda line: None)
    assert ran == []  # refused before anything ran, the reference included
    results = rerun_packet(vendor_packet, ["reference"], gate=gate, out=lambda line: None)
    assert ran == ["reference"] and [r.sut for r in results] == ["reference"]


def test_a_packets_own_python_file_is_never_run(vendor_packet: Path) -> None:
    code = b'open("PWNED", "w").write("ran")\n\n\ndef factory():\n    raise RuntimeError("ran")\n'
    rehash(vendor_packet, "adapter.py", code)
    assert ("adapter.py", "unexpected") in kinds(vendor_packet)
    done = pwh("packet", "verify", "acme_packet", "--rerun", cwd=vendor_packet.parent)
    assert done.returncode == 1 and "a packet that does not verify is never run" in done.stderr
    assert not (vendor_packet.parent / "PWNED").exists()


def test_a_tarball_naming_a_stdlib_callable_is_refused_in_one_line(tmp_path: Path) -> None:
    build_packet(tmp_path / "p", ["reference", "os:abort"], gate=stub, tar_path=tmp_path / "p.tar.gz")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = pwh("packet", "verify", str(tmp_path / "p.tar.gz"), "--rerun", cwd=elsewhere)
    assert done.returncode == 2, done.stderr  # not 134: os.abort never ran
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "'os:abort'" in lines[0] and "never chooses code to run" in lines[0]


def test_two_verdicts_naming_one_sut_are_refused(tmp_path: Path) -> None:
    runs = {"reference": stub("reference"), "vendor:factory": stub("vendor:factory"), "zzz": stub("vendor:factory")}
    build_packet(tmp_path / "p", list(runs), gate=lambda sut, features=None, progress=False: runs[sut])
    report = verify_packet(tmp_path / "p")
    problems = {(f, k, d) for f, k, d in report.problems}
    assert ("results/zzz/verdict.json", "inconsistent", "its SUT's results belong in results/vendor-factory/") in problems
    assert any(f == "results/zzz/verdict.json" and "one verdict per SUT" in d for f, _, d in problems)
    assert report.exit_code == 1


def _doctor_json(packet: Path, rel: str, change: Any) -> None:
    value = json.loads((packet / rel).read_text("utf-8"))
    change(value)
    rehash(packet, rel, (json.dumps(value, indent=2) + "\n").encode("utf-8"))


@pytest.mark.parametrize(
    ("rel", "doctor"),
    beyond(
        [
            ("results/reference/cucumber.json", lambda p, rel: rehash(p, rel, b'[{"uri": "features/forged.feature", "elements": []}]\n')),
            ("README.md", lambda p, rel: rehash(p, rel, (p / rel).read_bytes().replace(b"| `reference` |", b"| `reference (forged)` |"))),
            (
                "vectors/identity.json",
                lambda p, rel: _doctor_json(p, rel, lambda v: v["dispatch_id"][0].update(dispatch_id="pwh_" + "0" * 64)),
            ),
            ("schemas/hook_result.json", lambda p, rel: _doctor_json(p, rel, lambda v: v.pop("required", None))),
            ("rules.json", lambda p, rel: rehash(p, rel, (p / rel).read_bytes().replace(b'"M01"', b'"M01 "', 1))),
        ],
        # The test command rewrites a result and a schema; CI's extended tier every other kind of file.
        lambda case: case[0] in ("results/reference/cucumber.json", "schemas/hook_result.json"),
        unpack=True,
    ),
)
def test_a_rewritten_file_fails_however_the_manifest_was_rehashed(tmp_path: Path, rel: str, doctor: Any) -> None:
    build_packet(tmp_path / "p", ["reference"], gate=stub)
    before = (tmp_path / "p" / rel).read_bytes()
    doctor(tmp_path / "p", rel)
    assert (tmp_path / "p" / rel).read_bytes() != before
    assert kinds(tmp_path / "p") == {(rel, "inconsistent")}


def test_a_file_pwh_always_builds_cannot_be_left_out(tmp_path: Path) -> None:
    build_packet(tmp_path / "p", ["reference"], gate=stub)
    (tmp_path / "p" / "schemas" / "hook_result.json").unlink()
    manifest = json.loads((tmp_path / "p" / MANIFEST).read_bytes())
    del manifest["files"]["schemas/hook_result.json"]
    (tmp_path / "p" / MANIFEST).write_bytes(json_bytes(manifest))
    assert kinds(tmp_path / "p") == {("schemas/hook_result.json", "missing")}


def _small_wheel() -> bytes:
    """A wheel of two deflated members and a RECORD that lists them truly, built here (not by pwh)."""
    import base64
    import io
    import zipfile

    members = {
        "pkg/__init__.py": b'"""A package."""\n' + b"".join(b"VALUE_%d = %d\n" % (i, i * i) for i in range(300)),
        "pkg/data.txt": bytes(range(256)) * 8,
    }
    lines = []
    for name, data in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        lines.append(f"{name},sha256={digest},{len(data)}")
    members["pkg-0.1.dist-info/RECORD"] = ("\n".join(lines) + "\npkg-0.1.dist-info/RECORD,,\n").encode("ascii")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data, compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def test_a_wheel_with_any_one_byte_changed_is_not_intact_and_never_a_traceback() -> None:
    """Every byte of the wheel, changed in turn (headers, compressed data, the central directory):
    the check answers a problem or, where zip ignores that byte, none, but never raises (a
    decompressor's zlib.error once escaped verify as a traceback)."""
    from pwh._core.boundary import BoundaryScanner
    from pwh._harness.packet.wheel import wheel_problems

    scanner = BoundaryScanner()
    intact = _small_wheel()
    assert wheel_problems(intact, scanner) == []
    caught = 0
    for at in range(len(intact)):
        data = bytearray(intact)
        data[at] ^= 0x5A
        problems = wheel_problems(bytes(data), scanner)
        assert all(kind in ("invalid", "altered", "unsafe") for kind, _ in problems), (at, problems)
        caught += bool(problems)
    # Bytes zip never reads for content (timestamps, attributes, the archive comment's length...)
    # may change unnoticed; every byte of a member's compressed data may not.
    assert caught > len(intact) // 2

"""``pwh packet verify``: check a packet directory against its manifest, the boundary scan and its schemas.

A packet is someone else's directory: every file is read once, in chunks (hashed and scanned as
it is read), the walk never follows a symbolic link and is bounded in depth and entries, and a
bad input is a problem in the report, never an exception.

Apart from :mod:`.build` so that verifying a published packet never imports the gate (a test
holds it): nothing here runs a scenario.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from pwh._core.boundary import BoundaryScanner
from pwh._core.schemas import schema_rejections, validator
from pwh._harness.packet._common import (
    EXIT_NOT_A_PACKET,
    EXIT_PROBLEMS,
    EXIT_VERIFIED,
    FRONT_PAGE,
    MANIFEST,
    Problem,
    consumer_readme,
    front_page,
    json_bytes,
    result_dir_name,
    shown_rel,
)
from pwh._harness.packet.wheel import packet_wheel_path, wheel_problems
from pwh._harness.paths import shown
from pwh._harness.safe_text import for_terminal
from pwh._harness.text_scan import scan_text

# Bounds for reading what someone else put in a packet directory: every file is streamed in
# chunks (hashed and scanned as it is read), so memory stays bounded whatever its size.
MAX_DEPTH = 16  # a packet is three levels deep; deeper directories are reported, not walked
MAX_ENTRIES = 100_000  # directory entries walked before the rest is reported, not walked
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_PARSED_BYTES = 16 * 1024 * 1024  # a JSON or XML file larger than this is not parsed (the largest is ~1 MB)
MAX_SCANNED_BYTES = 64 * 1024 * 1024  # the boundary scan reads no further into one file
MAX_LINE_BYTES = 1024 * 1024  # a longer line is reported unscannable, never held whole
CHUNK = 1024 * 1024
_MIB = 1024 * 1024

# A packet path: '/'-separated, no empty / '.' / '..' segment, no hidden file (as the manifest schema).
_RELPATH = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*)*")
_VERDICT_FILE = re.compile(r"results/[^/]+/verdict\.json")


@dataclass
class VerifyReport:
    """The outcome of :func:`verify_packet`; ``problems`` are (file, kind, detail), sorted.

    Kinds: ``missing``, ``extra``, ``altered``, ``unsafe`` (a path outside the packet, a symlink),
    ``unreadable``, ``leak`` (a boundary finding: line and category), ``invalid`` (JSON/XML or schema),
    ``inconsistent`` (not what pwh builds from the packet's own inputs), ``unexpected`` (a file pwh
    never puts in a packet).
    """

    packet: str
    files_checked: int = 0
    problems: list[Problem] = field(default_factory=list)
    not_a_packet: str | None = None

    @property
    def ok(self) -> bool:
        return self.not_a_packet is None and not self.problems

    @property
    def exit_code(self) -> int:
        if self.not_a_packet is not None:
            return EXIT_NOT_A_PACKET
        return EXIT_PROBLEMS if self.problems else EXIT_VERIFIED

    def render(self) -> str:
        if self.not_a_packet is not None:
            return for_terminal(f"pwh packet verify: {self.packet}: not a packet — {self.not_a_packet}") + "\n"
        lines = [f"pwh packet verify: {for_terminal(self.packet)} — {self.files_checked} files"]
        lines += [for_terminal(f"  {file}: {kind} — {detail}") for file, kind, detail in self.problems]
        if self.problems:
            files = len({p[0] for p in self.problems})
            lines.append(f"{len(self.problems)} problem(s) in {files} file(s)")
        else:
            lines.append(
                "verified: every file matches the manifest, none leaks, every JSON and XML file is valid, "
                "and every file is what pwh builds from the packet's features and verdicts"
            )
        return "\n".join(lines) + "\n"


def verify_packet(packet: Path, *, private_names: Iterable[str] = ()) -> VerifyReport:
    """Check a packet directory against its manifest; never raises for bad input.

    Exit codes (:attr:`VerifyReport.exit_code`, for ``pwh packet verify``): 0 verified; 1 problems
    found, listed per file; 2 not a packet (not a directory, no readable manifest.json).
    Every file is read once, in chunks: memory stays bounded by the limits above, not by the
    files' sizes; the walk is iterative and bounded in depth and entries.
    """
    packet = Path(packet)
    if packet.name.endswith(TARBALL_SUFFIXES) and packet.is_file() and not packet.is_symlink():
        return _verify_tarball(packet, private_names)
    report = VerifyReport(shown(packet))
    scanner = BoundaryScanner(private_names=private_names)
    if not packet.is_dir():
        if not packet.exists():  # a tarball's name says what was meant
            report.not_a_packet = "no such file" if packet.name.endswith(TARBALL_SUFFIXES) else "no such directory"
        else:
            report.not_a_packet = "not a directory, nor a .tar.gz packet"
        return report
    manifest_path = packet / MANIFEST
    if manifest_path.is_symlink() or not manifest_path.is_file():
        report.not_a_packet = "no manifest.json"
        return report
    try:
        if manifest_path.stat().st_size > MAX_MANIFEST_BYTES:
            report.not_a_packet = f"manifest.json is larger than {MAX_MANIFEST_BYTES // _MIB} MiB"
            return report
        read = _read_file(manifest_path, scanner, MANIFEST, keep=MAX_MANIFEST_BYTES)
    except OSError:
        report.not_a_packet = "manifest.json is unreadable"
        return report
    if read.data is None:
        report.not_a_packet = f"manifest.json is larger than {MAX_MANIFEST_BYTES // _MIB} MiB"
        return report
    manifest_data = read.data
    try:
        manifest = json.loads(manifest_data)
    except (ValueError, RecursionError):
        report.not_a_packet = "manifest.json is unreadable or not JSON"
        return report
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        report.not_a_packet = "manifest.json has no files table"
        return report

    problems = report.problems
    problems += _schema_problems(MANIFEST, "packet_manifest", manifest)
    if manifest_data != json_bytes(manifest):
        problems.append((MANIFEST, "invalid", "not in the canonical form (sorted keys, 2-space indent, final newline)"))
    listed: dict[str, Any] = manifest["files"]
    nondet = manifest.get("nondeterministic")
    for rel in nondet if isinstance(nondet, list) else []:
        if not isinstance(rel, str) or rel not in listed:
            problems.append((MANIFEST, "invalid", "nondeterministic names a file that files does not list"))

    present, unsafe = _walk(packet)
    problems += [(shown_rel(rel, scanner), "unsafe", why) for rel, why in unsafe.items()]
    problems += read.leaks
    for i, rel in enumerate(sorted(listed)):
        if not _RELPATH.fullmatch(rel) or rel == MANIFEST:
            problems.append((f"manifest files entry {i}", "unsafe", "not a plain relative path inside the packet"))
            continue
        if rel in unsafe:
            continue
        if rel not in present:
            problems.append((shown_rel(rel, scanner), "missing", "listed in the manifest, not in the packet"))
            continue
        entry = listed[rel]
        expected = (
            entry if isinstance(entry, dict) and isinstance(entry.get("sha256"), str) and isinstance(entry.get("size"), int) else None
        )
        problems += _verify_one(packet, rel, present[rel], scanner, expected)
        report.files_checked += 1
    for rel in sorted(set(present) - set(listed)):
        problems.append((shown_rel(rel, scanner), "extra", "in the packet, not in the manifest"))
        problems += _verify_one(packet, rel, present[rel], scanner, None)
    report.files_checked += 1  # the manifest itself
    if REFERENCE_VERDICT not in listed:
        problems.append(("results/reference/", "missing", "the packet's README compares against the reference, whose results are absent"))
    verdicts: dict[str, dict[str, Any] | None] = {}
    for rel in sorted(r for r in present if _VERDICT_FILE.fullmatch(r) and r not in unsafe):
        found, verdicts[rel] = _consistency_problems(packet, rel, present, scanner)
        problems += found
    problems += _sut_problems(verdicts, scanner)
    reported = {p[0] for p in problems}  # a file already found wrong is not compared again
    problems += [p for p in _built_problems(packet, present, listed, manifest, verdicts, scanner) if p[0] not in reported]
    report.problems = sorted(set(problems))
    return report


TARBALL_SUFFIXES = (".tar.gz", ".tgz")
MAX_TARBALL_BYTES = 512 * _MIB  # unpacked: the whole shipped packet is a few MiB


def _verify_tarball(path: Path, private_names: Iterable[str]) -> VerifyReport:
    """A packet as it is attached and downloaded: its one top-level directory is unpacked (regular
    files and directories only, plain relative names, bounded in entries and bytes) into a private
    directory and verified there; any other member is a problem, never unpacked."""
    import tarfile
    import tempfile
    import zlib

    with tempfile.TemporaryDirectory(prefix="pwh-verify-") as tmp:
        try:
            root, refused = _unpack(path, Path(tmp), tarfile)
        except (tarfile.TarError, OSError, EOFError, zlib.error):
            report = VerifyReport(shown(path))
            report.not_a_packet = "not a readable .tar.gz"
            return report
        if root is None:
            report = VerifyReport(shown(path))
            report.not_a_packet = "the archive does not hold one packet directory"
            return report
        report = verify_packet(root, private_names=private_names)
    report.packet = shown(path)
    report.problems = sorted(set(report.problems + refused))
    return report


def _unpack(path: Path, into: Path, tarfile: Any) -> tuple[Path | None, list[Problem]]:
    scanner = BoundaryScanner()
    refused: list[Problem] = []
    top: str | None = None
    total = 0
    with tarfile.open(path, "r:gz") as archive:
        for count, member in enumerate(archive):
            if count >= MAX_ENTRIES:
                refused.append(("(archive)", "unsafe", f"more than {MAX_ENTRIES} entries: the rest is not unpacked"))
                break
            head, _, rel = member.name.partition("/")
            if top is None:
                top = head
            if head != top or not _RELPATH.fullmatch(head) or (rel and not _RELPATH.fullmatch(rel)):
                refused.append((shown_rel(member.name, scanner), "unsafe", "not a plain path inside the archive's one directory"))
                continue
            if member.isdir():
                (into / head / rel).mkdir(parents=True, exist_ok=True)
                continue
            if not member.isfile():
                refused.append((shown_rel(rel or head, scanner), "unsafe", "not a regular file in the archive (a link or a device)"))
                continue
            total += member.size
            if total > MAX_TARBALL_BYTES:
                refused.append(("(archive)", "unsafe", f"more than {MAX_TARBALL_BYTES // _MIB} MiB unpacked: the rest is not unpacked"))
                break
            target = into / head / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            source = archive.extractfile(member)
            with source, open(target, "xb") as out:
                while chunk := source.read(CHUNK):
                    out.write(chunk)
    root = into / top if top is not None else None
    return (root if root is not None and root.is_dir() else None), refused


REFERENCE_VERDICT = "results/reference/verdict.json"
# The fields of a row and of the summary a verdict's own scenarios decide.
_ROW_FIELDS = ("status", "rfc", "profile", "scenarios", "passed", "failed", "skipped", "divergences", "self_checks", "seams")
_SUMMARY_FIELDS = (
    "rows", "passed", "failed", "skipped", "self_check_rows", "scenarios", "sut_scenarios",
    "verdict", "rfc", "profile", "divergences", "self_checks",
)  # fmt: skip


def _consistency_problems(
    packet: Path, rel: str, present: dict[str, tuple[int, int]], scanner: BoundaryScanner
) -> tuple[list[Problem], dict[str, Any] | None]:
    """A verdict must agree with itself: its rows and summary are what its scenarios make them
    (recomputed as the gate does), and the reports beside it (report.md, report.html, junit.xml,
    cucumber.json) render exactly it. A summary turned to pass by hand, or a report rewritten,
    even with the manifest re-hashed, fails here. The verdict is returned when it is one."""
    from pwh._harness.judging import rows_of, summarize
    from pwh._harness.report import cucumber_json, html_report, junit_xml, markdown_report

    shown = shown_rel(rel, scanner)
    try:
        data = _read_plain(packet / rel, present[rel], MAX_PARSED_BYTES)
        verdict = json.loads(data) if data is not None else None
    except (OSError, _NotRegular, ValueError, RecursionError):
        return [], None  # reported by the file checks
    try:
        if not isinstance(verdict, dict) or schema_rejections(validator("gate_verdict"), verdict, "invalid"):
            return [], None  # reported by the schema check
    except RecursionError:
        return [], None
    out: list[Problem] = []
    scenarios = verdict["scenarios"]
    for i, sc in enumerate(scenarios):
        wanted = "divergence" if sc["rfc"] == "pass" and sc.get("divergences") else sc["rfc"]
        if sc["profile"] != wanted:
            out.append(
                (shown, "inconsistent", f"scenario {i}: profile {sc['profile']} where its RFC status and divergences make it {wanted}")
            )
    rows = rows_of(scenarios, verdict.get("selected_rows"))
    for row_id, row in verdict["rows"].items():
        again = rows.get(row_id)
        differs = [f for f in _ROW_FIELDS if again is None or (f in row and row[f] != again.get(f))]
        if differs:
            out.append((shown, "inconsistent", f"row {row_id}: {', '.join(differs)} differ from what its scenarios make them"))
    if set(rows) != set(verdict["rows"]):
        out.append((shown, "inconsistent", "its rows are not the rows its scenarios and row filter make"))
    summary = summarize(rows, scenarios, bool(verdict.get("collection_errors")))
    differs = [f for f in _SUMMARY_FIELDS if verdict["summary"].get(f) != summary.get(f)]
    if differs:
        out.append((shown, "inconsistent", f"summary: {', '.join(differs)} differ from what its rows and scenarios make them"))
    folder = rel.rsplit("/", 1)[0]
    for name, render in (
        ("report.md", markdown_report),
        ("report.html", lambda v: html_report(v, features_href="../../features/")),
        ("junit.xml", junit_xml),
        ("cucumber.json", cucumber_json),
    ):
        beside = f"{folder}/{name}"
        if beside not in present:
            out.append((shown_rel(beside, scanner), "missing", "every verdict is published with its reports beside it"))
            continue
        try:
            data = _read_plain(packet / beside, present[beside], MAX_PARSED_BYTES * 4)
        except (OSError, _NotRegular):
            continue
        if data is not None and data != render(verdict).encode("utf-8"):
            out.append((shown_rel(beside, scanner), "inconsistent", "does not render the verdict beside it"))
    return out, verdict


_RESULT_FILES = frozenset({"verdict.json", "junit.xml", "cucumber.json", "report.md", "report.html"})
_FEATURE_FILE = re.compile(r"features/(?:[^/]+/)*[^/]+\.feature")


def _sut_problems(verdicts: dict[str, dict[str, Any] | None], scanner: BoundaryScanner) -> list[Problem]:
    """One verdict per SUT, in the one directory its SUT name gives (``results/<name>/``): a rerun
    compares each SUT with exactly one published verdict, and a second verdict for a SUT (a forged
    PASS beside the genuine FAIL) is refused here."""
    out: list[Problem] = []
    first: dict[str, str] = {}
    for rel, verdict in sorted(verdicts.items()):
        if verdict is None:
            continue
        sut, folder = str(verdict["sut"]), rel.rsplit("/", 1)[0]
        if folder != f"results/{result_dir_name(sut)}":
            out.append(
                (
                    shown_rel(rel, scanner),
                    "inconsistent",
                    f"its SUT's results belong in results/{shown_rel(result_dir_name(sut), scanner)}/",
                )
            )
        if sut in first:
            out.append(
                (shown_rel(rel, scanner), "inconsistent", f"names the SUT {shown_rel(first[sut], scanner)} names: one verdict per SUT")
            )
        else:
            first[sut] = rel
    return out


def pwh_schema_files() -> dict[str, bytes]:
    """pwh's own contracts, as a packet must carry them (``schemas/<name>.json``)."""
    from importlib import resources

    folder = resources.files("pwh").joinpath("schemas")
    return {f"schemas/{e.name}": e.read_bytes() for e in sorted(folder.iterdir(), key=lambda e: e.name) if e.name.endswith(".json")}


def _built_problems(
    packet: Path,
    present: dict[str, tuple[int, int]],
    listed: dict[str, Any],
    manifest: dict[str, Any],
    verdicts: dict[str, dict[str, Any] | None],
    scanner: BoundaryScanner,
) -> list[Problem]:
    """Every file but the features (the packet's input) and the verdicts is what pwh builds from
    them, compared byte for byte: the schemas and identity vectors are pwh's own, rules.json is
    pwh's rulebook, README.md is rendered from the verdicts (its verdict table among it), and so
    is index.html, the front page (every verdict as one matrix page); any other file is not pwh's
    to publish. A re-hashed manifest makes none of them pass."""
    from importlib import resources

    from pwh._harness.rulebook import rules_document

    expected: dict[str, bytes | None] = dict(pwh_schema_files())
    expected["vectors/identity.json"] = resources.files("pwh").joinpath("vectors", "identity.json").read_bytes()
    expected["rules.json"] = json_bytes(rules_document())
    valid = {rel: v for rel, v in verdicts.items() if v is not None}
    suts = {str(v["sut"]): rel.split("/")[1] for rel, v in sorted(valid.items())}
    if valid and len(valid) == len(verdicts) == len(suts):  # else the verdicts' own problems say why
        version = manifest.get("pwh_version")
        readme = consumer_readme(
            suts,
            {str(v["sut"]): v["summary"]["verdict"] for v in valid.values()},
            {str(v["sut"]): v["summary"]["profile"] for v in valid.values()},
            version if isinstance(version, str) else None,
        )
        expected["README.md"] = readme.encode("utf-8")
        expected[FRONT_PAGE] = front_page({rel.split("/")[1]: v for rel, v in valid.items()}).encode("utf-8")
    else:
        expected["README.md"] = expected[FRONT_PAGE] = None
    version = manifest.get("pwh_version")
    if isinstance(version, str):  # pwh's wheel: present, checked member by member (wheel_problems), not rebuilt here
        expected[packet_wheel_path(version)] = None
    out: list[Problem] = []
    result_dirs = {rel.rsplit("/", 1)[0] for rel in verdicts}
    for rel in sorted(present):
        shown = shown_rel(rel, scanner)
        if rel in expected:
            want = expected[rel]
            try:
                data = _read_plain(packet / rel, present[rel], MAX_PARSED_BYTES)
            except (OSError, _NotRegular):
                continue  # reported by the file checks
            if want is not None and data != want:
                what = (
                    "pwh's own" if rel.startswith(("schemas/", "vectors/")) or rel == "rules.json" else "what pwh renders from the verdicts"
                )
                out.append((shown, "inconsistent", f"differs from {what}"))
        elif _FEATURE_FILE.fullmatch(rel) or rel not in listed:
            continue  # the packet's input; or an extra, reported as one
        elif rel.count("/") == 2 and rel.startswith("results/") and rel.rsplit("/", 1)[1] in _RESULT_FILES:
            if rel.rsplit("/", 1)[0] not in result_dirs:
                out.append((shown, "unexpected", "no verdict.json beside it: pwh publishes results only with their verdict"))
        else:
            out.append((shown, "unexpected", "not a file pwh builds into a packet"))
    for rel in sorted(set(expected) - set(present) - set(listed)):
        out.append((shown_rel(rel, scanner), "missing", "every packet carries it"))
    return out


def _read_plain(path: Path, identity: tuple[int, int], limit: int) -> bytes | None:
    """A file's bytes for a second look (already hashed and scanned): without following a link,
    only the regular file the walk saw, ``None`` when larger than ``limit``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != identity:
            raise _NotRegular
        if info.st_size > limit:
            return None
        chunks = []
        while chunk := os.read(fd, CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@dataclass
class _Read:
    """One file read in chunks: its size, its SHA-256 (when asked), its boundary findings as
    problems, and its bytes when it was small enough to keep (``None`` otherwise)."""

    size: int
    sha256: str | None
    leaks: list[Problem]
    data: bytes | None


def _read_file(
    path: Path,
    scanner: BoundaryScanner,
    rel: str,
    *,
    keep: int = 0,
    hash_size: int | None = None,
    identity: tuple[int, int] | None = None,
    scan: bool = True,
) -> _Read:
    """Stream ``path`` once: hash it (when its size is ``hash_size``: a file of another size is
    altered whatever its hash), scan it line by line (up to :data:`MAX_SCANNED_BYTES`) and keep
    its bytes when they fit in ``keep``. Never follows a symbolic link, never reads a FIFO or
    device (``OSError``, or :class:`_NotRegular`)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (identity is not None and (info.st_dev, info.st_ino) != identity):
            raise _NotRegular
        digest = hashlib.sha256() if hash_size is not None and hash_size == info.st_size else None
        lines: _LineScanner | _NoScan = _LineScanner(rel, scanner) if scan else _NoScan()
        kept: list[bytes] | None = [] if keep else None
        size = 0
        while True:
            if digest is None and kept is None and lines.done:
                size = max(size, info.st_size)  # nothing more to learn from the bytes
                break
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if digest is not None:
                digest.update(chunk)
            lines.feed(chunk)
            if kept is not None:
                kept.append(chunk)
                if size > keep:
                    kept = None
        lines.close()
        data = b"".join(kept) if kept is not None else None
        return _Read(size, digest.hexdigest() if digest is not None else None, lines.problems(), data)
    finally:
        os.close(fd)


class _NoScan:
    """No line scan: a wheel is code, checked member by member (:func:`wheel_problems`)."""

    done = True

    def feed(self, chunk: bytes) -> None:
        pass

    def close(self) -> None:
        pass

    def problems(self) -> list[Problem]:
        return []


class _NotRegular(OSError):
    """The path is not (or is no longer) the regular file the walk found."""


class _LineScanner:
    """The boundary scan of a file fed in chunks: whole lines are decoded (strict UTF-8) and
    scanned in batches, their numbers carried over; a line longer than :data:`MAX_LINE_BYTES` is
    reported unscannable and skipped, and the scan stops after :data:`MAX_SCANNED_BYTES`."""

    def __init__(self, rel: str, scanner: BoundaryScanner) -> None:
        self.rel = rel
        self.shown = shown_rel(rel, scanner)
        self.scanner = scanner
        self.found: set[tuple[str, str]] = set()
        self.pending = b""
        self.line = 0  # lines scanned so far
        self.seen = 0
        self.skipping = False  # inside an over-long line
        self.done = False
        self.name_findings = [(self.shown, "name", c) for seg in rel.split("/") for c in {f.category for f in scanner.scan_value(seg)}]

    def feed(self, chunk: bytes) -> None:
        if self.done:
            return
        over = self.seen + len(chunk) > MAX_SCANNED_BYTES
        if over:
            chunk = chunk[: MAX_SCANNED_BYTES - self.seen]
        self.seen += len(chunk)
        if self.skipping:
            cut = chunk.find(b"\n")
            chunk = chunk[cut + 1 :] if cut >= 0 else b""
            if cut >= 0:
                self.skipping = False
                self.line += 1
        if not self.skipping:
            data = self.pending + chunk
            cut = data.rfind(b"\n")
            whole, self.pending = (data[: cut + 1], data[cut + 1 :]) if cut >= 0 else (b"", data)
            if whole:
                self._scan(whole)
            if len(self.pending) > MAX_LINE_BYTES and not self.done:
                self.found.add((f"line {self.line + 1}", "unscannable"))
                self.pending, self.skipping = b"", True
        if over and not self.done:  # the rest of the file is not read for the scan
            self.found.add((f"line {self.line + 1}", "unscannable"))
            self.pending, self.done = b"", True

    def close(self) -> None:
        if not self.done and self.pending and not self.skipping:
            self._scan(self.pending)
        self.pending, self.done = b"", True

    def _scan(self, data: bytes) -> None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.found.add(("line 0", "unscannable"))
            self.done = True
            return
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        for finding in scan_text(text.removesuffix("\n"), self.scanner):
            number = int(finding.path.removeprefix("line ") or 0) if finding.path.startswith("line ") else 0
            self.found.add((f"line {self.line + number}" if number else "line 0", finding.category))
        self.line += lines

    def problems(self) -> list[Problem]:
        return [(self.shown, "leak", f"{line}: {cat}") for _, line, cat in self.name_findings] + [
            (self.shown, "leak", f"{line}: {cat}") for line, cat in sorted(self.found)
        ]


def _verify_one(
    packet: Path, rel: str, identity: tuple[int, int], scanner: BoundaryScanner, expected: dict[str, Any] | None
) -> list[Problem]:
    """Size, hash (when the manifest lists it), boundary scan and well-formedness of one file."""
    shown = shown_rel(rel, scanner)
    parse = rel.endswith((".json", ".xml"))
    wheel = _WHEEL.fullmatch(rel) is not None
    try:
        read = _read_file(
            packet / rel,
            scanner,
            rel,
            keep=MAX_PARSED_BYTES if parse or wheel else 0,
            hash_size=expected["size"] if expected is not None else None,
            identity=identity,
            scan=not wheel,
        )
    except _NotRegular:
        return [(shown, "unsafe", "not a regular file, or replaced while being verified")]
    except OSError:
        return [(shown, "unreadable", "cannot be read")]
    out = list(read.leaks)
    if expected is not None:
        if read.size != expected["size"]:
            out.append((shown, "altered", f"size {read.size} bytes, the manifest says {expected['size']}"))
        elif read.sha256 is None or read.sha256 != expected["sha256"]:
            out.append((shown, "altered", "sha256 differs from the manifest"))
    if parse or wheel:
        if read.data is None:
            out.append((shown, "invalid", f"larger than {MAX_PARSED_BYTES // _MIB} MiB: too large to check"))
        elif wheel:
            out += [(shown, kind, detail) for kind, detail in wheel_problems(read.data, scanner)]
        else:
            out += _check_file(rel, read.data, scanner)
    return out


_WHEEL = re.compile(r"dist/pwh-[A-Za-z0-9_.+]{1,64}-py3-none-any\.whl")  # pwh's own wheel (packet_wheel_path)


def _walk(packet: Path) -> tuple[dict[str, tuple[int, int]], dict[str, str]]:
    """Regular files under ``packet`` (minus the manifest) with their (device, inode), and anything
    that is not one. Iterative, never follows a symbolic link, bounded by :data:`MAX_DEPTH` and
    :data:`MAX_ENTRIES`."""
    present: dict[str, tuple[int, int]] = {}
    unsafe: dict[str, str] = {}
    todo: list[tuple[str, int]] = [("", 0)]
    walked = 0
    while todo:
        rel_dir, depth = todo.pop()
        try:
            with os.scandir(packet / rel_dir if rel_dir else packet) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            unsafe[rel_dir or "."] = "a directory that cannot be read"
            continue
        for entry in entries:
            walked += 1
            if walked > MAX_ENTRIES:
                unsafe[rel_dir or "."] = f"more than {MAX_ENTRIES} entries in the packet: the rest were not walked"
                return present, unsafe
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    unsafe[rel] = "a symbolic link (never followed)"
                elif entry.is_dir(follow_symlinks=False):
                    if depth + 1 >= MAX_DEPTH:
                        unsafe[rel] = f"a directory nested more than {MAX_DEPTH} levels deep (not walked)"
                    else:
                        todo.append((rel, depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    present[rel] = (info.st_dev, info.st_ino)
                else:
                    unsafe[rel] = "not a regular file"
            except OSError:
                unsafe[rel] = "cannot be examined"
    present.pop(MANIFEST, None)
    return present, unsafe


def _check_file(rel: str, data: bytes, scanner: BoundaryScanner) -> list[Problem]:
    """Well-formedness and schema validation by file kind (the boundary scan is the reader's)."""
    shown = shown_rel(rel, scanner)
    out: list[Problem] = []
    if rel.endswith(".xml"):
        try:
            ET.fromstring(data)
        except ET.ParseError as exc:
            out.append((shown, "invalid", f"not well-formed XML (line {exc.position[0]})"))
        except RecursionError:
            out.append((shown, "invalid", "XML nested too deeply to check"))
        return out
    try:
        value = json.loads(data)
    except UnicodeDecodeError:
        return out + [(shown, "invalid", "not UTF-8")]
    except json.JSONDecodeError as exc:
        return out + [(shown, "invalid", f"not well-formed JSON (line {exc.lineno})")]
    except ValueError:
        return out + [(shown, "invalid", "not well-formed JSON")]
    except RecursionError:
        return out + [(shown, "invalid", "JSON nested too deeply to check")]
    if _VERDICT_FILE.fullmatch(rel):
        out += _schema_problems(shown, "gate_verdict", value)
    elif rel.startswith("schemas/"):
        try:
            Draft202012Validator.check_schema(value)
        except SchemaError as exc:
            where = "/".join(str(p) for p in exc.path if re.fullmatch(r"[A-Za-z0-9_$]{1,64}", str(p)))
            out.append((shown, "invalid", f"not a JSON Schema 2020-12 document (at /{where})"))
        except RecursionError:
            out.append((shown, "invalid", "nested too deeply to check"))
    return out


def _schema_problems(shown: str, schema: str, value: Any) -> list[Problem]:
    """Schema violations as problems: where and what kind, never the value (pwh._core.schemas)."""
    try:
        rejections = schema_rejections(validator(schema), value, "invalid")
        return [(shown, "invalid", str(r).removeprefix("invalid at ")) for r in rejections]
    except RecursionError:
        return [(shown, "invalid", "nested too deeply to check")]

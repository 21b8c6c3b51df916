"""``pwh packet``: build the public test packet, and let anyone re-verify one.

The packet is what RFC promotion publishes: the Gherkin matrix, the JSON schemas, the identity
test vectors, the rows and rules, and the gate's results for the named SUTs, plus a manifest of
every file's SHA-256 and size. Two builds from the same commit are byte-identical (no times,
absolute paths, host or user names; sorted everywhere), so a rebuild proves a published packet.

Every file is scanned with the public-boundary scanner *before* anything is written; a finding
stops the build (:class:`PacketLeak`: file, line and category, never the value). The packet is
built in a temporary directory beside the target and renamed into place, so a failed build leaves
the previous packet (or nothing) behind, never half a packet.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from pwh._version import __version__
from pwh._core.boundary import BoundaryScanner
from pwh._harness.text_scan import scan_text
from pwh._harness.gate import GateError, GateRun, locate, project_root, run_gate
from pwh._harness.report import cucumber_json, html_report, junit_xml, markdown_report, verdict_json
from pwh._harness.rules import RULES
from pwh._core.schemas import schema_rejections, validator
from pwh._harness.vectors import build_vectors

MANIFEST = "manifest.json"
MANIFEST_SCHEMA_VERSION = "pwh_packet_manifest_v0"
RULES_SCHEMA_VERSION = "pwh_rules_v0"
TAR_ROOT = "pwh-packet"  # the one top-level directory inside the .tar.gz
EXIT_VERIFIED, EXIT_PROBLEMS, EXIT_NOT_A_PACKET = 0, 1, 2
REFERENCE_SUTS = frozenset({"reference", "reference-memory"})  # pwh's own dispatcher: must pass to publish

# A packet path: '/'-separated, no empty / '.' / '..' segment, no hidden file (as the manifest schema).
_RELPATH = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*)*")
_VERDICT_FILE = re.compile(r"results/[^/]+/verdict\.json")
_WITHHELD = "<withheld>"

Gate = Callable[..., GateRun]
Problem = tuple[str, str, str]  # (file, kind, detail)


class PacketError(Exception):
    """The packet could not be built, or the directory is not a packet (exit 2)."""


class PacketLeak(PacketError):
    """A file would carry private data across the public boundary; nothing was written.

    ``findings`` holds (file, "line N", category) triples; the message names them, never the value.
    """

    def __init__(self, findings: Sequence[tuple[str, str, str]]) -> None:
        self.findings = tuple(findings)
        self.file, self.line, self.category = self.findings[0]
        shown = "; ".join(f"{f} {line}: {cat}" for f, line, cat in self.findings[:10])
        more = f" (and {len(self.findings) - 10} more)" if len(self.findings) > 10 else ""
        super().__init__(f"the packet would leak private data — {shown}{more}; nothing was written")


@dataclass(frozen=True)
class BuildResult:
    """What a build wrote: the packet directory, its manifest, each SUT's verdict, the archive."""

    out_dir: Path
    manifest: dict[str, Any]
    verdicts: dict[str, str]  # SUT -> the RFC verdict: pass / fail / incomplete
    tar_path: Path | None = None
    profiles: dict[str, str] = field(default_factory=dict)  # SUT -> the profile verdict

    @property
    def files(self) -> list[str]:
        return [MANIFEST, *self.manifest["files"]]


@dataclass
class VerifyReport:
    """The outcome of :func:`verify_packet`; ``problems`` are (file, kind, detail), sorted.

    Kinds: ``missing``, ``extra``, ``altered``, ``unsafe`` (a path outside the packet, a symlink),
    ``unreadable``, ``leak`` (a boundary finding: line and category), ``invalid`` (JSON/XML or schema).
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
            return f"pwh packet verify: {self.packet}: not a packet — {self.not_a_packet}\n"
        lines = [f"pwh packet verify: {self.packet} — {self.files_checked} files"]
        lines += [f"  {file}: {kind} — {detail}" for file, kind, detail in self.problems]
        if self.problems:
            files = len({p[0] for p in self.problems})
            lines.append(f"{len(self.problems)} problem(s) in {files} file(s)")
        else:
            lines.append("verified: every file matches the manifest, none leaks, every JSON and XML file is valid")
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------------


def build_packet(
    out_dir: Path,
    suts: list[str],
    *,
    tar_path: Path | None = None,
    gate: Gate = run_gate,
    private_names: Iterable[str] = (),
    features: Path | None = None,
) -> BuildResult:
    """Run the gate for each SUT and write the packet to ``out_dir`` (replacing an earlier packet).

    ``gate(sut, features=..., progress=False)`` returns a :class:`GateRun` (injectable so tests
    need not rerun the matrix). ``features`` defaults to the project's ``features/``.
    Raises :class:`PacketLeak` on a boundary finding, :class:`PacketError` for anything else.
    """
    out_dir = Path(os.path.abspath(out_dir))
    tar = Path(os.path.abspath(tar_path)) if tar_path is not None else None
    _check_target(out_dir, tar)
    try:
        feature_dir = Path(features) if features is not None else locate(None)[0]
    except GateError as exc:
        raise PacketError(str(exc)) from None
    if not feature_dir.is_dir():
        raise PacketError(f"features directory not found: {_shown(feature_dir)}")
    dirs = _result_dirs(suts or ["reference"])

    scanner = BoundaryScanner(private_names=private_names)
    files: dict[str, bytes] = {}
    try:
        files.update(_feature_files(feature_dir))
        files.update(_schema_files())
        files["vectors/identity.json"] = _vector_file()
    except OSError as exc:
        raise PacketError(f"cannot read the packet's sources: {exc.strerror or type(exc).__name__}") from None
    files["rules.json"] = _json_bytes(rules_document())
    _stop_on_leaks(files, scanner)  # before the gate runs: a planted secret fails fast
    verdicts: dict[str, str] = {}
    profiles: dict[str, str] = {}
    for sut, name in dirs.items():
        try:
            run = gate(sut, features=str(feature_dir), progress=False)
        except GateError as exc:
            raise PacketError(f"the gate could not run for {sut!r}: {exc}") from None
        verdict = run.verdict()
        bad = schema_rejections(validator("gate_verdict"), verdict, "invalid")
        if bad:
            raise PacketError(f"the gate's verdict for results/{name} does not match the gate_verdict schema: {bad[0]}")
        steps = {s["id"]: s.get("steps", []) for s in run.scenarios}
        files[f"results/{name}/verdict.json"] = verdict_json(verdict).encode("utf-8")
        files[f"results/{name}/junit.xml"] = junit_xml(verdict).encode("utf-8")
        files[f"results/{name}/cucumber.json"] = cucumber_json(verdict, steps).encode("utf-8")
        files[f"results/{name}/report.md"] = markdown_report(verdict).encode("utf-8")
        files[f"results/{name}/report.html"] = html_report(verdict).encode("utf-8")
        verdicts[sut] = verdict["summary"]["verdict"]
        profiles[sut] = verdict["summary"]["profile"]
    files["README.md"] = consumer_readme(dirs, verdicts, profiles).encode("utf-8")

    manifest = _manifest(files)
    bad = schema_rejections(validator("packet_manifest"), manifest, "invalid")
    if bad:  # e.g. a feature file whose name is not a plain token
        raise PacketError(f"the manifest would not match its schema: {bad[0]}")
    files[MANIFEST] = _json_bytes(manifest)
    _stop_on_leaks(files, scanner)
    _write(out_dir, files, tar)
    return BuildResult(out_dir, manifest, verdicts, tar, profiles)


def rules_document() -> dict[str, Any]:
    """The SPEC's rows and rules, in SPEC order, as published in ``rules.json``."""
    return {
        "schema_version": RULES_SCHEMA_VERSION,
        "rules": [{"id": r.id, "group": r.group, "case": r.case, "required_outcome": r.required} for r in RULES],
    }


def result_dir_name(sut: str) -> str:
    """A filesystem-safe directory name for a SUT spec (``a.b:factory`` -> ``a.b-factory``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", sut).strip(".-")[:100] or "sut"


def _result_dirs(suts: Iterable[str]) -> dict[str, str]:
    dirs: dict[str, str] = {}
    taken: dict[str, str] = {}
    for sut in dict.fromkeys(s.strip() for s in suts if s.strip()):
        name = result_dir_name(sut)
        if name.casefold() in taken:
            raise PacketError(f"SUTs {taken[name.casefold()]!r} and {sut!r} would share results/{name}/")
        taken[name.casefold()] = sut
        dirs[sut] = name
    if not dirs:
        raise PacketError("no SUT named")
    return dirs


def _feature_files(feature_dir: Path) -> dict[str, bytes]:
    found = sorted(p for p in feature_dir.rglob("*.feature") if p.is_file())
    if not found:
        raise PacketError(f"no .feature files in {_shown(feature_dir)}")
    return {"features/" + p.relative_to(feature_dir).as_posix(): p.read_bytes() for p in found}


def _schema_files() -> dict[str, bytes]:
    folder = resources.files("pwh").joinpath("schemas")
    entries = sorted((e for e in folder.iterdir() if e.name.endswith(".json")), key=lambda e: e.name)
    return {f"schemas/{e.name}": e.read_bytes() for e in entries}


def _vector_file() -> bytes:
    data = resources.files("pwh").joinpath("vectors", "identity.json").read_bytes()
    if json.loads(data) != build_vectors():
        raise PacketError("the shipped identity vectors differ from the reference profile (pwh vectors --check)")
    return data


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _manifest(files: dict[str, bytes]) -> dict[str, Any]:
    commit, dirty = source_state(project_root())
    return {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "pwh_version": __version__,
        "source_commit": commit,
        "source_dirty": dirty,
        "files": {rel: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)} for rel, data in sorted(files.items())},
        "nondeterministic": [],
    }


def source_state(root: Path) -> tuple[str, bool]:
    """(HEAD commit, tracked files changed) of the checkout pwh runs from, or ("unknown", False).

    Only when ``root`` is itself a work tree's top level: an installed pwh inside some other
    repository must not claim that repository's commit. ``--no-optional-locks``: never take the
    index lock another git command may need.
    """
    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", "--no-optional-locks", "-C", str(root), *args], capture_output=True,
                                  text=True, timeout=30, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout if proc.returncode == 0 else None

    top, head = git("rev-parse", "--show-toplevel"), (git("rev-parse", "HEAD") or "").strip()
    if not top or not _same_dir(Path(top.strip()), root) or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", head):
        return "unknown", False
    status = git("status", "--porcelain", "--untracked-files=no")
    return head, status is None or bool(status.strip())


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _stop_on_leaks(files: dict[str, bytes], scanner: BoundaryScanner) -> None:
    leaks = [leak for rel in sorted(files) for leak in _leaks(rel, files[rel], scanner)]
    if leaks:
        raise PacketLeak(leaks)


def _leaks(rel: str, data: bytes, scanner: BoundaryScanner) -> list[tuple[str, str, str]]:
    shown = _shown_rel(rel, scanner)
    out = [(shown, "name", c) for seg in rel.split("/") for c in {f.category for f in scanner.scan_value(seg)}]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return [*out, (shown, "line 0", "unscannable")]
    return out + [(shown, f.path, f.category) for f in scan_text(text, scanner)]


def _shown_rel(rel: str, scanner: BoundaryScanner) -> str:
    """``rel`` with every segment the scanner flags (or that is not a plain name) withheld."""
    return "/".join(
        seg if re.fullmatch(r"[A-Za-z0-9._-]{1,100}", seg) and not scanner.scan_value(seg) else _WITHHELD
        for seg in rel.split("/")
    )


def _check_target(out_dir: Path, tar: Path | None) -> None:
    """Only an absent or empty directory, or an earlier packet, may be (re)placed by a build."""
    if out_dir.is_symlink():
        raise PacketError(f"{_shown(out_dir)} is a symbolic link; name the directory itself")
    if out_dir.exists() and not out_dir.is_dir():
        raise PacketError(f"{_shown(out_dir)} exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not _is_packet(out_dir):
        raise PacketError(f"{_shown(out_dir)} is not empty and holds no packet; refusing to replace it")
    if tar is not None:
        if tar.is_dir():
            raise PacketError(f"--tar {_shown(tar)} is a directory")
        if tar == out_dir or out_dir in tar.parents:
            raise PacketError("the archive cannot be written inside the packet directory")


def _is_packet(folder: Path) -> bool:
    try:
        manifest = json.loads((folder / MANIFEST).read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(manifest, dict) and manifest.get("schema_version") == MANIFEST_SCHEMA_VERSION


def _write(out_dir: Path, files: dict[str, bytes], tar: Path | None) -> None:
    """Write into a temp dir beside ``out_dir``, then swap it in; on any failure leave no trace."""
    tmp = old = tar_tmp = None
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.building-", dir=out_dir.parent))
        tmp.chmod(0o755)  # mkdtemp's 0700 would make the published packet private
        for rel, data in sorted(files.items()):
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if tar is not None:
            tar.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{tar.name}.building-", dir=tar.parent)
            tar_tmp = Path(name)
            with os.fdopen(fd, "wb") as fh:
                fh.write(tar_bytes(files))
            tar_tmp.chmod(0o644)
        if out_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
            os.rename(out_dir, old / "packet")
        try:
            os.rename(tmp, out_dir)
        except OSError:
            if old is not None:
                os.rename(old / "packet", out_dir)
            raise
        tmp = None
        if tar_tmp is not None and tar is not None:
            os.replace(tar_tmp, tar)
            tar_tmp = None
    except OSError as exc:
        raise PacketError(f"cannot write the packet: {exc.strerror or type(exc).__name__}") from None
    finally:
        for leftover in (tmp, old):
            if leftover is not None:
                shutil.rmtree(leftover, ignore_errors=True)
        if tar_tmp is not None:
            tar_tmp.unlink(missing_ok=True)


def tar_bytes(files: dict[str, bytes]) -> bytes:
    """The packet as a reproducible .tar.gz: sorted entries under ``pwh-packet/``, mtime 0, owner
    0:0 with no names, modes 0755/0644; gzip header with mtime 0 and no file name."""
    entries: dict[str, bytes | None] = {TAR_ROOT: None}
    for rel, data in files.items():
        parts = rel.split("/")
        for i in range(1, len(parts)):
            entries[f"{TAR_ROOT}/{'/'.join(parts[:i])}"] = None
        entries[f"{TAR_ROOT}/{rel}"] = data
    raw = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as archive:
            for name in sorted(entries):
                content = entries[name]
                info = tarfile.TarInfo(name)
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                if content is None:
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    archive.addfile(info)
                else:
                    info.mode, info.size = 0o644, len(content)
                    archive.addfile(info, io.BytesIO(content))
    return raw.getvalue()


def consumer_readme(dirs: dict[str, str], verdicts: dict[str, str], profiles: dict[str, str] | None = None) -> str:
    """The packet's own README: what it is and how to judge another implementation with it.

    The text is ``consumer_readme.md.tmpl`` (package data), a :class:`string.Template` with
    ``$version``, ``$rows`` (the verdict table's rows) and ``$baseline`` (the results directory
    to compare with); a literal dollar sign there is written ``$$``.
    """
    profiles = profiles or {}
    rows = "\n".join(f"| `{sut}` | `results/{name}/` | {verdicts[sut].upper()} | {profiles.get(sut, '?').upper()} |"
                     for sut, name in dirs.items())
    baseline = dirs.get("reference", next(iter(dirs.values())))
    text = resources.files("pwh._harness.packet").joinpath("consumer_readme.md.tmpl").read_text(encoding="utf-8")
    return Template(text).substitute(version=__version__, rows=rows, baseline=baseline)


# --------------------------------------------------------------------------------------------
# Verify
# --------------------------------------------------------------------------------------------


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


def verify_packet(packet: Path, *, private_names: Iterable[str] = ()) -> VerifyReport:
    """Check a packet directory against its manifest; never raises for bad input.

    Exit codes (:attr:`VerifyReport.exit_code`, for ``pwh packet verify``): 0 verified; 1 problems
    found, listed per file; 2 not a packet (not a directory, no readable manifest.json).
    Every file is read once, in chunks: memory stays bounded by the limits above, not by the
    files' sizes; the walk is iterative and bounded in depth and entries.
    """
    packet = Path(packet)
    report = VerifyReport(_shown(packet))
    scanner = BoundaryScanner(private_names=private_names)
    if not packet.is_dir():
        report.not_a_packet = "no such directory" if not packet.exists() else "not a directory"
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
    if manifest_data != _json_bytes(manifest):
        problems.append((MANIFEST, "invalid", "not in the canonical form (sorted keys, 2-space indent, final newline)"))
    listed: dict[str, Any] = manifest["files"]
    nondet = manifest.get("nondeterministic")
    for rel in nondet if isinstance(nondet, list) else []:
        if not isinstance(rel, str) or rel not in listed:
            problems.append((MANIFEST, "invalid", "nondeterministic names a file that files does not list"))

    present, unsafe = _walk(packet)
    problems += [(_shown_rel(rel, scanner), "unsafe", why) for rel, why in unsafe.items()]
    problems += read.leaks
    for i, rel in enumerate(sorted(listed)):
        if not _RELPATH.fullmatch(rel) or rel == MANIFEST:
            problems.append((f"manifest files entry {i}", "unsafe", "not a plain relative path inside the packet"))
            continue
        if rel in unsafe:
            continue
        if rel not in present:
            problems.append((_shown_rel(rel, scanner), "missing", "listed in the manifest, not in the packet"))
            continue
        entry = listed[rel]
        expected = entry if isinstance(entry, dict) and isinstance(entry.get("sha256"), str) and isinstance(entry.get("size"), int) else None
        problems += _verify_one(packet, rel, present[rel], scanner, expected)
        report.files_checked += 1
    for rel in sorted(set(present) - set(listed)):
        problems.append((_shown_rel(rel, scanner), "extra", "in the packet, not in the manifest"))
        problems += _verify_one(packet, rel, present[rel], scanner, None)
    report.files_checked += 1  # the manifest itself
    report.problems = sorted(set(problems))
    return report


@dataclass
class _Read:
    """One file read in chunks: its size, its SHA-256 (when asked), its boundary findings as
    problems, and its bytes when it was small enough to keep (``None`` otherwise)."""

    size: int
    sha256: str | None
    leaks: list[Problem]
    data: bytes | None


def _read_file(path: Path, scanner: BoundaryScanner, rel: str, *, keep: int = 0, hash_size: int | None = None,
               identity: tuple[int, int] | None = None) -> _Read:
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
        lines = _LineScanner(rel, scanner)
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


class _NotRegular(OSError):
    """The path is not (or is no longer) the regular file the walk found."""


class _LineScanner:
    """The boundary scan of a file fed in chunks: whole lines are decoded (strict UTF-8) and
    scanned in batches, their numbers carried over; a line longer than :data:`MAX_LINE_BYTES` is
    reported unscannable and skipped, and the scan stops after :data:`MAX_SCANNED_BYTES`."""

    def __init__(self, rel: str, scanner: BoundaryScanner) -> None:
        self.rel = rel
        self.shown = _shown_rel(rel, scanner)
        self.scanner = scanner
        self.found: set[tuple[str, str]] = set()
        self.pending = b""
        self.line = 0  # lines scanned so far
        self.seen = 0
        self.skipping = False  # inside an over-long line
        self.done = False
        self.name_findings = [(self.shown, "name", c) for seg in rel.split("/")
                              for c in {f.category for f in scanner.scan_value(seg)}]

    def feed(self, chunk: bytes) -> None:
        if self.done:
            return
        over = self.seen + len(chunk) > MAX_SCANNED_BYTES
        if over:
            chunk = chunk[: MAX_SCANNED_BYTES - self.seen]
        self.seen += len(chunk)
        if self.skipping:
            cut = chunk.find(b"\n")
            chunk = chunk[cut + 1:] if cut >= 0 else b""
            if cut >= 0:
                self.skipping = False
                self.line += 1
        if not self.skipping:
            data = self.pending + chunk
            cut = data.rfind(b"\n")
            whole, self.pending = (data[: cut + 1], data[cut + 1:]) if cut >= 0 else (b"", data)
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
            (self.shown, "leak", f"{line}: {cat}") for line, cat in sorted(self.found)]


def _verify_one(packet: Path, rel: str, identity: tuple[int, int], scanner: BoundaryScanner,
                expected: dict[str, Any] | None) -> list[Problem]:
    """Size, hash (when the manifest lists it), boundary scan and well-formedness of one file."""
    shown = _shown_rel(rel, scanner)
    parse = rel.endswith((".json", ".xml"))
    try:
        read = _read_file(packet / rel, scanner, rel, keep=MAX_PARSED_BYTES if parse else 0,
                          hash_size=expected["size"] if expected is not None else None, identity=identity)
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
    if parse:
        if read.data is None:
            out.append((shown, "invalid", f"larger than {MAX_PARSED_BYTES // _MIB} MiB: too large to check"))
        else:
            out += _check_file(rel, read.data, scanner)
    return out


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
    shown = _shown_rel(rel, scanner)
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


def _shown(path: Path) -> str:
    """A path as the user may see it: relative to the working directory, else its last part."""
    try:
        return Path(os.path.abspath(path)).relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return Path(path).name or str(path)


# --------------------------------------------------------------------------------------------
# Command line: the lead adds `add_packet_commands(sub)` in pwh._cli._parser().
# --------------------------------------------------------------------------------------------


def add_packet_commands(subparsers: Any) -> None:
    """``pwh packet build DIR [--sut NAME ...] [--tar PATH]`` and ``pwh packet verify DIR``.

    Both read the private-name deny-list from ``PWH_PRIVATE_NAMES`` (comma-separated).
    build: 0 built; 1 a boundary finding stopped it (nothing written), or the packet was written
    but the reference itself did not pass (not fit to attach to the RFC); 2 it could not build.
    verify: 0 verified; 1 problems found, listed per file; 2 not a packet.
    """
    packet = subparsers.add_parser("packet", help="build or verify the public test packet")
    sub = packet.add_subparsers(title="packet commands")
    build = sub.add_parser("build", help="run the gate and write the public test packet to DIR")
    build.add_argument("dir", metavar="DIR", help="the packet directory (created, or an earlier packet replaced)")
    build.add_argument("--sut", action="append", metavar="NAME",
                       help="a SUT whose results the packet publishes (repeatable; default: reference)")
    build.add_argument("--tar", metavar="PATH", help="also write the packet as one reproducible .tar.gz")
    build.set_defaults(handler=_build_command)
    verify = sub.add_parser("verify", help="check a packet against its manifest, the boundary scan and its schemas")
    verify.add_argument("dir", metavar="DIR", help="the packet directory")
    verify.set_defaults(handler=_verify_command)


def _private_names() -> list[str]:
    return [n.strip() for n in os.environ.get("PWH_PRIVATE_NAMES", "").split(",") if n.strip()]


def _build_command(args: argparse.Namespace) -> int:
    suts = args.sut or ["reference"]
    print(f"pwh packet build: running the gate for {', '.join(suts)}", flush=True)
    try:
        result = build_packet(Path(args.dir), suts, tar_path=Path(args.tar) if args.tar else None,
                              gate=run_gate, private_names=_private_names())
    except PacketLeak as exc:
        print(f"pwh: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except (PacketError, GateError) as exc:
        print(f"pwh: error: {exc}", file=sys.stderr)
        return EXIT_NOT_A_PACKET
    for sut, verdict in result.verdicts.items():
        print(f"  {sut}: RFC {verdict.upper()}, profile {result.profiles.get(sut, '?').upper()}")
    where = f" and {_shown(result.tar_path)}" if result.tar_path else ""
    print(f"pwh packet build: wrote {len(result.files)} files to {_shown(result.out_dir)}{where}")
    # Other SUTs' failures are what the packet publishes (LoopX's divergences); the reference's
    # own failure means the matrix or the reference is broken, and the packet must not go out.
    unfit = [sut for sut, verdict in result.verdicts.items() if sut in REFERENCE_SUTS and verdict != "pass"]
    for sut in unfit:
        print(f"pwh: the {sut} verdict is {result.verdicts[sut].upper()}: this packet is not fit to attach to the RFC "
              f"(see results/{result_dir_name(sut)}/report.md)", file=sys.stderr)
    return EXIT_PROBLEMS if unfit else EXIT_VERIFIED


def _verify_command(args: argparse.Namespace) -> int:
    report = verify_packet(Path(args.dir), private_names=_private_names())
    (sys.stdout if report.ok else sys.stderr).write(report.render())
    return report.exit_code

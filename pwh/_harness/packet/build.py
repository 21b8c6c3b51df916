"""``pwh packet build``: run the gate for each SUT and write the public test packet.

The packet is what RFC promotion publishes: the Gherkin matrix, the JSON schemas, the identity
test vectors, the rows and rules, the gate's results for the named SUTs, and ``index.html``, the
front page (every verdict as one row × SUT matrix page, its cells linking to the failure cards on
it), plus a manifest of every file's SHA-256 and size. Two builds from the same commit are byte-identical (no times,
absolute paths, host or user names; sorted everywhere), so a rebuild proves a published packet.

Every file is scanned with the public-boundary scanner *before* anything is written; a finding
stops the build (:class:`PacketLeak`: file, line and category, never the value). The packet is
built in a temporary directory beside the target and renamed into place, so a failed build leaves
the previous packet (or nothing) behind, never half a packet.

Apart from :mod:`.verify` because building runs the gate and verifying must not load it.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pwh._core.boundary import BoundaryScanner
from pwh._core.schemas import schema_rejections, validator
from pwh._harness.gate import GateError, GateRun, features_digest, locate, project_root, pwh_commit, run_gate
from pwh._harness.packet._common import (
    FRONT_PAGE,
    MANIFEST,
    MANIFEST_SCHEMA_VERSION,
    PacketError,
    PacketLeak,
    consumer_readme,
    front_page,
    json_bytes,
    result_dir_name,
    shown_rel,
)
from pwh._harness.packet.wheel import WheelError, build_wheel, packet_wheel_path, wheel_problems
from pwh._harness.paths import shown
from pwh._harness.report import cucumber_json, html_report, junit_xml, markdown_report, verdict_json
from pwh._harness.rulebook import rules_document
from pwh._harness.text_scan import scan_text
from pwh._harness.vectors import build_vectors
from pwh._version import __version__

TAR_ROOT = "pwh-packet"  # the one top-level directory inside the .tar.gz

Gate = Callable[..., GateRun]


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


def build_packet(
    out_dir: Path,
    suts: list[str],
    *,
    tar_path: Path | None = None,
    gate: Gate = run_gate,
    private_names: Iterable[str] = (),
    features: Path | None = None,
    saved: Mapping[str, Mapping[str, Any]] | None = None,
) -> BuildResult:
    """Run the gate for each SUT and write the packet to ``out_dir`` (replacing an earlier packet).

    ``gate(sut, features=..., progress=False)`` returns a :class:`GateRun` (injectable so tests
    need not rerun the matrix). ``features`` defaults to the project's ``features/``. ``saved``:
    verdicts already gated (``pwh gate --json``), by SUT; those SUTs are not gated again, and each
    must be a whole run of these features by this pwh (:func:`check_saved_verdict`).
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
        raise PacketError(f"features directory not found: {shown(feature_dir)}")
    saved = dict(saved or {})
    dirs = _result_dirs([*(suts or ([] if saved else ["reference"])), *saved])
    for sut, given in saved.items():
        check_saved_verdict(sut, given, feature_dir)
    if "reference" not in dirs.values():
        raise PacketError("a packet compares every SUT against the reference: add --sut reference")

    scanner = BoundaryScanner(private_names=private_names)
    files: dict[str, bytes] = {}
    try:
        files.update(_feature_files(feature_dir))
        files.update(_schema_files())
        files["vectors/identity.json"] = _vector_file()
    except OSError as exc:
        raise PacketError(f"cannot read the packet's sources: {exc.strerror or type(exc).__name__}") from None
    files["rules.json"] = json_bytes(rules_document())
    _stop_on_leaks(files, scanner)  # before the gate runs: a planted secret fails fast
    wheel = _wheel_file(scanner)  # pwh itself, for an outsider to install offline
    verdicts: dict[str, str] = {}
    profiles: dict[str, str] = {}
    published: dict[str, dict[str, Any]] = {}  # results directory -> its verdict, for the front page
    for sut, name in dirs.items():
        if sut in saved:
            verdict: dict[str, Any] = copy.deepcopy(dict(saved[sut]))
        else:
            try:
                run = gate(sut, features=str(feature_dir), progress=False)
            except GateError as exc:
                raise PacketError(f"the gate could not run for {sut!r}: {exc}") from None
            verdict = run.verdict()
        if not os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
            verdict["run"]["generated_at"] = None  # two builds of one tree give the same bytes
        bad = schema_rejections(validator("gate_verdict"), verdict, "invalid")
        if bad:
            raise PacketError(f"the gate's verdict for results/{name} does not match the gate_verdict schema: {bad[0]}")
        files[f"results/{name}/verdict.json"] = verdict_json(verdict).encode("utf-8")
        files[f"results/{name}/junit.xml"] = junit_xml(verdict).encode("utf-8")
        files[f"results/{name}/cucumber.json"] = cucumber_json(verdict).encode("utf-8")
        files[f"results/{name}/report.md"] = markdown_report(verdict).encode("utf-8")
        files[f"results/{name}/report.html"] = html_report(verdict, features_href="../../features/").encode("utf-8")
        verdicts[sut] = verdict["summary"]["verdict"]
        profiles[sut] = verdict["summary"]["profile"]
        published[name] = verdict
    files["README.md"] = consumer_readme(dirs, verdicts, profiles).encode("utf-8")
    files[FRONT_PAGE] = front_page(published).encode("utf-8")
    files[packet_wheel_path(__version__)] = wheel

    manifest = _manifest(files)
    bad = schema_rejections(validator("packet_manifest"), manifest, "invalid")
    if bad:  # e.g. a feature file whose name is not a plain token
        raise PacketError(f"the manifest would not match its schema: {bad[0]}")
    files[MANIFEST] = json_bytes(manifest)
    _stop_on_leaks(files, scanner)
    _write(out_dir, files, tar)
    return BuildResult(out_dir, manifest, verdicts, tar, profiles)


def check_saved_verdict(sut: str, verdict: Mapping[str, Any], feature_dir: Path) -> None:
    """A saved verdict stands in for a gate run only when it is one: a whole run (every row, no
    selection) of exactly these features, by this pwh (the same commit when both know theirs, else
    the same version). Anything else is :class:`PacketError` naming what differs."""
    run = verdict.get("run") or {}
    if verdict.get("sut") != sut:
        raise PacketError(f"the saved verdict for {sut!r} judges another SUT")
    if run.get("partial") or run.get("selection") or run.get("rows") != "all":
        raise PacketError(f"the saved verdict for {sut!r} is a partial run: a packet publishes whole runs (gate it without -k/-m/--rows)")
    if run.get("features_digest") != features_digest(feature_dir):
        raise PacketError(f"the saved verdict for {sut!r} was gated on other features than the packet's: gate it again")
    here = pwh_commit(project_root())
    if here is not None and run.get("pwh_commit") != here:
        raise PacketError(f"the saved verdict for {sut!r} was gated by another pwh commit than this one: gate it again")
    if here is None and verdict.get("pwh_version") != __version__:
        raise PacketError(f"the saved verdict for {sut!r} was gated by pwh {verdict.get('pwh_version')}, this is {__version__}")


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
        raise PacketError(f"no .feature files in {shown(feature_dir)}")
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
            proc = subprocess.run(
                ["git", "--no-optional-locks", "-C", str(root), *args], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
            )
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


def _wheel_file(scanner: BoundaryScanner) -> bytes:
    """pwh's wheel from the source tree it runs from, checked as verify will check it."""
    try:
        _, data = build_wheel(project_root())
    except (WheelError, OSError) as exc:
        raise PacketError(f"cannot build pwh's wheel for the packet: {exc}") from None
    problems = wheel_problems(data, scanner)
    if any(kind == "leak" for kind, _ in problems):
        raise PacketLeak([(packet_wheel_path(__version__), "a member", "private_name")])
    if problems:
        raise PacketError(f"pwh's wheel is not intact: {problems[0][1]}")
    return data


def _stop_on_leaks(files: dict[str, bytes], scanner: BoundaryScanner) -> None:
    wheel = packet_wheel_path(__version__)  # code, not data: checked by wheel_problems, never by the text scan
    leaks = [leak for rel in sorted(files) if rel != wheel for leak in _leaks(rel, files[rel], scanner)]
    if leaks:
        raise PacketLeak(leaks)


def _leaks(rel: str, data: bytes, scanner: BoundaryScanner) -> list[tuple[str, str, str]]:
    shown = shown_rel(rel, scanner)
    out = [(shown, "name", c) for seg in rel.split("/") for c in {f.category for f in scanner.scan_value(seg)}]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return [*out, (shown, "line 0", "unscannable")]
    return out + [(shown, f.path, f.category) for f in scan_text(text, scanner)]


def _check_target(out_dir: Path, tar: Path | None) -> None:
    """Only an absent or empty directory, or an earlier packet, may be (re)placed by a build."""
    if out_dir.is_symlink():
        raise PacketError(f"{shown(out_dir)} is a symbolic link; name the directory itself")
    if out_dir.exists() and not out_dir.is_dir():
        raise PacketError(f"{shown(out_dir)} exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not _is_packet(out_dir):
        raise PacketError(f"{shown(out_dir)} is not empty and holds no packet; refusing to replace it")
    if tar is not None:
        if tar.is_dir():
            raise PacketError(f"--tar {shown(tar)} is a directory")
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

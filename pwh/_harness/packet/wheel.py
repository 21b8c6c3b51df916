"""pwh as a wheel, built from the source tree it runs from, byte for byte the same on every build.

An outsider who receives the packet installs pwh from it, offline (``pip install --no-index
PWH.whl`` beside its dependencies): the packet names its source commit, and this is that commit's
code. The wheel is written here rather than by a build backend because a packet build must run
offline and give the same bytes every time: a backend needs setuptools from the package index (a
build isolation download) and stamps each member with the time. A wheel is a zip of the installed
files plus a ``.dist-info`` folder (PEP 427, core metadata 2.1); this writes exactly that from the
package and data lists ``pyproject.toml`` keeps, members sorted, every time stamp 1980-01-01.

The labelled credential corpus (``pwh/corpus/``) stays out: the packet is public, and 500
credential-shaped strings in it would trip every secret scanner it meets. ``pwh corpus FILE``
still measures the scanner on a corpus the user gives.
"""

from __future__ import annotations

import base64
import hashlib
import io
import tomllib
import zipfile
from pathlib import Path
from typing import Any

__all__ = ["EXCLUDED_DATA", "WheelError", "build_wheel", "packet_wheel_path", "wheel_name", "wheel_problems"]

EXCLUDED_DATA = ("pwh/corpus/",)  # source paths (posix) never put in the packet's wheel
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip can hold: no build time in the bytes
MAX_MEMBERS = 5000  # a packet's wheel with more members, or more bytes unpacked, is refused unread
MAX_UNPACKED_BYTES = 64 * 1024 * 1024


def packet_wheel_path(version: str) -> str:
    """Where a packet carries the wheel of the pwh ``version`` that built it."""
    return f"dist/pwh-{version}-py3-none-any.whl"


class WheelError(Exception):
    """The source tree cannot make a wheel (no pyproject.toml beside the package, or a bad one)."""


def _project(root: Path) -> dict[str, Any]:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise WheelError(
            f"no readable pyproject.toml in pwh's source tree ({type(exc).__name__}): a wheel is built from a checkout"
        ) from None


def wheel_name(root: Path) -> str:
    """``pwh-VERSION-py3-none-any.whl`` for the tree at ``root``."""
    project = _project(root)["project"]
    return f"{_normal(project['name'])}-{project['version']}-py3-none-any.whl"


def _normal(name: str) -> str:
    return name.replace("-", "_").lower()


def _members(root: Path, config: dict[str, Any]) -> list[tuple[str, Path]]:
    """(path in the wheel, source file) for every module and data file the install holds: each
    listed package's own ``.py`` files and its ``package-data`` globs, the excluded data left out."""
    package_dir: dict[str, str] = config.get("package-dir", {})
    data: dict[str, list[str]] = config.get("package-data", {})
    out: dict[str, Path] = {}
    for package in config["packages"]:
        source = root / package_dir.get(package, package.replace(".", "/"))
        target = package.replace(".", "/")
        found = [*source.glob("*.py"), *(path for pattern in data.get(package, []) for path in source.glob(pattern))]
        for path in found:
            if path.is_file() and not path.relative_to(root).as_posix().startswith(EXCLUDED_DATA):
                out[f"{target}/{path.relative_to(source).as_posix()}"] = path
    return sorted(out.items())


def _metadata(project: dict[str, Any]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '')}",
    ]
    license_text = project.get("license", {}).get("text") if isinstance(project.get("license"), dict) else None
    if license_text:
        lines.append(f"License: {license_text}")
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, wants in sorted(project.get("optional-dependencies", {}).items()):
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {w}; extra == "{extra}"' for w in wants]
    return "\n".join(lines) + "\n"


def _record_line(name: str, data: bytes) -> str:
    return f"{name},sha256={_b64_digest(data)},{len(data)}"


def build_wheel(root: Path) -> tuple[str, bytes]:
    """The wheel's file name and bytes for the source tree at ``root`` (the folder holding
    ``pyproject.toml``); the same tree gives the same bytes."""
    document = _project(root)
    project, config = document["project"], document.get("tool", {}).get("setuptools", {})
    if "packages" not in config:
        raise WheelError("pyproject.toml lists no packages under [tool.setuptools]")
    dist_info = f"{_normal(project['name'])}-{project['version']}.dist-info"
    files: list[tuple[str, bytes]] = [(name, path.read_bytes()) for name, path in _members(root, config)]
    scripts = project.get("scripts", {})
    files.append((f"{dist_info}/METADATA", _metadata(project).encode("utf-8")))
    files.append((f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: pwh\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    if scripts:
        entry = "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in sorted(scripts.items()))
        files.append((f"{dist_info}/entry_points.txt", entry.encode("utf-8")))
    record = "".join(_record_line(name, data) + "\n" for name, data in files) + f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode("utf-8")))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data, compresslevel=9)
    return wheel_name(root), buffer.getvalue()


def wheel_problems(data: bytes, scanner: Any) -> list[tuple[str, str]]:
    """(kind, detail) for each way ``data`` is not an intact wheel a packet may carry: not a zip,
    too large unpacked, a member outside its folder, a member its RECORD does not list or lists
    with another hash or size; and a ``leak`` for each member holding one of ``scanner``'s private
    names. Only the deny-list is looked for: the wheel is pwh's own public code, which names paths,
    hosts and credential shapes in its detectors and would fail the heuristic scan line by line."""
    # A packet's wheel may be any bytes at all: whatever the zip reader or a decompressor raises on
    # them (zlib.error, EOFError, NotImplementedError for an unknown method, struct.error on a torn
    # header...) means the wheel is not intact, so every failure to read it answers ``invalid``.
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except Exception:
        return [("invalid", "not a wheel (not a zip archive)")]
    if len(infos) > MAX_MEMBERS or sum(i.file_size for i in infos) > MAX_UNPACKED_BYTES:
        return [("invalid", "too large unpacked to check")]
    names = [i.filename for i in infos]
    bad = [n for n in names if n.startswith(("/", "\\")) or ".." in n.split("/") or "\\" in n or ":" in n]
    if bad:
        return [("unsafe", "a member outside the wheel's own folders")]
    records = [n for n in names if n.endswith(".dist-info/RECORD") and n.count("/") == 1]
    if len(records) != 1:
        return [("invalid", "no RECORD of its members")]
    problems: list[tuple[str, str]] = []
    try:
        listed = {}
        for line in archive.read(records[0]).decode("utf-8").splitlines():
            name, digest, size = line.rsplit(",", 2)
            listed[name] = (digest, size)
        for info in infos:
            member = archive.read(info)
            if info.filename != records[0]:
                if listed.get(info.filename) != (f"sha256={_b64_digest(member)}", str(len(member))):
                    problems.append(("altered", f"{info.filename} differs from the wheel's RECORD"))
            if scanner.has_private_name(member.decode("utf-8", errors="replace")) or scanner.has_private_name(info.filename):
                problems.append(("leak", "a member holds a private name (private_name)"))
        if set(listed) != set(names):
            problems.append(("altered", "the wheel's RECORD and its members differ"))
    except Exception:  # a member that cannot be read or decoded (see above): never a traceback, never a pass
        return [("invalid", "not an intact wheel")]
    return sorted(set(problems))


def _b64_digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")

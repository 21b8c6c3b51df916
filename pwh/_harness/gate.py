"""``pwh gate``: run the Gherkin matrix against one SUT and turn the run into a verdict per row.

The scenarios run in a child pytest process (so the SUT's imports, threads and temp files die
with it, and coverage can measure from the first line); the gate plugin inside it writes one JSON
file of per-scenario results, from which every output here is built.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pwh._harness.gate_error import GateError
from pwh._harness.judging import judge_scenario, rows_of, summarize
from pwh._harness.paths import INSTALLED_FEATURES, fast_tmp, shown
from pwh._harness.preflight import matrix_refusal
from pwh._harness.rules import RULE_IDS
from pwh._version import __version__

VERDICT_SCHEMA_VERSION = "pwh_gate_verdict_v1"

# The reference modules whose coverage by the matrix alone is measured (issue: contracts,
# identity, journal, dispatcher).
COVERED_MODULES: tuple[str, ...] = (
    "pwh/_core/dispatcher.py",
    "pwh/_core/journal.py",
    "pwh/_core/contracts.py",
    "pwh/_core/schemas.py",
    "pwh/_core/identity.py",
    "pwh/_core/canonical.py",
    "pwh/_core/registry.py",
    "pwh/_core/process_runner.py",  # the default runner (its worker half, _process_worker.py, runs out of the host's sight)
)


@dataclass
class GateRun:
    sut: str
    scenarios: list[dict[str, Any]]
    collection_errors: list[str] = field(default_factory=list)
    coverage: dict[str, Any] | None = None
    returncode: int = 0
    selected: list[str] | None = None  # rows the run was limited to (--rows), else every row
    exitfirst: bool = False  # the run stopped at its first failing scenario (-x): later ones never ran
    covers: dict[str, Any] = field(default_factory=dict)  # what the run was: features digest, commit, SUT version, time
    selection: dict[str, Any] | None = None  # -k, tags, FEATURE[:LINE]: which scenarios ran, when not all

    def judged(self) -> list[dict[str, Any]]:
        """Every scenario with its two verdicts, whom it counts for and the seam it went through
        (see :func:`judge_scenario`, :func:`seam_taken`)."""
        return [seam_taken(judge_scenario(s)) for s in self.scenarios]

    def rows_run(self) -> list[str] | None:
        """The rows this verdict covers: ``--rows``; under a scenario selection, the rows whose
        scenarios ran (the others say nothing); else every row (``None``)."""
        if self.selected is not None or self.selection is None:
            return self.selected
        ran = {t for s in self.scenarios for t in s.get("tags", [])}
        return [r for r in RULE_IDS if r in ran]

    def verdict(self) -> dict[str, Any]:
        judged = self.judged()
        selected = self.rows_run()
        rows = rows_of(judged, selected)
        out: dict[str, Any] = {
            "schema_version": VERDICT_SCHEMA_VERSION,
            "pwh_version": __version__,
            "sut": self.sut,
            "rows": rows,
            "summary": summarize(rows, judged, bool(self.collection_errors)),
            "scenarios": [_public_scenario(s) for s in judged],
        }
        if selected is not None:
            out["selected_rows"] = list(selected)
        stopped = self.exitfirst and any(s["outcome"] == "failed" for s in self.scenarios)
        if stopped:
            out["stopped_at_first_failure"] = True
        out["run"] = {
            "rows": list(selected) if selected is not None else "all",
            "partial": selected is not None or stopped or self.selection is not None,
            "selection": self.selection,
            "pwh_version": __version__,
            **{k: self.covers.get(k) for k in ("features_digest", "pwh_commit", "sut_version", "generated_at")},
        }
        if self.collection_errors:
            out["collection_errors"] = self.collection_errors
        if self.coverage is not None:
            out["coverage"] = self.coverage
        return out


def seam_taken(judged: dict[str, Any]) -> dict[str, Any]:
    """``judged`` with the seam it really went through. :func:`judge_scenario` names the turn
    seam for every seed-003 scenario counted for the SUT, a skip or failure included; but only a
    scenario that called an operation of the SUT's own turn seam (there is one only when the
    adapter offers it) went through it. Any other skip or failure came through the dispatcher
    seam (the template adapter's ``Unsupported`` dispatch, say), and is named so. A matrix
    scenario that drove the implementation's writeback boundary is named ``writeback`` by
    :func:`judge_scenario` already (an operation ``writeback.*`` in its judgement)."""
    if judged.get("seam") != "turn":
        return judged
    operations = (judged.get("judgement") or {}).get("operations", [])
    if any(str(op).startswith("turn.") for op in operations):
        return judged
    return {**judged, "seam": "dispatcher"}


def _public_scenario(s: dict[str, Any]) -> dict[str, Any]:
    keep = (
        "id",
        "tags",
        "feature",
        "line",
        "scenario",
        "params",
        "outcome",
        "rfc",
        "profile",
        "counts_for",
        "seam",
        "divergences",
        "expected",
        "seen",
        "difference",
        "clause",
        "reason",
        "failed_step",
        "steps",
    )
    return {k: s[k] for k in keep if k in s}


def project_root() -> Path:
    return Path(__file__).resolve().parents[2]


def locate(features: str | None) -> tuple[Path, Path]:
    """The features directory and the scenarios bindings to run."""
    root = project_root()
    feature_dir = Path(features).resolve() if features else root / "features"
    if not features and not feature_dir.is_dir() and (root / INSTALLED_FEATURES).is_dir():
        feature_dir = root / INSTALLED_FEATURES  # a plain (non-editable) install: the wheel's copy
    bindings = root / "scenarios" / "test_matrix.py"
    if not feature_dir.is_dir():
        raise GateError(f"features directory not found: {shown(feature_dir)} (pass --features DIR)")
    if not bindings.is_file():
        raise GateError("the scenario bindings (scenarios/test_matrix.py) are not installed beside pwh")
    return feature_dir, bindings


def run_gate(
    sut: str,
    *,
    features: str | None = None,
    coverage: bool = False,
    progress: bool = True,
    rows: list[str] | None = None,
    durable: bool = False,
    exitfirst: bool = False,
    keyword: str | None = None,
    tags: str | None = None,
    scenarios: list[Pick] | None = None,
    jobs: int | None = None,
) -> GateRun:
    """Run the matrix against ``sut`` in child pytest processes and collect their results.
    ``jobs`` child processes (default: one per core; :func:`default_jobs`) each run a share of the
    scenarios, whose records are merged back into the order one serial run has (``jobs=1``);
    ``coverage`` and ``exitfirst`` always run in one child (one coverage file; "stopped at the
    first failure" means the first in run order). ``keyword`` (pytest's ``-k``), ``tags`` (a tag expression, pytest's ``-m``; ``@M06`` reads as
    ``M06``) and ``scenarios`` (:class:`Pick`, resolved by :func:`picks_at`) narrow the run: the
    verdict is then partial and says which selection made it."""
    keyword = keyword_expression(keyword)
    marker_expr = tag_expression(tags)
    feature_dir, bindings = locate(features)
    sut_dir, sut_version = _check_sut_loads(sut)
    root = project_root()
    covers = {
        "features_digest": features_digest(feature_dir),
        "pwh_commit": pwh_commit(root),
        "sut_version": sut_version,
        "generated_at": generated_at(),
    }
    shards = 1 if coverage or exitfirst else max(1, jobs if jobs is not None else default_jobs())
    with tempfile.TemporaryDirectory(prefix="pwh-gate-", dir=fast_tmp()) as tmp:
        data_file = Path(tmp) / "coverage.data"
        run_dir = _row_files(feature_dir, rows, Path(tmp)) if rows and not coverage else feature_dir
        pytest_args = [
            str(bindings),
            "-p",
            "pytest_bdd.plugin",
            "-p",
            "pwh._harness.gate_plugin",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:terminal",
            "-o",
            f"bdd_features_base_dir={run_dir}",
            "--rootdir",
            str(root),
            "-W",
            "ignore::DeprecationWarning",
        ]
        marks = [f"({' or '.join(_marker_expr(r) for r in rows)})"] if rows else []
        if marker_expr:
            marks.append(f"({marker_expr})")
        if marks:
            pytest_args += ["-m", " and ".join(marks)]
        if keyword:
            pytest_args += ["-k", keyword]
        if scenarios:
            # In a file, not argv: thousands of picks (--failed-in) would pass the kernel's argument limit (E2BIG).
            select = Path(tmp) / "select.json"
            select.write_text(json.dumps([[p.feature, p.line, p.example] for p in scenarios]), "utf-8")
            pytest_args += ["--pwh-select", "@" + str(select)]
        if exitfirst:
            pytest_args.append("-x")
        # Only the plugins the matrix needs: no third-party plugin installed on the machine may
        # change how the scenarios run or what they report.
        env = {
            **os.environ,
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PWH_SUT": sut,
            "PWH_SQLITE_SYNCHRONOUS": "FULL" if durable else "NORMAL",
            "PWH_FEATURES": str(run_dir),
            "PWH_FEATURES_ROOT": str(run_dir.parent),
            **child_import_env(sut_dir),
        }
        children: list[_Child] = []
        claims = None
        if shards > 1:
            claims = Claims.create(Path(tmp) / "claims", 0)  # the first shard's PID once it runs
        for index in range(shards):
            # Each shard its own folder (its scenarios' temp dirs, its SUT's files): nothing is shared but the features.
            own = Path(tmp) / f"shard-{index}" if shards > 1 else Path(tmp)
            own.mkdir(exist_ok=True)
            args = [
                *pytest_args,
                "--pwh-results",
                str(own / "results.json"),
                "--pwh-progress",
                ("relay" if shards > 1 else "1") if progress else "0",
                "--basetemp",
                str(own / "scenarios"),
            ]
            # The whole matrix is checked as `pwh scenarios check` would, in the child, which has
            # imported the step library anyway, before any scenario runs (also under --rows). With
            # shards, the first checks it and the others wait for its answer before they take a
            # scenario from the shared queue (the claims file): none runs a scenario of a matrix
            # refused, and the check (a third of a second) is made once.
            if index == 0:
                args += ["--pwh-preflight", str(feature_dir)]
            if claims is not None:
                args += ["--pwh-shard", f"{index}/{shards}", "--pwh-claims", str(claims.path)]
            if coverage:
                cmd = [
                    sys.executable,
                    "-m",
                    "coverage",
                    "run",
                    "--branch",
                    f"--data-file={data_file}",
                    f"--include={','.join(str(root / m) for m in COVERED_MODULES)}",
                    "-m",
                    "pytest",
                    *args,
                ]
            else:
                cmd = [sys.executable, "-m", "pytest", *args]
            children.append(_Child(cmd, {**env, "TMPDIR": str(own)}, own / "results.json"))
        if shards == 1:
            returncodes = [run_child(children[0].cmd, env=children[0].env, cwd=root).returncode]
        else:
            returncodes = _run_children(children, cwd=root, progress=progress, claims=claims)
        returncode = _merged_returncode(returncodes)
        for child, code in zip(children, returncodes, strict=True):
            if not child.results.exists():
                raise GateError(f"the scenario run ended without results (pytest exit {code})")
        payload = _merged_payload([json.loads(child.results.read_text("utf-8")) for child in children])
        if payload.get("matrix_problems"):
            raise GateError(matrix_refusal(payload["matrix_problems"]))
        if payload.get("protocol_errors"):  # the adapter's fault: no verdict on the RFC from this run
            errors = payload["protocol_errors"]
            raise GateError(f"the implementation broke the stdio seam protocol ({len(errors)} time(s)); the first: {errors[0]}")
        cov = _coverage_summary(data_file, root) if coverage else None
    selection = None
    if keyword or tags or scenarios:
        picked = list(dict.fromkeys(p.label for p in scenarios or []))
        selection = {"keyword": keyword, "tags": tags, "scenarios": picked}
    return GateRun(sut, payload["scenarios"], payload.get("collection_errors", []), cov, returncode, rows, exitfirst, covers, selection)


def _row_files(feature_dir: Path, rows: list[str], tmp: Path) -> Path:
    """A copy, under the same directory name, of only the feature files that tag one of ``rows``:
    the child then parses and collects those alone (a ``--rows`` run of one row no longer pays
    for all forty), and reports name each file as they would have. Any file a tag might be in is
    kept; ``-m`` still decides which scenarios run."""
    import shutil

    tag = re.compile(r"(?<![\w-])@(?:" + "|".join(re.escape(r) for r in rows) + r")(?![\w-])")
    target = tmp / "features-run" / feature_dir.name
    for path in sorted(feature_dir.rglob("*.feature")):
        if tag.search(path.read_text("utf-8", errors="replace")):
            copy = target / path.relative_to(feature_dir)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
    target.mkdir(parents=True, exist_ok=True)
    return target


def features_digest(feature_dir: Path) -> str:
    """``sha256:`` over every ``.feature`` file's path (relative, POSIX) and bytes, in path order:
    two runs over the same features have the same digest, whatever directory holds them."""
    h = hashlib.sha256()
    for path in sorted(feature_dir.rglob("*.feature")):
        data = path.read_bytes()
        h.update(path.relative_to(feature_dir).as_posix().encode("utf-8") + b"\0" + str(len(data)).encode() + b"\0" + data)
    return "sha256:" + h.hexdigest()


def pwh_commit(root: Path) -> str | None:
    """The commit pwh runs from (``git rev-parse HEAD`` in its checkout), or ``None`` outside one."""
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 and all(c in "0123456789abcdef" for c in commit) else None


def generated_at() -> str:
    """UTC time of the run, to the second; ``SOURCE_DATE_EPOCH`` (reproducible builds) pins it."""
    import datetime as _dt

    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    moment = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch.isdigit() else _dt.datetime.now(_dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def default_jobs() -> int:
    """How many shards a gate runs by default: the cores this process may run on (each shard is
    one single-threaded pytest; the SUT's own workers mostly wait on it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


RELAY_DRAIN_S = 2.0
# With --pwh-progress relay (a shard of a parallel gate), each progress line goes to stdout as
# RELAY_MARK, the whole run's scenario count, a tab, then the line without its counter: the gate
# numbers the lines of every shard in one sequence. It and :class:`Claims` live here, not in the
# gate plugin, so the gate's own process never imports pytest (a fifth of a second).
RELAY_MARK = "\x1epwh-progress "


class Claims:
    """The queue a parallel gate's shards take their scenarios from: a small file holding the PID
    of the shard that checks the matrix, the queue's state and the next scenario's index in the
    collection (which every shard collects alike), changed under an exclusive lock. It is
    ``wait`` until that shard has checked the matrix (the others do not check it again), then
    ``open``, or ``shut`` (a matrix refused, nothing collected: no scenario is run anywhere).
    A shard that finds the checking shard gone while the queue still waits takes nothing."""

    WAIT_S = 0.005

    def __init__(self, path: Path) -> None:
        self.path = path

    @staticmethod
    def create(path: Path, checker_pid: int) -> Claims:
        path.write_text(f"{checker_pid} wait 0\n", "ascii")
        return Claims(path)

    def _change(self, step: bool, state: str | None = None, pid: int | None = None) -> tuple[int, str, int]:
        import fcntl

        with open(self.path, "r+", encoding="ascii") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            was, now, index = f.read().split()
            new_pid = pid if pid is not None else int(was)
            new_state = state or now
            new_index = int(index) + 1 if step and now == "open" else int(index)
            if (new_pid, new_state, new_index) != (int(was), now, int(index)):
                f.seek(0)
                f.truncate()
                f.write(f"{new_pid} {new_state} {new_index}\n")
            return int(was), now, int(index)

    def checker(self, pid: int) -> None:
        """Name the shard that checks the matrix (the gate does, once it has started it)."""
        self._change(False, pid=pid)

    def open(self, *, refused: bool) -> None:
        self._change(False, "shut" if refused else "open")

    def take(self) -> int | None:
        """The index of the next scenario for this shard to run, or ``None``: none is left to
        take, or the queue never opens."""
        import time

        while True:
            pid, state, index = self._change(True)
            if state == "open":
                return index
            if state != "wait" or (pid and not _alive(pid)):  # 0: the gate has not named the checker yet
                return None
            time.sleep(self.WAIT_S)


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs: neither gone nor a zombie its parent (the gate) has not reaped yet."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class _Child:
    cmd: list[str]
    env: dict[str, str]
    results: Path


def _merged_returncode(codes: list[int]) -> int:
    """pytest's exit status for the whole run: the worst shard's, where a shard that was given no
    scenario (5) counts only when every shard was."""
    ran = [c for c in codes if c != 5]
    return max(ran) if ran else 5


def _merged_payload(payloads: list[dict[str, Any]]) -> dict[str, Any]:
    """One results payload from the shards', as one serial child would have written it: the
    scenario records in the run order the shards all collected (the first shard's ``collected``),
    the collection errors once (every shard collects the same) and the matrix check (the first shard's, the one that checks),
    the protocol errors in the order of their scenarios."""
    if len(payloads) == 1:
        return payloads[0]
    first = payloads[0]
    place = {sid: i for i, sid in reversed(list(enumerate(first.get("collected", []))))}
    last = len(place)
    scenarios = sorted((s for p in payloads for s in p.get("scenarios", [])), key=lambda s: place.get(s.get("id"), last))
    errors = [(e, sid) for p in payloads for e, sid in zip(p.get("protocol_errors", []), p.get("protocol_error_ids", []), strict=False)]
    errors.sort(key=lambda pair: place.get(pair[1], last))
    return {
        "scenarios": scenarios,
        "collection_errors": first.get("collection_errors", []),
        "matrix_problems": first.get("matrix_problems", []),
        "protocol_errors": [e for e, _ in errors],
    }


def _run_children(children: list[_Child], *, cwd: Path, progress: bool, claims: Claims | None = None) -> list[int]:
    """Run the shards side by side, as :func:`run_child` runs one (SIGINT blocked in each; on any
    exception, a Ctrl-C included, each still running is killed by its PID and reaped). With
    ``progress``, each shard's progress lines are read from its stdout and numbered in one
    sequence here; anything else a shard prints is passed through as it is."""
    import threading

    from pwh._harness.interrupt import children_ignore_sigint

    procs: list[subprocess.Popen[bytes]] = []
    relays: list[threading.Thread] = []
    lock = threading.Lock()
    done = [0]
    started = time.monotonic()
    width = shutil.get_terminal_size((160, 24)).columns
    seen: dict[str, int] = {}  # progress marks so far (pass, FAIL, skip, self), for an interrupted run's summary
    planned = ["?"]

    def relay(stream: Any) -> None:
        mark = RELAY_MARK.encode("utf-8")
        for raw in iter(stream.readline, b""):
            with lock:
                if raw.startswith(mark):
                    total, _, text = raw[len(mark) :].decode("utf-8", "replace").rstrip("\n").partition("\t")
                    done[0] += 1
                    planned[0] = total
                    words = text.split()
                    if len(words) > 1:
                        seen[words[1]] = seen.get(words[1], 0) + 1
                    elapsed = f"{time.monotonic() - started:>4.0f} s"
                    sys.stdout.write(f"[{done[0]:>3}/{total} {elapsed}] {text}"[: max(40, width)] + "\n")
                else:
                    sys.stdout.write(raw.decode("utf-8", "replace"))
                sys.stdout.flush()

    try:
        for child in children:
            with children_ignore_sigint():
                proc = subprocess.Popen(
                    child.cmd, env=child.env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE if progress else None
                )
            procs.append(proc)
            if claims is not None and len(procs) == 1:  # the first shard checks the matrix: the others watch it
                claims.checker(proc.pid)
            if proc.stdout is not None:
                thread = threading.Thread(target=relay, args=(proc.stdout,), name="pwh-gate-relay", daemon=True)
                thread.start()
                relays.append(thread)
        codes = [proc.wait() for proc in procs]
        for thread in relays:
            # What a shard printed is in its pipe once it has ended; a process it left behind that
            # still holds the pipe open must not hold the gate too.
            thread.join(timeout=RELAY_DRAIN_S)
        return codes
    except BaseException as exc:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()  # by PID: this shard only (its own children: pwh._harness.interrupt)
        for proc in procs:
            proc.wait()
        if isinstance(exc, KeyboardInterrupt) and progress:  # what ran before the Ctrl-C, as pytest says it
            tally = ", ".join(f"{n} {mark}" for mark, n in sorted(seen.items())) or "none finished"
            with lock:
                sys.stderr.write(f"pwh gate: interrupted after {done[0]}/{planned[0]} scenarios: {tally}\n")
                sys.stderr.flush()
        raise
    finally:
        for proc, thread in zip(procs, relays, strict=False):
            if proc.stdout is not None and not thread.is_alive():  # a reader still inside readline holds the file's lock
                proc.stdout.close()


def run_child(cmd: list[str], *, env: dict[str, str], cwd: Path, quiet: bool = False) -> subprocess.CompletedProcess[bytes]:
    """Run the scenario child with SIGINT blocked: a Ctrl-C at the terminal reaches the whole
    process group, and the child would print its own traceback; pwh handles it instead (stops
    the child by PID, exit 130: pwh._harness.interrupt). The mask is inherited across exec.
    ``quiet``: what the child prints is dropped (``pwh bench`` times whole gates this way)."""
    from pwh._harness.interrupt import children_ignore_sigint

    with children_ignore_sigint():
        out = subprocess.DEVNULL if quiet else None
        child = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    with child:
        try:
            child.wait()
        except BaseException:
            child.kill()  # by PID: this child only (its own children: pwh._harness.interrupt)
            raise
    return subprocess.CompletedProcess(cmd, child.returncode)


def _check_sut_loads(sut: str) -> tuple[str | None, str | None]:
    """Fail fast, with the adapter's own reason, when the SUT cannot even be constructed (a
    missing extra, a typo in module:factory), instead of failing every scenario the same way.
    ``load_sut`` and ``close_sut`` turn anything the adapter raises, ``SystemExit`` included,
    into a ``SUTLoadError`` naming it and the adapter's file:line.

    Returns the working directory when an explicit ``module:factory`` was found there (the child
    must search it too, last), else ``None`` (a built-in SUT never imports from the cwd); and the
    adapter's ``version``, when it names a short, public-safe one."""
    from pwh._suts.seam import BUILTIN_SUTS, SUTLoadError, close_sut, load_sut

    builtin = sut in BUILTIN_SUTS
    if not builtin:
        searchable_cwd()
    try:
        adapter = load_sut(sut)
        try:
            version = getattr(adapter, "version", None)
        except Exception:  # an adapter's own property failing: no version to state
            version = None
        close_sut(adapter, sut)
        if sut.startswith("stdio:"):  # the probe's process would sit idle in the gate's parent until it ends
            from pwh._suts.stdio.client import shutdown

            shutdown()
    except SUTLoadError as exc:
        raise GateError(str(exc)) from None
    from pwh._harness.text_scan import scan_text

    sut_dir = None if builtin else adapter_dir_in_cwd(sut)
    if not (isinstance(version, str) and 0 < len(version) <= 64 and version.isprintable()):
        return sut_dir, None
    return sut_dir, (version if not scan_text(version) else None)


# What the gate's child may import: the project, then whatever the user's own PYTHONPATH names,
# then the standard library and site-packages. An explicit ``--sut module:factory`` found in the
# working directory adds that directory *after* all of them (``PWH_SUT_PATH``, appended to
# ``sys.path`` by the gate plugin), so no file in the cwd can shadow a module pwh or the stdlib
# imports (a stray ``random.py`` or ``json.py``).
SUT_PATH_ENV = "PWH_SUT_PATH"


def searchable_cwd() -> None:
    """Let an adapter the user named on the command line be found in the working directory, as
    ``python -m`` would, but searched last: never ahead of the standard library."""
    cwd = os.getcwd()
    if not any(_same_entry(p, cwd) for p in sys.path):
        sys.path.append(cwd)


def adapter_dir_in_cwd(sut: str) -> str | None:
    """The working directory, when ``sut``'s top-level module was imported from it."""
    top = sut.partition(":")[0].partition(".")[0]
    module = sys.modules.get(top)
    spec = getattr(module, "__spec__", None)
    if spec is None:
        return None
    places = list(spec.submodule_search_locations or []) or ([spec.origin] if spec.origin else [])
    cwd = Path(os.getcwd()).resolve()
    for place in places:
        try:
            if Path(place).resolve().parent == cwd:
                return str(cwd)
        except (OSError, ValueError):
            continue
    return None


def child_import_env(sut_dir: str | None) -> dict[str, str]:
    """``PYTHONPATH`` (the project first, then the user's own entries) and ``PWH_SUT_PATH`` for a
    child that runs scenarios; the working directory is never on ``PYTHONPATH``."""
    root = str(project_root())
    user = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys([root, *user])), SUT_PATH_ENV: sut_dir or ""}
    return env


def _same_entry(entry: str, directory: str) -> bool:
    try:
        return Path(entry or ".").resolve() == Path(directory).resolve()
    except (OSError, ValueError):
        return False


def _marker_expr(rule_id: str) -> str:
    if rule_id not in RULE_IDS:
        raise GateError(f"unknown row {rule_id!r}")
    return rule_id


def _coverage_summary(data_file: Path, root: Path) -> dict[str, Any]:
    import coverage

    cov = coverage.Coverage(data_file=str(data_file), branch=True)
    cov.load()
    modules: dict[str, Any] = {}
    total_branches = covered_branches = 0
    for rel in COVERED_MODULES:
        path = str(root / rel)
        analysis = cov._analyze(path)
        numbers = analysis.numbers
        missing_branches = sorted(f"{a}->{b}" for a, bs in analysis.missing_branch_arcs().items() for b in bs)
        modules[rel] = {
            "branches": numbers.n_branches,
            "covered_branches": numbers.n_branches - numbers.n_missing_branches,
            "branch_percent": round(100.0 * (numbers.n_branches - numbers.n_missing_branches) / numbers.n_branches, 1)
            if numbers.n_branches
            else 100.0,
            "missing_lines": sorted(analysis.missing),
            "missing_branches": missing_branches,
        }
        total_branches += numbers.n_branches
        covered_branches += numbers.n_branches - numbers.n_missing_branches
    percent = round(100.0 * covered_branches / total_branches, 1) if total_branches else 100.0
    return {"branch_percent": percent, "branches": total_branches, "covered_branches": covered_branches, "modules": modules}


# -- what a run is narrowed to: pytest's -k and -m, checked before any work; FEATURE:LINE ---------


def keyword_expression(text: str | None) -> str | None:
    """``-k`` as pytest takes it, checked here: a bad one is one line and exit 2 before any work,
    never pytest's error in the child and an empty verdict."""
    return None if text is None else _checked("-k", "a name expression", text, text)


# ``@`` opening a tag, behave's way: at the start, or after a space or an opening parenthesis.
_BEHAVE_TAG = re.compile(r"(?:^|(?<=[\s(]))@(?=[^\s@()])")


def tag_expression(text: str | None) -> str | None:
    """``-m`` as pytest takes it. pytest-bdd makes each tag a marker of its own name, so behave's
    ``@M06`` means the marker ``M06`` (the ``@`` becomes a space: a column an error names still
    points into what was typed)."""
    return None if text is None else _checked("-m", "a tag expression", text, _BEHAVE_TAG.sub(" ", text))


def _checked(option: str, what: str, typed: str, expr: str) -> str:
    if not expr.strip():
        raise GateError(f"{option} {typed!r}: an empty expression narrows nothing; drop {option} to run every scenario")
    problem = _expression_problem(expr)
    if problem:
        raise GateError(f"{option} {typed!r} is not {what}: {problem}")
    return expr


def _expression_problem(expr: str) -> str | None:
    """What pytest's own parser of ``-k``/``-m`` (the code the child runs; pytest has no public
    one) finds wrong with ``expr``, in one line; pytest 8 raises ``ParseError``, 9 ``SyntaxError``."""
    from _pytest.mark import expression

    errors: tuple[type[Exception], ...] = (SyntaxError, getattr(expression, "ParseError", SyntaxError))
    try:
        expression.Expression.compile(expr)
    except errors as exc:
        message = str(getattr(exc, "msg", None) or getattr(exc, "message", None) or "it does not parse")
        column = getattr(exc, "offset", None) or getattr(exc, "column", None)
        where = f" (column {column})" if isinstance(column, int) else ""
        return message.encode("unicode_escape").decode("ascii") + where
    return None


@dataclass(frozen=True)
class Pick:
    """What to run of a feature file: every scenario (``line`` None), the scenario at ``line``
    (its keyword's, as every report names it), or one example of an outline (``example``: its
    place over the outline's Examples rows, as pytest-bdd parametrizes them). ``label`` is how the
    verdict's selection names what was asked for."""

    feature: str  # as reports name it: features/x.feature
    line: int | None = None
    example: int | None = None
    label: str = ""


@dataclass(frozen=True)
class ScenarioSpan:
    line: int  # the Scenario keyword's
    first: int  # its tags'
    last: int  # its last line that is not blank or a comment
    name: str
    rows: tuple[tuple[int, str], ...]  # each Examples row: its line, its values as a verdict shows them


def pick_at(path: Path, feature: str, line: int) -> Pick:
    """The scenario whose lines hold ``line`` (a tag, a step, an Examples row): a row of an
    outline's Examples is that example alone, any other line of an outline is all of them."""
    for span in scenario_spans(path, feature):
        if span.first <= line <= span.last:
            example = next((i for i, (at, _) in enumerate(span.rows) if at == line), None)
            return Pick(feature, span.line, example, f"{feature}:{line}")
    raise GateError(f"{feature}:{line}: no scenario there, so nothing to run (any line of a scenario selects it)")


def failed_picks(verdict: dict[str, Any], feature_dir: Path, source: str) -> list[Pick]:
    """The scenarios that failed in a saved ``verdict``, found again in the features: each must
    still be there (same file, line and name; an outline's example, the same values), else the
    features changed since and a rerun would judge other scenarios than those that failed."""
    picks: list[Pick] = []
    parsed: dict[str, list[ScenarioSpan]] = {}  # each feature file parsed once, however many of its scenarios failed
    for s in verdict["scenarios"]:
        if s.get("rfc") != "fail" or not s.get("feature"):
            continue
        label = str(s["feature"])
        if label not in parsed:
            path = _saved_feature(feature_dir, label)
            if path is None:
                raise GateError(f"--failed-in {source}: a failed scenario's feature file is not one of the features directory")
            parsed[label] = scenario_spans(path, label)
        where = f"{s['feature']}:{s.get('line')}"
        span = next((x for x in parsed[label] if x.line == s.get("line")), None)
        examples = [i for i, (_, values) in enumerate(span.rows) if values == s.get("params")] if span and span.rows else [None]
        if span is None or span.name != s.get("scenario", span.name) or not examples:
            raise GateError(f"--failed-in {source}: {where} is no longer the scenario that failed there (the features changed since)")
        picks += [Pick(s["feature"], span.line, i, where) for i in examples]
    return picks


def _saved_feature(feature_dir: Path, label: str) -> Path | None:
    """The file a verdict's ``features/x.feature`` names, when it is one of ``feature_dir``'s."""
    parts = Path(label).parts
    if len(parts) < 2 or Path(label).is_absolute() or ".." in parts:
        return None
    path = feature_dir.joinpath(*parts[1:])
    return path if path.suffix == ".feature" and path.is_file() and path.resolve().is_relative_to(feature_dir.resolve()) else None


def scenario_spans(path: Path, feature: str) -> list[ScenarioSpan]:
    """Every scenario of a feature file with the lines it spans: from its first tag to its last
    line that is not blank or a comment (the lines between two scenarios are neither's)."""
    from gherkin.parser import Parser

    try:
        text = path.read_text("utf-8")
        document: Any = Parser().parse(text)  # plain dicts and lists, typed by gherkin as TypedDicts
    except (OSError, UnicodeDecodeError):
        raise GateError(f"{feature}: cannot be read") from None
    except Exception:  # the parser's own errors: `pwh scenarios check` names each at its line
        raise GateError(f"{feature}: does not parse as Gherkin (see `pwh scenarios check`)") from None
    lines = text.splitlines()
    starts = sorted(_elements((document.get("feature") or {}).get("children", [])), key=lambda e: e[0])
    spans = []
    for i, (first, node) in enumerate(starts):
        if node is None:
            continue
        last = starts[i + 1][0] - 1 if i + 1 < len(starts) else len(lines)
        while last > node["location"]["line"] and (not lines[last - 1].strip() or lines[last - 1].lstrip().startswith("#")):
            last -= 1
        rows = tuple(
            (row["location"]["line"], ", ".join(cell["value"] for cell in row["cells"]))
            for examples in node.get("examples", [])
            if examples.get("tableHeader")
            for row in examples.get("tableBody", [])
        )
        spans.append(ScenarioSpan(node["location"]["line"], first, last, node.get("name", ""), rows))
    return spans


def _elements(children: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any] | None]]:
    """Each child's first line (its first tag's) and, for a scenario, the scenario: a background
    or a rule ends the scenario before it. A rule's own children follow it."""
    out: list[tuple[int, dict[str, Any] | None]] = []
    for child in children:
        for kind, node in child.items():
            first = min([t["location"]["line"] for t in node.get("tags", [])] + [node["location"]["line"]])
            out.append((first, node if kind == "scenario" else None))
            if kind == "rule":
                out += _elements(node.get("children", []))
    return out

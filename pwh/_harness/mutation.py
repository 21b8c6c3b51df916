"""``pwh mutate``: a mutation-testing campaign over the dispatcher core, judged by the matrix and
the quick model profile alone (issue 15, item 5).

The tool is mutmut 3 (the ``mutation`` extra). Its configuration is ``[tool.mutmut]`` in
``pyproject.toml``: which core modules it mutates, and the one test command that may kill a mutant
(the Gherkin matrix against the ``reference`` SUT plus ``tests/campaigns/test_models.py::
test_the_reference_keeps_every_invariant``; never the unit tests). mutmut works in ``mutants/``
(git-ignored), a mutated copy of the tree; this module runs it and then writes

- ``tests/mutation/score.json``: tool and version, modules, counts, score, the command;
- ``tests/mutation/survivors.md``: every mutant that survived, with where it is and what it changed,
  and its classification, kept from the previous file: ``killed by features/X.feature:LINE (name)``,
  ``equivalent: <why>``, or ``open: <note>`` (survives, not equivalent: counts against the score).

The score is killed / (total - equivalent). A timeout, a mutant no test reached and a survivor are
all *not killed*: only a failing scenario or model run counts.

This is harness, not core: it imports neither ``scenarios`` nor ``tests``, and mutmut only when run.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS_DIR = Path("tests") / "mutation"
COMMAND = "pwh mutate"

# mutmut's exit codes (mutmut.stats.status_by_exit_code), restated so the report can be read
# without importing mutmut; anything else is 'suspicious'.
_STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    35: "suspicious",
    36: "timeout",
    37: "caught by type check",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
    255: "timeout",
    -11: "segfault",
    -9: "segfault",
    None: "not checked",
    2: "interrupted",
}

_ENTRY = re.compile(
    r"^- `(?P<name>[^`]+)` (?P<where>\S+) — (?P<status>[a-z ]+) — (?P<mutation>.*?) — (?P<verdict>(killed by|equivalent:|open:).*)$"
)


def status_of(exit_code: int | None) -> str:
    return _STATUS.get(exit_code, "suspicious")


def _root() -> Path:
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file() or not (root / "features").is_dir():
        raise MutationError("pwh mutate runs from a source checkout (pyproject.toml and features/ beside pwh/)")
    return root


class MutationError(Exception):
    """The campaign could not run (``pwh mutate`` says why in one line, exit 2)."""


def _config(root: Path) -> dict[str, Any]:
    data = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    try:
        return data["tool"]["mutmut"]
    except KeyError:
        raise MutationError("pyproject.toml has no [tool.mutmut] section") from None


def run_campaign(
    *,
    max_children: int = 2,
    resume: bool = False,
    only: str | None = None,
    within: str | None = None,
    report_only: bool = False,
    partial: bool = False,
) -> dict[str, Any]:
    """Run mutmut (unless ``report_only``), then write ``score.json`` and ``survivors.md`` and
    return the score; :class:`MutationError` when the campaign cannot run."""
    if importlib.util.find_spec("mutmut") is None:
        raise MutationError("mutmut is not installed; install the extra: python3 -m pip install -e '.[mutation]'")
    root = _root()
    cfg = _config(root)
    if not report_only:
        names: list[str] = []
        if only:
            names = [n.strip() for n in Path(only).read_text("utf-8").split() if n.strip()]
        elif not resume:
            shutil.rmtree(root / "mutants", ignore_errors=True)
        # Only the plugins the matrix needs, as `pwh gate` runs it (pytest_bdd is named in the config).
        env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PWH_SUT": "reference"}
        env.pop("PWH_FEATURES", None)
        cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children), *names]
        proc = subprocess.run(cmd, cwd=root, env=env, stdin=subprocess.DEVNULL)
        if proc.returncode not in (0, 1):
            print(f"pwh mutate: mutmut ended with exit {proc.returncode}; writing what it recorded", file=sys.stderr)
    mutants = collect(root, cfg)
    if not mutants:
        raise MutationError("no mutmut results in mutants/ (run without --report-only first)")
    survivors_md = root / RESULTS_DIR / "survivors.md"
    previous = parse_survivors(survivors_md.read_text("utf-8")) if survivors_md.exists() else {}
    if within:
        named = {n.strip() for n in Path(within).read_text("utf-8").split() if n.strip()}
        mutants = carry_over(mutants, named, previous)
    entries = survivor_entries(root, mutants, previous)
    partial = partial or any(m.status == "not checked" for m in mutants)
    selection = f"only the mutants named in {only}" if only else ("every mutant" if not partial else "a campaign stopped early")
    if within:
        selection = f"only the mutants named in {within}" + (
            f" (those in {only} re-run, the rest carried over from the previous results)" if only else ""
        )
    score = score_json(cfg, mutants, entries, partial=partial, selection=selection)
    (root / RESULTS_DIR).mkdir(parents=True, exist_ok=True)
    (root / RESULTS_DIR / "score.json").write_text(json.dumps(score, indent=2, sort_keys=True) + "\n", "utf-8")
    survivors_md.write_text(render_survivors(score, entries), "utf-8")
    c = score["counts"]
    print(
        f"pwh mutate: {c['killed']} of {c['total']} killed, {c['equivalent']} equivalent, score {score['score']:.4f}"
        f" ({c['survived']} survived, {c['no_tests']} reached by no test, {c['timeout']} timed out);"
        f" written to {RESULTS_DIR}/score.json and survivors.md"
    )
    return score


@dataclass
class Mutant:
    name: str
    path: str  # the mutated source file, relative to the root
    status: str


def collect(root: Path, cfg: dict[str, Any]) -> list[Mutant]:
    out: list[Mutant] = []
    for rel in cfg.get("only_mutate", []):
        meta = root / "mutants" / (rel + ".meta")
        if not meta.exists():
            continue
        data = json.loads(meta.read_text("utf-8"))
        for name, code in sorted(data.get("exit_code_by_key", {}).items()):
            out.append(Mutant(name, rel, status_of(code)))
    return out


def carry_over(mutants: list[Mutant], within: set[str], previous: dict[str, dict[str, str]]) -> list[Mutant]:
    """The mutants named in ``within`` that this run did not check keep their previous outcome:
    the status the committed survivors.md lists (``killed now`` is killed), and killed for one it
    does not list (survivors.md lists every mutant that was not killed). The matrix only grows, so
    a kill carries over; a survivor that was not re-run stays a survivor."""
    out: list[Mutant] = []
    for m in mutants:
        if m.status == "not checked" and m.name in within:
            old = previous.get(m.name, {}).get("status", "killed now")
            m = Mutant(m.name, m.path, "killed" if old == "killed now" else old)
        out.append(m)
    return out


def _function_lines(path: Path) -> dict[str, int]:
    """mutmut's mangled function name (``x_f``, ``xǁClassǁmethod``) → the line of its ``def``."""
    tree = ast.parse(path.read_text("utf-8"))
    lines: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines[f"x_{node.name}"] = node.lineno
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines[f"xǁ{node.name}ǁ{item.name}"] = item.lineno
    return lines


def _describe(root: Path, mutant: Mutant, lines: dict[str, int]) -> tuple[int, str]:
    """The source line a mutant changes and a one-line 'before → after'."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant  # the extra is installed when this runs

    cwd = os.getcwd()
    os.chdir(root)
    try:
        diff = get_diff_for_mutant(mutant.name, path=Path(mutant.path))
    finally:
        os.chdir(cwd)
    func = mutant.name.split(".")[-1].rsplit("__mutmut_", 1)[0]
    start = lines.get(func, 0)
    offset, removed, added, line_in_func = 0, [], [], None
    for raw in diff.splitlines():
        if raw.startswith("@@"):
            m = re.match(r"@@ -(\d+)", raw)
            offset = int(m.group(1)) if m else 1
            continue
        if raw.startswith(("---", "+++")):
            continue
        if raw.startswith("-"):
            removed.append(raw[1:].strip())
            line_in_func = line_in_func if line_in_func is not None else offset
            offset += 1
        elif raw.startswith("+"):
            added.append(raw[1:].strip())
        else:
            offset += 1
    line = start + (line_in_func - 1 if line_in_func else 0)
    before = " / ".join(removed) or "?"
    after = " / ".join(added) or "(removed)"
    text = f"`{_short(before)}` → `{_short(after)}`"
    return line, text


def _short(s: str, n: int = 110) -> str:
    s = s.replace("`", "'")
    return s if len(s) <= n else s[: n - 1] + "…"


def parse_survivors(text: str) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        m = _ENTRY.match(line)
        if m:
            found[m.group("name")] = m.groupdict()
    return found


def survivor_entries(root: Path, mutants: list[Mutant], previous: dict[str, dict[str, str]]) -> list[dict[str, str]]:
    """Every mutant not killed now, and every one listed before (a survivor of an earlier run,
    now killed by a scenario added for it): with where it is, what it changes, and its verdict."""
    lines_by_file: dict[str, dict[str, int]] = {}
    entries: list[dict[str, str]] = []
    for m in mutants:
        if m.status == "not checked" and m.name not in previous:
            continue
        if m.status == "killed" and m.name not in previous:
            continue
        if m.path not in lines_by_file:
            lines_by_file[m.path] = _function_lines(root / m.path)
        line, mutation = _describe(root, m, lines_by_file[m.path])
        old = previous.get(m.name, {})
        verdict = old.get("verdict") or "open: survives; not yet killed, not judged equivalent"
        if old and old.get("mutation") != mutation and not verdict.startswith("killed by"):
            # mutmut numbers mutants within a function: after an edit a name can denote another
            # change, and a verdict argued for the old one must not be carried to it.
            verdict = "open: this name now denotes another mutation (the code changed); judge it again"
        if m.status not in ("killed", "timeout") and verdict.startswith("killed by"):
            # a timeout is a detection (the mutant hangs the test command), named like a kill; the
            # score still counts kills only
            verdict = "open: survives again (" + verdict + " before the code changed)"
        if m.status == "killed" and not verdict.startswith("killed by"):
            verdict = "killed by the matrix as it now stands (no scenario of this campaign named)"
        entries.append(
            {
                "name": m.name,
                "where": f"{m.path}:{line}",
                "status": "killed now" if m.status == "killed" else m.status,
                "mutation": mutation,
                "verdict": verdict,
            }
        )
    return entries


def score_json(
    cfg: dict[str, Any], mutants: list[Mutant], entries: list[dict[str, str]], *, partial: bool, selection: str = "every mutant"
) -> dict[str, Any]:
    population = len(mutants)
    mutants = [m for m in mutants if m.status != "not checked"]  # a partial or sampled run scores what ran
    total = len(mutants)
    by = {s: sum(1 for m in mutants if m.status == s) for s in {m.status for m in mutants}}
    equivalent = sum(1 for e in entries if e["status"] != "killed now" and e["verdict"].startswith("equivalent:"))
    killed = by.get("killed", 0)
    try:
        version = importlib.metadata.version("mutmut")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return {
        "tool": "mutmut",
        "version": version,
        "command": COMMAND,
        "modules": list(cfg.get("only_mutate", [])),
        "test_command": list(cfg.get("pytest_add_cli_args_test_selection", [])),
        "population": population,
        "selection": selection,
        "counts": {
            "total": total,
            "killed": killed,
            "survived": by.get("survived", 0),
            "no_tests": by.get("no tests", 0),
            "timeout": by.get("timeout", 0),
            "other": total - killed - by.get("survived", 0) - by.get("no tests", 0) - by.get("timeout", 0),
            "equivalent": equivalent,
            "open": sum(1 for e in entries if e["verdict"].startswith("open:")),
        },
        "score": round(killed / (total - equivalent), 4) if total > equivalent else 0.0,
        "target": 0.95,
        "partial": partial,
    }


def render_survivors(score: dict[str, Any], entries: list[dict[str, str]]) -> str:
    c = score["counts"]
    head = [
        "# Surviving mutants",
        "",
        f"Written by `{COMMAND}` (mutmut {score['version']}); classifications are kept across runs and edited by hand.",
        f"Score {score['score']:.4f} = killed {c['killed']} / (total {c['total']} − equivalent {c['equivalent']})"
        + (f" — PARTIAL: {score['selection']}, {c['total']} of the {score['population']} mutants ran" if score["partial"] else "")
        + ".",
        "",
        "Each line: mutant — file:line — status now — the mutation — verdict, one of",
        "`killed by features/X.feature:LINE (scenario)`, `equivalent: why no test could tell it apart`,",
        "`open: ...` (survives and is not equivalent: counted against the score).",
        "",
    ]
    body = [f"- `{e['name']}` {e['where']} — {e['status']} — {e['mutation']} — {e['verdict']}" for e in entries]
    return "\n".join(head + body) + "\n"

"""``pwh scenarios check``: the feature files are well-formed for the gate.

Every feature parses; every scenario carries exactly one known row or rule tag (free tags such
as ``@wip`` or ``@slow`` may stand beside it; a tag that looks like a row but is none, ``@M99`` or
``@m04``, is refused); every step (each Examples row rendered) matches a step definition of the
library, of the right kind, and one that does not is given the closest steps that exist; and
every row and rule has at least one scenario. Problems name the file and line.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pwh._harness.paths import relative
from pwh._harness.rules import RULE_IDS
from pwh._harness.safe_text import for_terminal


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        """``file:line: message``; a problem of no one line (a row without scenarios) is
        ``features/: message``; control characters from the file shown escaped (a terminal line)."""
        return for_terminal(f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}")


@dataclass
class StepDef:
    type: str
    parser: Any


def step_contexts(modules: Iterable[ModuleType]) -> list[Any]:
    """pytest-bdd's own record of each step definition in ``modules`` (its step function context:
    type, parser, converters, function). The one place pwh reads pytest-bdd's registrations."""
    found: list[Any] = []
    for module in modules:
        for name, value in vars(module).items():
            if name.startswith("pytestbdd_stepdef_"):
                wrapped = getattr(value, "_get_wrapped_function", None)
                found.append(wrapped()() if wrapped else value())
    return found


def step_definitions(modules: Iterable[ModuleType]) -> list[StepDef]:
    """The step definitions pytest-bdd registered in ``modules``."""
    return [StepDef(context.type, context.parser) for context in step_contexts(modules)]


def load_step_modules(package: str) -> list[ModuleType]:
    """The modules of the step library: ``package`` lists them in ``STEP_MODULES``."""
    root = importlib.import_module(package)
    return [importlib.import_module(f"{package}.{m}") for m in getattr(root, "STEP_MODULES", ())]


_PLACEHOLDER = re.compile(r"<[^<>\s]+>")
ROW_LIKE_TAG = re.compile(r"(?i)(?:M\d+|PRV-\d+|HST-\d+|REC-\d+|FT-\d+)")


def check(
    features_dir: Path,
    steps: list[StepDef],
    root: Path | None = None,
    suggest: Callable[[str, str], list[str]] | None = None,
) -> tuple[list[Problem], dict[str, int]]:
    """All problems found, and the number of scenarios (Examples rows counted) per rule.
    ``suggest(kind, text)`` names the closest steps for one that has no definition."""
    from pytest_bdd.parser import FeatureParser

    root = root or features_dir.parent
    problems: list[Problem] = []
    per_rule = {r: 0 for r in RULE_IDS}
    by_type: dict[str, list[StepDef]] = {}
    for definition in steps:
        by_type.setdefault(definition.type, []).append(definition)
    defined: dict[tuple[str, str], bool] = {}  # a step's text recurs across scenarios and Examples rows: matched once

    def has_definition(kind: str, text: str) -> bool:
        key = (kind, text)
        found = defined.get(key)
        if found is None:
            found = defined[key] = any(d.parser.is_matching(text) for d in by_type.get(kind, ()))
        return found

    files, problems = feature_files(features_dir, root)
    if not files and not problems:
        problems.append(Problem(relative(features_dir, root) + "/", 0, "no .feature files"))
    for path in files:
        shown = relative(path, root)
        try:
            feature = FeatureParser(str(path.parent), path.name).parse()
        except Exception as exc:
            problems += parse_problems(shown, exc)
            continue
        for template in feature.scenarios.values():
            tags = set(template.tags) | set(feature.tags)
            known = sorted(t for t in tags if t in RULE_IDS)
            unknown = sorted(t for t in tags if t not in RULE_IDS and ROW_LIKE_TAG.fullmatch(t))
            if len(known) != 1:
                what = "no row or rule tag" if not known else f"{len(known)} row tags ({', '.join(known)})"
                problems.append(Problem(shown, template.line_number, f"scenario {template.name!r} has {what}; it needs exactly one"))
            for tag in unknown:
                hint = (
                    f"tags are case-sensitive: @{tag.upper()}?"
                    if tag.upper() in RULE_IDS
                    else "it looks like a row but is none; known: M01–M13, PRV-1, HST-1…HST-6, REC-1, FT-1…FT-7"
                )
                problems.append(Problem(shown, template.line_number, f"unknown tag @{tag} ({hint})"))
            if not template.steps:
                problems.append(
                    Problem(shown, template.line_number, f"scenario {template.name!r} has no steps: it would pass having checked nothing")
                )
                continue
            contexts = [c for ex in template.examples for c in ex.as_contexts()]
            if not contexts and any(_PLACEHOLDER.search(step.name) for step in template.steps):
                problems.append(
                    Problem(shown, template.line_number, f"scenario outline {template.name!r} uses <parameters> but has no Examples rows")
                )
                continue
            contexts = contexts or [{}]
            for context in contexts:
                scenario = template.render(context)
                for step in scenario.steps:
                    if not has_definition(step.type, step.name):
                        near = suggest(step.type, step.name) if suggest else []
                        hint = ("; did you mean: " + " | ".join(repr(n) for n in near)) if near else ""
                        problems.append(Problem(shown, step.line_number, f"no step definition for {step.type}: {step.name!r}{hint}"))
            if len(known) == 1:
                per_rule[known[0]] += len(contexts)
    for rule, count in per_rule.items():
        if count == 0:
            problems.append(Problem(relative(features_dir, root) + "/", 0, f"row {rule} has no scenario"))
    return sorted(set(problems)), per_rule


MAX_FEATURE_BYTES = 4 * 1024 * 1024  # the whole shipped matrix is a few hundred KB
MAX_FEATURE_DEPTH = 16


def feature_files(features_dir: Path, root: Path | None = None) -> tuple[list[Path], list[Problem]]:
    """Every ``*.feature`` regular file under ``features_dir``, and a problem for anything the
    gate must not read as one: a symbolic link (file or directory: never followed, so nothing
    outside the directory is read), a directory, FIFO or device named ``*.feature``, a file over
    :data:`MAX_FEATURE_BYTES`, a directory nested deeper than :data:`MAX_FEATURE_DEPTH` levels or
    one that cannot be listed. The walk is iterative: no depth of tree can exhaust the stack."""
    root = root or features_dir.parent
    found: list[Path] = []
    problems: list[Problem] = []
    todo: list[tuple[Path, int]] = [(features_dir, 0)]
    while todo:
        folder, depth = todo.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            problems.append(Problem(relative(folder, root) + "/", 0, "a directory that cannot be listed"))
            continue
        for entry in entries:
            path = folder / entry.name
            feature = entry.name.endswith(".feature")
            try:
                if entry.is_symlink():
                    if feature or entry.is_dir():
                        problems.append(
                            Problem(relative(path, root), 0, "a symbolic link (not followed: features live in the directory itself)")
                        )
                elif entry.is_dir(follow_symlinks=False):
                    if depth + 1 >= MAX_FEATURE_DEPTH:
                        problems.append(
                            Problem(relative(path, root) + "/", 0, f"nested more than {MAX_FEATURE_DEPTH} directories deep (not searched)")
                        )
                    elif feature:
                        problems.append(Problem(relative(path, root), 0, "a directory, not a feature file"))
                    else:
                        todo.append((path, depth + 1))
                elif feature and not entry.is_file(follow_symlinks=False):
                    problems.append(Problem(relative(path, root), 0, "not a regular file"))
                elif feature and entry.stat(follow_symlinks=False).st_size > MAX_FEATURE_BYTES:
                    problems.append(Problem(relative(path, root), 0, f"larger than {MAX_FEATURE_BYTES // (1024 * 1024)} MiB (not read)"))
                elif feature:
                    found.append(path)
            except OSError:
                problems.append(Problem(relative(path, root), 0, "cannot be examined"))
    return sorted(found), problems


def parse_problems(shown: str, exc: Exception) -> list[Problem]:
    """One problem per error the Gherkin parser reported, at its line, with the parser's own
    ``(line:col): message``; pytest-bdd's own errors (a step out of place) at their line."""
    cause = exc.__cause__
    errors = getattr(cause, "errors", None) or ([cause] if hasattr(cause, "location") else [])
    found = []
    for error in errors:
        location = getattr(error, "location", None) or {}
        found.append(Problem(shown, int(location.get("line") or 0), f"Gherkin syntax error {_public(str(error))}"))
    if found:
        return found
    line, text = getattr(exc, "line", 0), getattr(exc, "message", None)
    if isinstance(line, int) and isinstance(text, str):  # pytest-bdd's GherkinParseError
        return [Problem(shown, line, f"does not parse as Gherkin: {_public(text)}")]
    if isinstance(exc, UnicodeDecodeError):
        return [Problem(shown, 0, "cannot be read: not UTF-8")]
    return [Problem(shown, 0, f"does not parse as Gherkin ({type(exc).__name__})")]


def _public(text: str) -> str:
    """The parser's message on one line; withheld if it quotes a private value from the file."""
    from pwh._core.boundary import BoundaryScanner

    text = " ".join(text.split())[:300]
    return "(message withheld: it would quote a private value)" if BoundaryScanner().scan_value(text) else text

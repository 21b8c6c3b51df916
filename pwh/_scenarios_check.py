"""``pwh scenarios check``: the feature files are well-formed for the gate.

Every feature parses; every scenario carries exactly one known row or rule tag; every step
(each Examples row rendered) matches a step definition of the library, of the right kind; and
every row and rule has at least one scenario. Problems name the file and line.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ._rules import RULE_IDS


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass
class StepDef:
    type: str
    parser: Any


def step_definitions(modules: Iterable[ModuleType]) -> list[StepDef]:
    """The step definitions pytest-bdd registered in ``modules``."""
    found: list[StepDef] = []
    for module in modules:
        for name, value in vars(module).items():
            if not name.startswith("pytestbdd_stepdef_"):
                continue
            wrapped = getattr(value, "_get_wrapped_function", None)
            context = wrapped()() if wrapped else value()
            found.append(StepDef(context.type, context.parser))
    return found


def load_step_modules(package: str) -> list[ModuleType]:
    """The modules of the step library: ``package`` lists them in ``STEP_MODULES``."""
    root = importlib.import_module(package)
    return [importlib.import_module(f"{package}.{m}") for m in getattr(root, "STEP_MODULES", ())]


def check(features_dir: Path, steps: list[StepDef], root: Path | None = None) -> tuple[list[Problem], dict[str, int]]:
    """All problems found, and the number of scenarios (Examples rows counted) per rule."""
    from pytest_bdd.parser import FeatureParser

    root = root or features_dir.parent
    problems: list[Problem] = []
    per_rule = {r: 0 for r in RULE_IDS}
    files = sorted(features_dir.rglob("*.feature"))
    if not files:
        problems.append(Problem(_rel(features_dir, root), 0, "no .feature files"))
    for path in files:
        shown = _rel(path, root)
        try:
            feature = FeatureParser(str(path.parent), path.name).parse()
        except Exception as exc:  # the gherkin parser's own error names the line
            line = getattr(getattr(exc, "location", None), "get", lambda *_: 0)("line", 0) if hasattr(exc, "location") else 0
            problems.append(Problem(shown, int(line or 0), f"does not parse as Gherkin ({type(exc).__name__})"))
            continue
        for template in feature.scenarios.values():
            tags = set(template.tags) | set(feature.tags)
            known = sorted(t for t in tags if t in RULE_IDS)
            unknown = sorted(t for t in tags if t not in RULE_IDS)
            if len(known) != 1:
                what = "no row or rule tag" if not known else f"{len(known)} row tags ({', '.join(known)})"
                problems.append(Problem(shown, template.line_number, f"scenario {template.name!r} has {what}; it needs exactly one"))
            for tag in unknown:
                problems.append(Problem(shown, template.line_number, f"unknown tag @{tag} (known: M01–M13, PRV-1, HST-1…HST-6, REC-1, FT-1…FT-7)"))
            contexts = [c for ex in template.examples for c in ex.as_contexts()] or [{}]
            for context in contexts:
                scenario = template.render(context)
                for step in scenario.steps:
                    if not any(d.type == step.type and d.parser.is_matching(step.name) for d in steps):
                        problems.append(Problem(shown, step.line_number, f"no step definition for {step.type}: {step.name!r}"))
            if len(known) == 1:
                per_rule[known[0]] += len(contexts)
    for rule, count in per_rule.items():
        if count == 0:
            problems.append(Problem(_rel(features_dir, root), 0, f"row {rule} has no scenario"))
    return sorted(set(problems)), per_rule


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name

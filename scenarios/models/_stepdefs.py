"""The step library, run in-process on a World without pytest.

The exporter uses it to run a counterexample's Gherkin lines exactly as the gate would (same
step definitions, same parsers), against the SUT and against the reference, and to see which
``Then`` lines tell them apart.
"""

from __future__ import annotations

from typing import Any

from pwh._harness.scenarios_check import load_step_modules

from .._world import World


class StepNotFound(LookupError):
    """No step definition of the library matches a line."""


class StepLibrary:
    """Every step definition of ``scenarios.STEP_MODULES``."""

    def __init__(self, package: str = "scenarios") -> None:
        self._defs: list[Any] = []
        for module in load_step_modules(package):
            for name, value in vars(module).items():
                if name.startswith("pytestbdd_stepdef_"):
                    wrapped = getattr(value, "_get_wrapped_function", None)
                    self._defs.append(wrapped()() if wrapped else value())

    def matches(self, keyword: str, text: str) -> bool:
        return self._find(keyword, text) is not None

    def run(self, world: World, keyword: str, text: str) -> None:
        """Run one line (``keyword`` is Given, When or Then); raises what the step raises."""
        context = self._find(keyword, text)
        if context is None:
            raise StepNotFound(f"no step definition for {keyword}: {text!r}")
        args = dict(context.parser.parse_arguments(text) or {})
        for name, convert in (context.converters or {}).items():
            if name in args:
                args[name] = convert(args[name])
        context.step_func(world=world, **args)

    def _find(self, keyword: str, text: str) -> Any:
        kind = keyword.lower()
        for context in self._defs:
            if context.type == kind and context.parser.is_matching(text):
                return context
        return None

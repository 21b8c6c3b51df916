"""The mutant library overrides only what the dispatcher declares it may (``MUTATION_SEAM``), so a
refactoring of the dispatcher's private methods cannot silently leave a mutant breaking nothing."""

from __future__ import annotations

import inspect
import sys

from pwh._core.dispatcher import MUTATION_SEAM, Dispatcher


def _mutant_dispatchers() -> list[type[Dispatcher]]:
    import pwh._suts.mutants  # noqa: F401  (registers every mutant module)

    found = []
    for name, module in sorted(sys.modules.items()):
        if name.startswith("pwh._suts.mutants"):
            found += [c for c in vars(module).values() if inspect.isclass(c) and issubclass(c, Dispatcher) and c.__module__ == name]
    return found


def overridden_private(cls: type, base: type) -> set[str]:
    """The private methods of ``base`` that ``cls`` (or a class between them) replaces."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is base or not issubclass(klass, base):
            continue
        names |= {n for n in vars(klass) if n.startswith("_") and not n.startswith("__") and hasattr(base, n)}
    return names


def test_every_seam_method_exists_on_the_dispatcher() -> None:
    missing = [n for n in MUTATION_SEAM if not callable(getattr(Dispatcher, n, None))]
    assert missing == [] and len(set(MUTATION_SEAM)) == len(MUTATION_SEAM)


def test_the_mutants_override_only_the_declared_seam() -> None:
    classes = _mutant_dispatchers()
    assert len(classes) >= 20
    outside = {f"{c.__module__}.{c.__qualname__}: {sorted(overridden_private(c, Dispatcher) - set(MUTATION_SEAM))}" for c in classes}
    assert {o for o in outside if not o.endswith(": []")} == set()


def test_the_check_sees_an_undeclared_override() -> None:
    class Sneaky(Dispatcher):
        def _admitted_hooks(self, event_kind):  # type: ignore[no-untyped-def]
            return []

        def _not_a_seam_but_a_helper(self) -> None: ...

    assert overridden_private(Sneaky, Dispatcher) == {"_admitted_hooks"}
    Dispatcher._helper_for_the_test = lambda self: None  # type: ignore[attr-defined]
    try:

        class Sneakier(Dispatcher):
            def _helper_for_the_test(self) -> None: ...

        assert overridden_private(Sneakier, Dispatcher) - set(MUTATION_SEAM) == {"_helper_for_the_test"}
    finally:
        del Dispatcher._helper_for_the_test  # type: ignore[attr-defined]

"""The import graph the design card fixes: the layers of pwh in order, no cycles, and pwh never
importing fakes, scenarios or capabilities."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = sorted(p for p in (ROOT / "pwh").rglob("*.py") if "capabilities" not in p.relative_to(ROOT / "pwh").parts)
FORBIDDEN = ("fakes", "scenarios", "pwh.capabilities", "tests")


# The CLI is the composition root: it may load the step library and the models *by name*
# (importlib), so the library never depends on them; a static import stays forbidden there too.
LOADS_BY_NAME = {"_cli.py"}


def imported_modules(path: Path, *, by_name: bool = True) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import inside pwh
                base = "pwh" if path.parent.name == "pwh" else "pwh." + path.parent.name
                mod = f"{base}.{node.module}" if node.module else base
                names += [mod] + [f"{mod}.{a.name}" for a in node.names]
            elif node.module:
                names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif by_name and isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                names.append(node.args[0].value)
    return names


def test_core_modules_exist() -> None:
    assert len(CORE) >= 10


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_never_imports_fakes_scenarios_or_capabilities(path: Path) -> None:
    names = imported_modules(path, by_name=path.name not in LOADS_BY_NAME)
    bad = [m for m in names if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "pwh" / "x.py"
    sample.parent.mkdir()
    sample.write_text("from ..fakes import _sink\nimport fakes._host\nfrom .capabilities import periodic_report\n")
    found = imported_modules(sample)
    assert "fakes._host" in found and "pwh.capabilities.periodic_report" in found


def test_dispatcher_never_names_a_capability() -> None:
    # The LoopX adapter drives LoopX's *own* periodic-report capability through LoopX's commands
    # (what M10/M11 judge at its writeback boundary), so it names LoopX's modules; pwh never does.
    loopx = ROOT / "pwh" / "_suts" / "loopx"
    for path in CORE:
        text = path.read_text("utf-8")
        if path.name in ("vectors.py",) or path.is_relative_to(loopx):  # published example identities, not behaviour
            continue
        assert "periodic_report" not in text, f"{path.name} branches on a concrete capability"


def test_public_api_names_resolve() -> None:
    import pwh

    missing = [name for name in pwh.__all__ if not hasattr(pwh, name)]
    assert missing == [] and len(set(pwh.__all__)) == len(pwh.__all__)


# -- no import cycles in pwh, fakes or scenarios ------------------------------------------------
# Every import counts, the lazy ones inside functions too (a lazy import is still a dependency:
# it only hides a cycle until the function runs); imports under `if TYPE_CHECKING:` do not.


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_nodes(tree: ast.AST, *, type_checking: bool = False) -> list[ast.AST]:
    if type_checking:
        return list(ast.walk(tree))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    return [n for n in ast.walk(tree) if id(n) not in skipped]


def import_graph(root: Path, packages: tuple[str, ...], *, type_checking: bool = False) -> dict[str, set[str]]:
    """module -> the project modules it imports (submodules named in ``from pkg import sub`` count
    as the submodule, not the package); ``type_checking`` counts imports made for the type checker
    only as well."""
    paths = {_module_name(p, root): p for pkg in packages for p in (root / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in _runtime_nodes(ast.parse(path.read_text("utf-8"), str(path)), type_checking=type_checking):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                subs = [f"{base}.{a.name}" for a in node.names]
                targets = subs if all(s in paths for s in subs) else [base, *(s for s in subs if s in paths)]
            for target in targets:
                while target and target not in paths:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.add(target)
        graph[name] = found
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_pwh_fakes_and_scenarios_have_no_import_cycle() -> None:
    assert cycles(import_graph(ROOT, ("pwh", "fakes", "scenarios"))) == []


def test_the_cycle_check_sees_a_lazy_cycle_and_ignores_type_checking(tmp_path: Path) -> None:
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import y\n")
    (pkg / "d.py").write_text("from .c import z\n")
    graph = import_graph(tmp_path, ("p",))
    assert cycles(graph) == [["p.a", "p.b"]]
    assert graph["p.c"] == set() and graph["p.d"] == {"p.c"}


def test_all_is_exactly_the_public_names_of_pwh() -> None:
    """``pwh.__all__`` lists every public name the package defines (or loads on first use), and
    nothing else: a name added without listing it, or listed and gone, fails here."""
    import types

    import pwh

    defined = {n for n, v in vars(pwh).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert set(pwh.__all__) - {"__version__"} == defined | set(pwh._LAZY)
    assert {n for n in pwh._LAZY if getattr(pwh, n) is None} == set()


def test_the_producer_type_and_the_gate_and_packet_entry_points_are_public() -> None:
    import pwh

    assert pwh.Producer is __import__("pwh._core.registry", fromlist=["Producer"]).Producer
    assert pwh.run_gate.__module__ == "pwh._harness.gate" and pwh.verify_packet.__module__ == "pwh._harness.packet.verify"


# -- the layers, in order ------------------------------------------------------------------------
# Each layer may import the layers below it and itself, never one above: the core (what the RFC
# specifies) imports nothing else of pwh; the seam and its adapters the core; the harness both;
# each campaign those three and its own package; the capabilities the core only. The package
# itself, ``__main__`` and the CLI compose everything. ``pwh._version`` is a leaf all may import.
# Imports made for the type checker only count here too: a layer's types are part of what it
# depends on.

LAYERS: dict[str, tuple[str, ...]] = {
    "core": ("pwh._core",),
    "suts": ("pwh._suts",),
    "harness": ("pwh._harness",),
    "bench": ("pwh._bench",),
    "reliability": ("pwh._reliability",),
    "capabilities": ("pwh.capabilities",),
    "top": ("pwh", "pwh.__main__", "pwh._cli"),
}
MAY_IMPORT: dict[str, set[str]] = {
    "core": {"core"},
    "suts": {"core", "suts"},
    "harness": {"core", "suts", "harness"},
    "bench": {"core", "suts", "harness", "bench"},
    "reliability": {"core", "suts", "harness", "reliability"},
    "capabilities": {"core", "capabilities"},
    "top": set(LAYERS),
}
LEAVES = {"pwh._version"}


def layer_of(module: str) -> str | None:
    best: tuple[int, str | None] = (0, None)
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            exact = layer == "top"
            if (module == prefix or (not exact and module.startswith(prefix + "."))) and len(prefix) > best[0]:
                best = (len(prefix), layer)
    return best[1]


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(graph.items()):
        if module in LEAVES:
            assert targets == set(), f"{module} is a leaf and imports {targets}"
            continue
        mine = layer_of(module)
        assert mine is not None, f"{module} belongs to no layer: add it to LAYERS"
        for target in sorted(targets):
            theirs = layer_of(target)
            if target in LEAVES or not target.startswith("pwh"):
                continue
            if theirs not in MAY_IMPORT[mine]:
                found.append(f"{module} ({mine}) imports {target} ({theirs})")
    return found


def test_every_layer_imports_only_the_layers_below_it() -> None:
    graph = import_graph(ROOT, ("pwh",), type_checking=True)
    assert {layer_of(m) for m in graph if m not in LEAVES} == set(LAYERS)
    assert layer_violations(graph) == []


def test_the_layer_check_sees_an_upward_import() -> None:
    graph = {
        "pwh._core.a": {"pwh._harness.gate"},
        "pwh._harness.gate": {"pwh._core.a"},
        "pwh._suts.seam": {"pwh._bench.workloads"},
        "pwh.capabilities.x": {"pwh._suts.seam"},
        "pwh._bench.workloads": {"pwh._reliability.rig"},
        "pwh._cli": {"pwh._bench.workloads"},
    }
    assert layer_violations(graph) == [
        "pwh._bench.workloads (bench) imports pwh._reliability.rig (reliability)",
        "pwh._core.a (core) imports pwh._harness.gate (harness)",
        "pwh._suts.seam (suts) imports pwh._bench.workloads (bench)",
        "pwh.capabilities.x (capabilities) imports pwh._suts.seam (suts)",
    ]

"""The import graph the design card fixes: core pwh never imports fakes, scenarios or capabilities."""

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
    for path in CORE:
        text = path.read_text("utf-8")
        if path.name in ("_vectors.py",):  # published example identities, not behaviour
            continue
        assert "periodic_report" not in text, f"{path.name} branches on a concrete capability"


def test_public_api_names_resolve() -> None:
    import pwh

    missing = [name for name in pwh.__all__ if not hasattr(pwh, name)]
    assert missing == [] and len(set(pwh.__all__)) == len(pwh.__all__)

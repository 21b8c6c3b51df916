"""What an installed pwh holds: every package of the source tree and every data file it reads
(pyproject.toml lists them by hand; a package left out works from a checkout and fails installed)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]


def _packages_on_disk() -> set[str]:
    found = set()
    for top in ("pwh", "fakes", "scenarios"):
        for init in (ROOT / top).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                found.add(".".join(init.parent.relative_to(ROOT).parts))
    return found


def test_every_package_of_the_tree_is_installed() -> None:
    listed = set(CONFIG["packages"]) - {"pwh_features"}
    assert _packages_on_disk() - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - _packages_on_disk() == set()


def test_every_data_file_is_installed() -> None:
    patterns = {package: globs for package, globs in CONFIG["package-data"].items()}
    missing = []
    for path in sorted((ROOT / "pwh").rglob("*")):
        if path.is_dir() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        package_dir = path.parent
        while not (package_dir / "__init__.py").exists():
            package_dir = package_dir.parent
        package = ".".join(package_dir.relative_to(ROOT).parts)
        relative = path.relative_to(package_dir).as_posix()
        if not any(Path(relative).match(g) for g in patterns.get(package, [])):
            missing.append(f"{package}: {relative}")
    assert missing == [], "add these to [tool.setuptools.package-data] in pyproject.toml"
    features = sorted(p.name for p in (ROOT / "features").iterdir() if p.is_file())
    assert all(Path(name).match(g) for name in features for g in patterns["pwh_features"])

"""Each package of `toolturn` says what it offers the rest (issue 32, section 4): its
`__init__.py` has an explicit `__all__`, either the names it re-exports or the modules the other
packages may import; an import from outside a package of one of its modules not listed fails
here."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import toolturn

SIM = Path(toolturn.__file__).resolve().parent
PACKAGES = sorted(path.parent.name for path in SIM.glob("*/__init__.py"))


def module_names(package: str) -> set[str]:
    folder = SIM / package
    return {path.stem for path in folder.glob("*.py")} - {"__init__"} | {
        path.parent.name for path in folder.glob("*/__init__.py")
    }


def test_every_package_has_an_explicit_all() -> None:
    for package in PACKAGES:
        module = importlib.import_module(f"toolturn.{package}")
        names = module.__dict__.get("__all__")
        assert isinstance(names, list), f"toolturn.{package} has no __all__"
        modules = module_names(package)
        for name in names:
            assert name in modules or hasattr(module, name), f"toolturn.{package}: {name}?"


def test_other_packages_import_only_the_listed_modules() -> None:
    listed = {}
    for package in PACKAGES:
        names = importlib.import_module(f"toolturn.{package}").__all__
        if set(names) <= module_names(package):  # a package that lists its modules
            listed[package] = set(names)
    assert "engine" in listed and "runner" in listed["engine"]
    outside: list[str] = []
    for path in sorted(SIM.rglob("*.py")):
        parts = path.relative_to(SIM).parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            dotted = node.module.split(".")
            if dotted[0] != "toolturn" or len(dotted) < 2 or dotted[1] not in listed:
                continue
            if len(parts) > 1 and parts[0] == dotted[1]:
                continue  # within the package
            wanted = [dotted[2]] if len(dotted) > 2 else [a.name for a in node.names]
            outside += [
                f"{path.relative_to(SIM.parent)}: toolturn.{dotted[1]}.{name}"
                for name in wanted
                if name in module_names(dotted[1]) and name not in listed[dotted[1]]
            ]
    # A module newly imported from another package: add its name to that package's __all__.
    assert outside == [], "imported from outside, not in the package's __all__: " + ", ".join(
        outside
    )

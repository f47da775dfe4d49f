"""Each package of `toolturn` says what it offers the rest (issue 32, section 4): its
`__init__.py` (toolturn's own, and nested ones such as runtime.openai) has an explicit `__all__`,
either the names it re-exports or the modules the other packages may import; an import from
outside a package of one of its modules not listed fails here."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import toolturn

SIM = Path(toolturn.__file__).resolve().parent
# Every package by its dotted path under toolturn: "" (toolturn itself), "engine",
# "runtime.openai", ...
PACKAGES = sorted(".".join(path.parent.relative_to(SIM).parts) for path in SIM.rglob("__init__.py"))


def qualified(package: str) -> str:
    return f"toolturn.{package}" if package else "toolturn"


def module_names(package: str) -> set[str]:
    folder = SIM.joinpath(*package.split(".")) if package else SIM
    return {path.stem for path in folder.glob("*.py")} - {"__init__"} | {
        path.parent.name for path in folder.glob("*/__init__.py")
    }


def test_every_package_has_an_explicit_all() -> None:
    assert {"", "runtime.openai", "engine.backends"} <= set(PACKAGES)  # nested ones too
    for package in PACKAGES:
        module = importlib.import_module(qualified(package))
        names = module.__dict__.get("__all__")
        assert isinstance(names, list), f"{qualified(package)} has no __all__"
        modules = module_names(package)
        for name in names:
            assert name in modules or hasattr(module, name), f"{qualified(package)}: {name}?"


def test_other_packages_import_only_the_listed_modules() -> None:
    listed: dict[tuple[str, ...], set[str]] = {}
    for package in PACKAGES:
        names = importlib.import_module(qualified(package)).__all__
        if package and set(names) <= module_names(package):  # a package that lists its modules
            listed[tuple(package.split("."))] = set(names)
    assert ("engine",) in listed and "runner" in listed[("engine",)]
    assert ("runtime", "openai") in listed
    outside: list[str] = []
    for path in sorted(SIM.rglob("*.py")):
        parts = path.relative_to(SIM).parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            dotted = node.module.split(".")
            if dotted[0] != "toolturn":
                continue
            for package, names in listed.items():
                depth = 1 + len(package)
                if tuple(dotted[1:depth]) != package or parts[: len(package)] == package:
                    continue  # another package's import, or one within the package
                wanted = [dotted[depth]] if len(dotted) > depth else [a.name for a in node.names]
                outside += [
                    f"{path.relative_to(SIM.parent)}: {qualified('.'.join(package))}.{name}"
                    for name in wanted
                    if name in module_names(".".join(package)) and name not in names
                ]
    # A module newly imported from another package: add its name to that package's __all__.
    assert outside == [], "imported from outside, not in the package's __all__: " + ", ".join(
        outside
    )

"""Dependencies as used (issue 14, section 5): every third-party module toolturn/ imports is a
declared runtime dependency, every runtime dependency is imported by toolturn/, and constraints.txt
pins every declared dependency at a version its specifier allows."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _requirements(specs: list[str]) -> dict[str, Requirement]:
    return {canonicalize_name(req.name): req for req in map(Requirement, specs)}


RUNTIME = _requirements(PROJECT["dependencies"])
EXTRAS = {
    name: _requirements(specs) for name, specs in PROJECT["optional-dependencies"].items()
}


def _imported_distributions(folder: Path) -> set[str]:
    modules: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    third_party = {
        m for m in modules
        if m not in sys.stdlib_module_names and m != "toolturn" and m not in OPTIONAL_MODULES
    }
    owners = packages_distributions()
    unknown = sorted(m for m in third_party if m not in owners)
    assert not unknown, f"imported by {folder.name}/ but installed by no distribution: {unknown}"
    return {canonicalize_name(owners[m][0]) for m in third_party}


# Modules toolturn/ imports only for an optional backend (toolturn/engine/backends/), by the extra
# that installs them (ray need not be installed to test the rest).
OPTIONAL_MODULES = {"distributed": "dask", "dask": "dask", "ray": "ray"}


def test_optional_backends_are_their_extras_and_imported_only_there() -> None:
    for module, extra in OPTIONAL_MODULES.items():
        assert canonicalize_name(module) in EXTRAS[extra], f"{module} is not the {extra} extra"
        importers = [
            path.relative_to(ROOT).as_posix()
            for path in (ROOT / "toolturn").rglob("*.py")
            if re.search(rf"^\s*import {module}\b", path.read_text(encoding="utf-8"), re.M)
        ]
        assert importers and all(
            path.startswith("toolturn/engine/backends/") for path in importers
        ), (module, importers)


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==(\S+)", line.strip())
        if match:
            pins[canonicalize_name(match[1])] = match[2]
    return pins


def test_runtime_dependencies_are_exactly_what_sim_imports() -> None:
    imported = _imported_distributions(ROOT / "toolturn")
    assert sorted(imported - RUNTIME.keys()) == [], "imported by toolturn/ but not declared"
    assert sorted(RUNTIME.keys() - imported) == [], "declared but not imported by toolturn/"


def test_constraints_pin_every_declared_dependency_within_its_range() -> None:
    pins = _pins()
    declared = dict(RUNTIME)
    for extra in EXTRAS.values():
        declared.update(extra)
    for name, requirement in declared.items():
        assert name in pins, f"{name} is not pinned in constraints.txt"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {name}=={pins[name]}, outside {requirement.specifier}"
        )

"""Every import of `toolturn` follows the dependency order drawn in `toolturn/__init__.py` (issue
15, section 1): a package or module imports only those drawn before it, so there is no circle
between packages and the runtime stays at the bottom."""

from __future__ import annotations

import ast
from pathlib import Path

import toolturn

SIM = Path(toolturn.__file__).resolve().parent
NAMES_WIDTH = 32  # the drawing's first column: names; the rest of a line says what they are


def drawn_order() -> list[str]:
    """The packages and modules of `toolturn`, in the order the docstring draws them."""
    doc = toolturn.__doc__ or ""
    block = doc.split("Dependency order.", 1)[1].split("\n\n", 2)[1]
    order: list[str] = []
    for line in block.splitlines():
        assert line.startswith("    "), line
        order += line[4 : 4 + NAMES_WIDTH].split()
    return order


def unit_of(path: Path) -> str:
    """The package (or top-level module) of `toolturn` a source file belongs to."""
    parts = path.relative_to(SIM).with_suffix("").parts
    return parts[0]


def imported_units(tree: ast.AST) -> set[str]:
    """Every package or module of `toolturn` a module imports, wherever the import is written
    (inside functions and under TYPE_CHECKING too)."""
    units: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "toolturn":
                units.update(alias.name for alias in node.names)
            elif node.module.startswith("toolturn."):
                units.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            units.update(
                alias.name.split(".")[1] for alias in node.names
                if alias.name.startswith("toolturn.")
            )
    return units


def test_the_drawing_names_every_package_and_module_once() -> None:
    order = drawn_order()
    assert len(order) == len(set(order))
    sources = {unit_of(path) for path in SIM.rglob("*.py")} - {"__init__"}
    assert set(order) == sources
    assert order[0] == "runtime"


def test_every_import_of_sim_goes_down_the_order() -> None:
    rank = {name: position for position, name in enumerate(drawn_order())}
    upward: list[str] = []
    for path in sorted(SIM.rglob("*.py")):
        unit = unit_of(path)
        if unit == "__init__":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for imported in sorted(imported_units(tree) & rank.keys() - {unit}):
            if rank[imported] > rank[unit]:
                upward.append(f"{path.relative_to(SIM.parent)} imports toolturn.{imported}")
    assert upward == []


def test_an_upward_import_is_caught() -> None:
    # The check itself: the runtime importing the engine would be reported.
    tree = ast.parse("from toolturn.engine.simulation import simulate\nimport toolturn.tools.spec")
    assert imported_units(tree) == {"engine", "tools"}
    order = drawn_order()
    assert order.index("engine") > order.index("runtime")


# Issue 32, section 4: the engine was one 720-line runner doing four jobs; no module of it may
# grow that way again.
ENGINE_MODULE_LINES = 450


def test_no_engine_module_passes_its_line_limit() -> None:
    long = {
        path.relative_to(SIM.parent).as_posix(): lines
        for path in sorted((SIM / "engine").rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > ENGINE_MODULE_LINES
    }
    assert long == {}, f"engine modules over {ENGINE_MODULE_LINES} lines: {long}"

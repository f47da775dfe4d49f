"""The executor and the loop stay sans-I/O: no clocks, no event loops, no threads, no randomness,
and nothing of `toolturn` outside `toolturn.runtime` (DESIGN.md rule 1)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "toolturn" / "runtime"
MODULES = [
    "executor", "loop", "commands", "outcomes", "results", "record", "policy", "permission",
    "retry", "attachments",
]
FORBIDDEN = {
    "simpy", "asyncio", "threading", "time", "random", "socket", "subprocess", "os", "numpy",
}


def imported(module: str) -> set[str]:
    tree = ast.parse((RUNTIME / f"{module}.py").read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_nothing_that_does_io(module: str) -> None:
    for name in imported(module):
        assert name.split(".")[0] not in FORBIDDEN, f"{module} imports {name}"
        if name.split(".")[0] == "toolturn":
            assert name.startswith("toolturn.runtime."), f"{module} imports {name}"

"""DESIGN.md rule 1: `toolturn/runtime/` never imports I/O, clocks, concurrency or
the rest of `toolturn`."""

import ast
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "toolturn" / "runtime"
FORBIDDEN = {"simpy", "asyncio", "threading", "multiprocessing", "time", "random", "socket",
             "subprocess", "os", "io", "pathlib", "numpy", "httpx", "httpx2", "anthropic",
             "openai"}


def imported_modules(source: Path) -> set[str]:
    tree = ast.parse(source.read_text(), filename=str(source))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


# Subpackages too (runtime/openai/): a module one level down is as much the runtime.
@pytest.mark.parametrize(
    "source", sorted(RUNTIME.rglob("*.py")), ids=lambda path: str(path.relative_to(RUNTIME))
)
def test_runtime_module_is_sans_io(source: Path) -> None:
    for module in imported_modules(source):
        top = module.split(".")[0]
        assert top not in FORBIDDEN, f"{source.name} imports {module}"
        if top == "toolturn":
            assert module.startswith("toolturn.runtime"), f"{source.name} imports {module}"

"""The examples in the package's docstrings run as written: a user copies them."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import toolturn

PACKAGE = Path(toolturn.__file__).resolve().parent
WITH_EXAMPLES = sorted(
    path for path in PACKAGE.rglob("*.py") if ">>> " in path.read_text(encoding="utf-8")
)


def test_some_module_has_examples() -> None:
    assert WITH_EXAMPLES


@pytest.mark.parametrize("path", WITH_EXAMPLES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_the_examples_run(path: Path) -> None:
    name = ".".join(("toolturn", *path.relative_to(PACKAGE).with_suffix("").parts))
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0

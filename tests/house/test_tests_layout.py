"""The tests mirror the package (issue 32): each folder of tests is named for the package of
`toolturn` it tests, or for one of the few concerns that are not a package (the docs, the house
rules, the benchmarks); no test module sits loose at the top of `tests/`."""

from __future__ import annotations

from pathlib import Path

import toolturn

TESTS = Path(__file__).resolve().parents[1]
PACKAGE = Path(toolturn.__file__).resolve().parent
NOT_PACKAGES = {"docs", "house", "bench"}
SUPPORT = {"fixtures", "golden", "helpers", "browser"}


def test_no_test_module_sits_at_the_top() -> None:
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []


def test_every_folder_of_tests_is_named_for_a_package() -> None:
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    folders = {p.parent.name for p in TESTS.glob("*/test_*.py")}
    assert folders - SUPPORT, "no test folders found"
    assert sorted(folders - packages - NOT_PACKAGES - SUPPORT) == []

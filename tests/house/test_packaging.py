"""Packaging: one version source, and the PEP 561 marker shipped (issue 14, section 5)."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import toolturn

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_has_one_source() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert metadata.version("toolturn-sim") == toolturn.__version__


def test_the_package_is_marked_typed_and_ships_the_marker() -> None:
    assert (Path(toolturn.__file__).parent / "py.typed").is_file()
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert "py.typed" in setuptools["setuptools"]["package-data"]["toolturn"]

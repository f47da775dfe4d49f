"""Which page each reference is and how it is made; writing them, and finding the stale ones."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolturn.reference import commands, scenario_keys, tables

# The folder the pages live in, from the checkout's top (where `make docs` runs).
FOLDER = Path("docs") / "reference"
PAGES: dict[str, Callable[[], str]] = {
    "scenario.md": scenario_keys.render,
    "tables.md": tables.render,
    "commands.md": commands.render,
}
REMAKE = "make docs (or: python -m toolturn.reference)"


def write(folder: Path) -> list[Path]:
    """Write every page into `folder`; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, render in PAGES.items():
        path = folder / name
        path.write_text(render(), encoding="utf-8")
        written.append(path)
    return written


def stale(folder: Path) -> list[Path]:
    """The pages in `folder` that are missing or differ from what the code makes now."""
    return [
        folder / name for name, render in PAGES.items()
        if not (folder / name).is_file()
        or (folder / name).read_text(encoding="utf-8") != render()
    ]

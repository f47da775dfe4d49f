"""The scenarios that ship with the package, and the command line's lookup of one by name.

`toolturn/scenarios` is a symbolic link to the checkout's `scenarios/` folder, and pyproject.toml
ships its files as package data: the wheel's copies are those files, so they cannot drift from
what the README and `make run` use. In an installed wheel the link is a real folder.

Rules:
1. A scenario argument that names an existing file is that file, always.
2. Otherwise a bare name (no folder part, with or without `.toml`) is the packaged scenario of
   that name, if there is one: `toolturn run default`.
3. Otherwise a bare name near a packaged one (`defualt`) is a usage error that names it
   ("did you mean default?"): a misspelt name is far likelier than a missing file.
4. Otherwise the argument is left as it is, and reading it reports the missing file.
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path

PACKAGED_DIR = Path(__file__).resolve().parent.parent / "scenarios"
SUFFIX = ".toml"


def packaged_names() -> list[str]:
    """The names of the packaged scenarios (`default`, `overload`, ...), sorted."""
    return sorted(path.stem for path in PACKAGED_DIR.glob(f"*{SUFFIX}"))


def packaged_path(name: str) -> Path | None:
    """The packaged scenario called `name` (`default` or `default.toml`), or None."""
    if Path(name).name != name or name in ("", ".", ".."):
        return None
    path = PACKAGED_DIR / (name if name.endswith(SUFFIX) else name + SUFFIX)
    return path if path.is_file() else None


def near_names(name: str) -> list[str]:
    """The packaged names `name` (a bare name, with or without `.toml`) may be a misspelling of,
    nearest first."""
    return difflib.get_close_matches(name.removesuffix(SUFFIX), packaged_names(), n=3, cutoff=0.6)


def resolved(text: str) -> Path:
    """A scenario argument as a path by rules 1, 2 and 4 (never an error)."""
    given = Path(text)
    if given.exists():
        return given
    return packaged_path(text) or given


def misspelt(text: str) -> str | None:
    """Rule 3's message for a scenario argument, or None when it is not a near miss."""
    if Path(text).exists() or packaged_path(text) is not None or Path(text).name != text:
        return None
    near = near_names(text)
    if not near:
        return None
    return f"{text}: no such file or packaged scenario; did you mean {' or '.join(near)}?"


def scenario_argument(text: str) -> Path:
    """A SCENARIO argument of the command line as a path, by the rules above (argparse `type`:
    rule 3 raises `argparse.ArgumentTypeError`, which argparse prints with the command's usage)."""
    message = misspelt(text)
    if message is not None:
        raise argparse.ArgumentTypeError(message)
    return resolved(text)

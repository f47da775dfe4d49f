"""The scenarios that ship with the package, and the command line's lookup of one by name.

`toolturn/scenarios` is a symbolic link to the checkout's `scenarios/` folder, and pyproject.toml
ships its files as package data: the wheel's copies are those files, so they cannot drift from
what the README and `make run` use. In an installed wheel the link is a real folder.

Rules:
1. A scenario argument that names an existing file is that file, always.
2. Otherwise a bare name (no folder part, with or without `.toml`) is the packaged scenario of
   that name, if there is one: `toolturn run default`.
3. Otherwise the argument is left as it is, and reading it reports the missing file.
"""

from __future__ import annotations

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


def scenario_argument(text: str) -> Path:
    """A SCENARIO argument of the command line as a path, by the rules above (argparse `type`)."""
    given = Path(text)
    if given.exists():
        return given
    return packaged_path(text) or given

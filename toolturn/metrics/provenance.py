"""Where a run came from: package versions, the git commit of the code, a scenario file's hash."""

from __future__ import annotations

import hashlib
import subprocess
from importlib import metadata
from pathlib import Path

# Distribution names of the packages whose versions a run records (the project's own first).
# The labels are keys of run.json's `versions`: data, kept across the package's rename.
RECORDED_PACKAGES: tuple[tuple[str, str], ...] = (
    ("sim", "toolturn-sim"),
    ("numpy", "numpy"),
    ("pyarrow", "pyarrow"),
    ("simpy", "simpy"),
    ("anthropic", "anthropic"),
)
# What a person reads for a label: the project is `toolturn` (it was `sim`).
_SHOWN_LABELS = {"sim": "toolturn"}


def shown_label(label: str) -> str:
    """The name a page shows for a recorded package's label (`sim` is `toolturn`)."""
    return _SHOWN_LABELS.get(label, label)


def package_versions() -> dict[str, str | None]:
    """Installed versions of the recorded packages; None for one that is not installed."""
    versions: dict[str, str | None] = {}
    for label, distribution in RECORDED_PACKAGES:
        try:
            versions[label] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            versions[label] = None
    return versions


def git_commit(where: Path | None = None) -> str | None:
    """The commit checked out where the code lives (or at ``where``); None outside a repository.

    Best effort: a missing ``git`` or any git error also gives None.
    """
    folder = where if where is not None else Path(__file__).resolve().parent
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes (the scenario hash a run records)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()

"""Directories that appear whole or not at all: written in a hidden sibling, then renamed.

A failure while writing removes the sibling and leaves the destination as it was; a process
killed mid-write leaves at most a hidden ``.<name>.partial-*`` sibling, never a half folder or a
half file at the destination. Files and folders are flushed to disk before the rename so that a
power cut cannot expose an empty file under the final name either.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_directory(destination: Path, *, replace: bool = False) -> Iterator[Path]:
    """Yields an empty staging folder that becomes ``destination`` when the block succeeds.

    An existing ``destination`` raises ``FileExistsError`` up front, unless ``replace`` is true:
    then the old folder is swapped out by rename and deleted once the new one is in place.
    """
    destination = Path(destination)
    if destination.exists() and not replace:
        raise FileExistsError(f"{destination}: already exists")
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = _fresh_sibling(destination, "partial")
    try:
        yield staging
        _sync_tree(staging)
        _swap_into_place(staging, destination)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _sync(destination.parent)


def _fresh_sibling(destination: Path, purpose: str) -> Path:
    # os.mkdir (not tempfile.mkdtemp) so the folder gets the user's umask, not mode 0700.
    attempt = 0
    while True:
        candidate = destination.parent / f".{destination.name}.{purpose}-{os.getpid()}-{attempt}"
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            attempt += 1


def _swap_into_place(staging: Path, destination: Path) -> None:
    if not destination.exists():
        os.replace(staging, destination)
        return
    # Renaming a folder onto an empty folder replaces it: move the old one aside that way.
    old = _fresh_sibling(destination, "old")
    os.replace(destination, old)
    try:
        os.replace(staging, destination)
    except OSError:
        os.replace(old, destination)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _sync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            _sync(path)
    _sync(folder)


def _sync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)

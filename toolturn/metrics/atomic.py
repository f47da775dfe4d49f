"""Directories that appear whole or not at all: written in a hidden sibling, then renamed.

A failure while writing removes the sibling and leaves the destination as it was; a process
killed mid-write leaves at most a hidden ``.<name>.partial-*`` sibling, never a half folder or a
half file at the destination. Files and folders are flushed to disk before the rename so that a
power cut cannot expose an empty file under the final name either.

``check_destination`` tells, before any work is done, whether a destination can be written and,
if it exists, whether it may be replaced: only a folder holding the file that marks it as ours.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolturn.errors import UserError


def check_destination(destination: Path, *, replace: bool, kind: str, marker: str) -> None:
    """Raises ``UserError`` naming ``destination`` unless ``atomic_directory`` can write it.

    An existing destination is an error unless ``replace`` is true and it is a ``kind`` of
    folder: a folder (not a symbolic link) holding a file named ``marker``, what this program
    wrote there before, never someone else's files. Then the folders the write will create (the
    missing parents and a staging sibling) are created and removed again, so that an unwritable
    place, a file in the way or an over-long name fails now rather than after the work.
    """
    destination = Path(destination)
    if destination.name in ("", ".."):
        raise UserError(f"{destination}: name the folder itself, not . or .. or /")
    try:
        _check_replaceable(destination, replace, kind, marker)
        _try_creating(destination)
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise UserError(f"{destination}: cannot write there ({reason})") from None


def _check_replaceable(destination: Path, replace: bool, kind: str, marker: str) -> None:
    if not os.path.lexists(destination):
        return
    if not replace:
        raise UserError(f"{destination}: already exists")
    if destination.is_symlink() or not destination.is_dir():
        raise UserError(f"{destination}: not a folder; only a {kind} is replaced")
    if not (destination / marker).is_file():
        raise UserError(f"{destination}: not a {kind} (no {marker}); only a {kind} is replaced")


def _try_creating(destination: Path) -> None:
    missing = [folder for folder in destination.parents if not folder.exists()]
    created: list[Path] = []
    try:
        for folder in reversed(missing):
            folder.mkdir()
            created.append(folder)
        created.append(_fresh_sibling(destination, "partial"))
    finally:
        for folder in reversed(created):
            folder.rmdir()


@contextmanager
def scratch_sibling(
    destination: Path, purpose: str, *, keep: tuple[type[BaseException], ...] = ()
) -> Iterator[Path]:
    """Yields the hidden sibling ``.<name>.<purpose>`` of ``destination`` (created, with any
    missing parents), for work that ``atomic_directory`` later turns into the destination: a
    run's part files. The sibling is removed on leaving, and so are the parents it created if
    the destination was not made meanwhile; a block left by an exception of a type in ``keep``
    keeps it (to be taken up again: ``toolturn run --resume``)."""
    destination = Path(destination)
    missing = [folder for folder in destination.parents if not folder.exists()]
    sibling = destination.parent / f".{destination.name}.{purpose}"
    sibling.mkdir(parents=True, exist_ok=True)
    kept = False
    try:
        yield sibling
    except keep:
        kept = True
        raise
    finally:
        if not kept:
            shutil.rmtree(sibling, ignore_errors=True)
            for folder in missing:
                if not destination.exists():
                    try:
                        folder.rmdir()
                    except OSError:
                        break


@contextmanager
def atomic_directory(destination: Path, *, replace: bool = False) -> Iterator[Path]:
    """Yields an empty staging folder that becomes ``destination`` when the block succeeds.

    An existing ``destination`` raises ``FileExistsError`` up front, unless ``replace`` is true:
    then the old folder is swapped out by rename and deleted once the new one is in place. An
    existing destination that is not a folder raises ``NotADirectoryError`` up front.
    """
    destination = Path(destination)
    if destination.exists() and not replace:
        raise FileExistsError(f"{destination}: already exists")
    if destination.exists() and not destination.is_dir():
        raise NotADirectoryError(f"{destination}: not a folder")
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
    try:
        os.replace(destination, old)
    except OSError:
        old.rmdir()
        raise
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

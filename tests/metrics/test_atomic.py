"""Atomic folders: what `check_destination` refuses before any work, and that a failed swap or a
destination that is not a folder leaves nothing behind."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest

from toolturn.errors import UserError
from toolturn.metrics import atomic
from toolturn.metrics.atomic import atomic_directory, check_destination


def everything(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*"))


def check(destination: Path, replace: bool = True) -> None:
    check_destination(destination, replace=replace, kind="run folder", marker="run.json")


def test_a_writable_place_passes_and_keeps_nothing_of_the_check(tmp_path: Path) -> None:
    check(tmp_path / "a" / "b" / "run")
    assert everything(tmp_path) == []


def test_an_earlier_run_folder_may_be_replaced_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}")
    check(tmp_path / "run")
    with pytest.raises(UserError, match="run: already exists"):
        check(tmp_path / "run", replace=False)


@pytest.mark.parametrize(
    ("name", "wording"),
    [
        ("bad\0name", "cannot write there (embedded null byte)"),
        ("x" * 250, "cannot write there (File name too long)"),
    ],
)
def test_names_the_system_refuses_are_user_errors(
    tmp_path: Path, name: str, wording: str
) -> None:
    with pytest.raises(UserError, match=re.escape(wording)):
        check(tmp_path / name)
    assert everything(tmp_path) == []


def test_replacing_a_file_is_refused_up_front_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("mine")
    with pytest.raises(NotADirectoryError), atomic_directory(tmp_path / "afile", replace=True):
        raise AssertionError("never reached")
    assert everything(tmp_path) == [tmp_path / "afile"]
    assert (tmp_path / "afile").read_text() == "mine"


def test_a_destination_that_cannot_be_moved_aside_leaves_no_sibling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    destination = tmp_path / "run"
    destination.mkdir()
    (destination / "old.txt").write_text("old")
    real_replace = os.replace

    def busy(source: Path, target: Path) -> None:
        if Path(source) == destination:  # as renaming a mount point or / is refused
            raise OSError(errno.EBUSY, "Device or resource busy")
        real_replace(source, target)

    monkeypatch.setattr(atomic.os, "replace", busy)
    with pytest.raises(OSError, match="busy"), atomic_directory(destination, replace=True) as new:
        (new / "new.txt").write_text("new")
    assert everything(tmp_path) == [destination, destination / "old.txt"]

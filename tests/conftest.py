"""Fixtures shared by several test modules (their helpers are in tests/helpers/)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.damaged_resume import DamagedResumeLoop
from tests.helpers.kept_loops import KeptLoop
from toolturn.engine.loop_factory import LoopFactory
from toolturn.runtime.loop import ToolTurnLoop


@pytest.fixture
def damaged_resume(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every loop of a simulation in this process resumes from `LOST`
    (tests/helpers/damaged_resume.py)."""
    monkeypatch.setattr(LoopFactory, "loop_class", DamagedResumeLoop)
    yield


@pytest.fixture
def kept_loops(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ToolTurnLoop]]:
    """Every loop of a simulation in this process, kept in the list it yields, in the order made."""
    KeptLoop.kept = []
    monkeypatch.setattr(LoopFactory, "loop_class", KeptLoop)
    yield KeptLoop.kept

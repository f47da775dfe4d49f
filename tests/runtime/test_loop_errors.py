"""Every exception the runtime defines shares one base class, `ToolTurnError` (issue 32,
section 4), and keeps the built-in base it had, so that old handlers still catch it."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import toolturn.runtime
from toolturn.runtime import (
    ExecutorClosedError,
    PairingError,
    PhaseError,
    StreamProtocolError,
    ToolTurnError,
    TranscriptShapeError,
)


def runtime_exceptions() -> list[type[BaseException]]:
    found = []
    for module in pkgutil.iter_modules(toolturn.runtime.__path__):
        loaded = importlib.import_module(f"toolturn.runtime.{module.name}")
        found += [
            value for value in vars(loaded).values()
            if isinstance(value, type) and issubclass(value, BaseException)
            and value.__module__ == loaded.__name__
        ]
    return found


def test_every_runtime_exception_is_a_tool_turn_error() -> None:
    found = runtime_exceptions()
    assert set(found) >= {
        ExecutorClosedError, PairingError, PhaseError, StreamProtocolError, TranscriptShapeError,
    }
    assert [error for error in found if not issubclass(error, ToolTurnError)] == []


@pytest.mark.parametrize(
    ("error", "builtin"),
    [(TranscriptShapeError, ValueError), (ExecutorClosedError, RuntimeError),
     (PhaseError, RuntimeError)],
)
def test_each_keeps_its_builtin_base(error: type[Exception], builtin: type[Exception]) -> None:
    assert issubclass(error, builtin)

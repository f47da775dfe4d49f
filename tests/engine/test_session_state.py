"""The session's guards (`toolturn.engine.session_state`): `acts` counts a callback and stops a
session past its bounds; `acts_strictly` does that and turns the loop's `PairingError` into
`StrictModeStop`, which plain `acts` lets through."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from toolturn.engine.bounds import SessionRunaway
from toolturn.engine.session_state import SessionState, acts, acts_strictly
from toolturn.engine.strict import StrictModeStop
from toolturn.runtime.repair import PairingError


class _Session(SessionState):
    """Just the state the guards and their stops read."""

    def __init__(self, max_actions: int) -> None:
        self.actions = 0
        self.max_actions = max_actions
        self.deadline_ns = 1_000
        self.faults = None
        self.session_id = 7
        self.env: Any = SimpleNamespace(now=5)
        self.context: Any = SimpleNamespace(
            seed=3, policy="streaming", profile="default",
            bounds=SimpleNamespace(actions=max_actions, span_ns=1_000),
        )

    @acts
    def plain(self, error: Exception | None) -> str:
        if error is not None:
            raise error
        return "ran"

    @acts_strictly
    def strict(self, error: Exception | None) -> str:
        if error is not None:
            raise error
        return "ran"


def test_each_guard_counts_its_calls_and_returns_the_methods_value() -> None:
    session = _Session(max_actions=10)
    assert session.plain(None) == "ran"
    assert session.strict(None) == "ran"
    assert session.actions == 2


@pytest.mark.parametrize("guarded", ["plain", "strict"])
def test_a_call_past_the_action_bound_stops_the_session(guarded: str) -> None:
    session = _Session(max_actions=1)
    getattr(session, guarded)(None)
    with pytest.raises(SessionRunaway, match="more than 1 actions"):
        getattr(session, guarded)(None)


@pytest.mark.parametrize("guarded", ["plain", "strict"])
def test_a_call_past_the_deadline_stops_the_session(guarded: str) -> None:
    session = _Session(max_actions=10)
    session.env.now = 2_000
    with pytest.raises(SessionRunaway, match="still acting"):
        getattr(session, guarded)(None)


def test_only_the_strict_guard_turns_a_pairing_error_into_a_strict_stop() -> None:
    session = _Session(max_actions=10)
    with pytest.raises(PairingError):
        session.plain(PairingError(["missing tool_result"]))
    with pytest.raises(StrictModeStop, match="missing tool_result") as stopped:
        session.strict(PairingError(["missing tool_result"]))
    assert (stopped.value.seed, stopped.value.session_id, stopped.value.time_ns) == (3, 7, 5)


def test_other_errors_pass_through_both_guards() -> None:
    session = _Session(max_actions=10)
    for guarded in (session.plain, session.strict):
        with pytest.raises(KeyError):
            guarded(KeyError("x"))

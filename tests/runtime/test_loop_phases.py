"""The loop's phases as data (rule 15): a walk through scripted sessions that takes every move of
`TRANSITIONS` at least once and no other; a move outside the table is a `PhaseError`."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.helpers.loop_tools import TOOLS, tool_response
from tests.helpers.runtime_script import (
    error_event,
    feed,
    message_start,
    text_block,
    text_response,
)
from toolturn.runtime.loop import TRANSITIONS, Phase, PhaseError, ToolTurnLoop

Move = tuple[Phase, Phase]


def walk(script: Callable[[ToolTurnLoop], object], **settings: object) -> list[Move]:
    """The moves the loop makes while `script` drives it."""
    loop = ToolTurnLoop(TOOLS, model="m", **settings)  # type: ignore[arg-type]
    moves: list[Move] = []
    enter = loop._enter

    def spy(phase: Phase) -> None:
        moves.append((loop.phase, phase))
        enter(phase)

    loop._enter = spy  # type: ignore[method-assign]
    script(loop)
    return moves


def a_turn_of_tools_then_an_answer(loop: ToolTurnLoop) -> None:
    loop.start("go", 0)
    feed(loop, tool_response("msg_1", ("a", "Read", {"path": "/a"})), 10)
    loop.tool_finished("a", "success", "A", 500)
    feed(loop, text_response("msg_2", "done"), 600)


def a_retry_then_a_fallback(loop: ToolTurnLoop) -> None:
    loop.start("go", 0)
    loop.request_failed(500, 10)          # awaiting -> backoff
    loop.wake(10 + 500_000_000)           # backoff -> awaiting
    loop.request_failed(529, 600_000_000)  # fallback at once: awaiting -> awaiting


def a_fallback_mid_stream(loop: ToolTurnLoop) -> None:
    loop.start("go", 0)
    feed(loop, [message_start("msg_1")], 10)
    loop.on_event(error_event("overloaded_error"), 20)  # fallback at once: streaming -> awaiting


def a_mid_stream_retry_then_an_interrupt_in_backoff(loop: ToolTurnLoop) -> None:
    loop.start("go", 0)
    feed(loop, [message_start("msg_1")], 10)
    loop.on_event(error_event("overloaded_error"), 20)  # streaming -> backoff
    loop.interrupt(30)                                   # backoff -> idle


def a_kept_cut_retried_after_the_backoff(loop: ToolTurnLoop) -> None:
    loop.start("go", 0)
    feed(loop, [message_start("msg_1"), *text_block(0, "Loo")[:2]], 10)  # a text block open
    loop.stream_ended(40)                                # streaming -> tools (nothing kept)
    # the batch is complete at once: tools -> backoff (rule 9g, the `codex` profile)


def an_interrupt_while_waiting(loop: ToolTurnLoop) -> None:
    loop.start("go", 0)
    loop.interrupt(5)                                    # awaiting -> idle


SCRIPTS: list[tuple[Callable[[ToolTurnLoop], object], dict[str, object]]] = [
    (a_turn_of_tools_then_an_answer, {}),
    (a_retry_then_a_fallback, {"fallback_model": "f", "fallback_after": 1}),
    (a_fallback_mid_stream, {"fallback_model": "f", "fallback_after": 1}),
    (a_mid_stream_retry_then_an_interrupt_in_backoff, {}),
    (an_interrupt_while_waiting, {}),
    (a_kept_cut_retried_after_the_backoff, {"profile": "codex"}),
]


def test_the_walk_takes_every_move_of_the_table_and_no_other() -> None:
    table = {(start, end) for start, ends in TRANSITIONS.items() for end in ends}
    seen = {move for script, settings in SCRIPTS for move in walk(script, **settings)}
    assert seen == table
    assert set(TRANSITIONS) == set(Phase)


def test_a_move_outside_the_table_is_refused() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    with pytest.raises(PhaseError, match="idle -> tools is not a transition"):
        loop._enter(Phase.TOOLS)

"""The loop's state of three lifetimes (issue 32, section 4): the session's is one
`SessionState` (beside the loop's public attributes), a turn's one `TurnState` made anew per
turn (kept across its retries and fallbacks), an attempt's one `AttemptState` made anew per
request sent; nothing of one turn or attempt is left over in the next."""

from __future__ import annotations

from tests.helpers.loop_tools import TOOLS, tool_response
from tests.helpers.runtime_script import feed, text_response
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.loop_state import AttemptState, SessionState, TurnState


def test_each_turn_and_each_attempt_has_its_own_state() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", fallback_model="f", fallback_after=1)
    session = loop._session
    assert isinstance(session, SessionState) and session.turn == 0
    loop.start("go", 0)
    turn, attempt = loop._turn_state, loop._attempt_state
    assert isinstance(turn, TurnState) and isinstance(attempt, AttemptState)
    assert (turn.attempt, turn.retries) == (1, 0)
    loop.request_failed(500, 10)  # a retry, after a backoff: the same turn, a new attempt
    loop.wake(10 + 500_000_000)
    assert loop._turn_state is turn and (turn.attempt, turn.retries) == (2, 1)
    assert loop._attempt_state is not attempt
    loop.request_failed(529, 600_000_000)  # an overload falls back at once: counts start again
    assert loop._turn_state is turn and (turn.attempt, turn.retries, turn.overloaded) == (3, 0, 0)
    third = loop._attempt_state
    feed(loop, tool_response("msg_1", ("a", "Read", {"path": "/a"})), 700_000_000)
    assert len(third.results) == 0 and third.accumulator.finished
    loop.tool_finished("a", "success", "A", 800_000_000)  # the batch completes: the next turn
    assert loop.turn == 2
    assert loop._turn_state is not turn and loop._turn_state.attempt == 1
    assert loop._attempt_state is not third and loop._attempt_state.results == []
    assert third.executor.done and loop._attempt_state.executor is not third.executor
    feed(loop, text_response("msg_2", "done"), 900_000_000)
    assert loop.phase.value == "idle" and loop.requests_sent == 4
    # The session's state is one object for the whole session: every attempt's executor, every
    # request's summary but the current one's.
    assert loop._session is session and (session.turn, session.chain_turns) == (2, 2)
    assert len(session.executors) == 4 and len(session.summaries) == 3

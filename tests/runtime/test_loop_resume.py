"""Loop rule 16: `resume` from every phase stops what was in flight, ends the turn with its cause,
and leaves an idle loop whose next request checks (and repairs) the new transcript."""

from __future__ import annotations

from tests.helpers.loop_tools import READ, TOOLS
from tests.helpers.runtime_script import message_start, of_type, text_block, tool_use_block
from toolturn.runtime.commands import CancelRequest, CancelTool, SendRequest, WaitUntil
from toolturn.runtime.loop import Phase, ToolTurnLoop
from toolturn.runtime.outcomes import SyntheticCause
from toolturn.runtime.record import Resume, TurnEnd

RESUMED = [{"role": "user", "content": [{"type": "text", "text": "earlier"}]}]


def loop_of(**kwargs: object) -> ToolTurnLoop:
    return ToolTurnLoop(TOOLS, model="model-a", **kwargs)  # type: ignore[arg-type]


def turn_end(loop: ToolTurnLoop) -> list[tuple[str, int]]:
    return [(e.stop_reason, e.tool_calls) for e in loop.record.of_kind(TurnEnd)]


def test_resume_while_waiting_cancels_the_request() -> None:
    loop = loop_of()
    loop.start("hi", 0)
    assert loop.phase is Phase.AWAITING_RESPONSE
    commands = loop.resume(RESUMED, 10, cause="crash")
    assert [type(c) for c in commands] == [CancelRequest]
    assert loop.phase is Phase.IDLE and loop.messages == RESUMED
    assert turn_end(loop) == [("crash", 0)]


def test_resume_while_streaming_cancels_the_stream_and_kills_the_started_call() -> None:
    loop = loop_of()
    loop.start("hi", 0)
    events = [message_start("msg_1"), *text_block(0, "x"),
              *tool_use_block(1, "toolu_1", "Read", {"path": "/a"})]
    for offset, event in enumerate(events):
        loop.on_event(event, 10 + offset)
    commands = loop.resume(RESUMED, 100, cause="rewind")
    assert of_type(CancelRequest, commands)
    assert [(c.tool_use_id, c.reason) for c in of_type(CancelTool, commands)] == [
        ("toolu_1", SyntheticCause.REWIND)
    ]
    (record,) = loop.call_records()
    assert record.synthetic_cause is SyntheticCause.REWIND and record.wasted
    assert loop.wasted_executions == 1
    assert turn_end(loop) == [("rewind", 1)]
    # The next chain's first request carries the new transcript; the old stream is stale.
    (send,) = of_type(SendRequest, loop.start("again", 200))
    assert send.request_body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "earlier"},
                                     {"type": "text", "text": "again"}]},
    ]
    assert loop.on_event(events[0], 210, request_id=1) == []


def test_resume_in_a_backoff_after_a_fallback_starts_again_on_the_primary() -> None:
    loop = ToolTurnLoop([READ], model="model-a", fallback_model="model-b", fallback_after=1)
    loop.start("hi", 0)
    loop.request_failed(529, 10)  # the first overloaded failure falls back at once
    assert loop.model == "model-b"
    assert of_type(WaitUntil, loop.request_failed(429, 20))
    assert loop.phase is Phase.BACKOFF
    commands = loop.resume(RESUMED, 30, cause="crash")
    assert commands == []  # nothing in flight: the retry's wake finds an idle loop
    assert loop.wake(10**9) == []
    assert loop.model == "model-a"


def test_resume_when_idle_only_replaces_the_transcript() -> None:
    loop = loop_of()
    assert loop.resume(RESUMED, 0, cause="compaction") == []
    assert turn_end(loop) == []
    assert [(type(e), e.cause, e.messages) for e in loop.record.of_kind(Resume)] == [
        (Resume, "compaction", 1)
    ]
    assert len(loop.record.entries) == 1

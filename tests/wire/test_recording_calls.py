"""When a call's row is final (issue 32, section 2: only what a later request can change stays
in memory): on its result, when a later response sends its id again, when the transcript moved
past its response, and when its session is over."""

from __future__ import annotations

import json
from typing import Any

from toolturn.model.response import Turn
from toolturn.wire.recorder import Recorder
from toolturn.wire.sent import SentCall

USER = {"role": "user", "content": "go"}


def ask(recorder: Recorder, t_ns: int, turn: Turn, messages: list[Any], calls: tuple[str, ...],
        faults: tuple[str, ...] = ()) -> int:
    index = recorder.arrived(t_ns, turn, "m", messages, json.dumps(messages).encode(), ())
    recorder.answered(index, status=200, ending="cut" if faults else "complete", faults=faults,
                      end_ns=t_ns + 10, calls=[SentCall(c, "Read", t_ns + 5) for c in calls])
    return index


def answers(*ids: str) -> list[Any]:
    echo = {"role": "assistant", "content": [
        {"type": "tool_use", "id": i, "name": "Read", "input": {}} for i in ids]}
    return [USER, echo, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in ids]}]


def final_calls(recorder: Recorder) -> list[tuple[int, str, int | None]]:
    rows = recorder.new_rows()["tool_calls"]
    return [(r["request_index"], r["tool_use_id"], r["result_request_index"]) for r in rows]


def test_a_call_the_transcript_moved_past_is_written_unanswered() -> None:
    recorder = Recorder()
    ask(recorder, 0, Turn(1, 0, 1), [USER], ("a",), faults=("cut_after_block",))
    ask(recorder, 100, Turn(1, 0, 2), [USER], ("b",))
    assert final_calls(recorder) == [] and recorder.held()["awaiting"] == 2
    ask(recorder, 200, Turn(1, 1, 1), answers("b"), ())
    assert final_calls(recorder) == [(0, "a", None), (1, "b", 2)]
    assert recorder.held()["awaiting"] == 0


def test_an_id_sent_again_supersedes_the_earlier_block() -> None:
    recorder = Recorder()
    ask(recorder, 0, Turn(1, 0, 1), [USER], ("a",), faults=("cut_after_block",))
    ask(recorder, 100, Turn(1, 0, 2), [USER], ("a",))
    assert final_calls(recorder) == [(0, "a", None)]  # the later block will get the result
    ask(recorder, 200, Turn(1, 1, 1), answers("a"), ())
    assert final_calls(recorder) == [(1, "a", 2)]


def test_the_calls_of_a_session_that_is_over_are_written_unanswered() -> None:
    recorder = Recorder(give_up_ns=1_000)
    ask(recorder, 0, Turn(1, 0, 1), [USER], ("a", "b"))
    recorder.give_up(500)
    assert final_calls(recorder) == [] and recorder.held()["sessions"] == 1
    recorder.give_up(1_010)
    assert final_calls(recorder) == [(0, "a", None), (0, "b", None)]
    assert recorder.held() == {"sessions": 0, "in_flight": 0, "awaiting": 0, "unwritten": 0}

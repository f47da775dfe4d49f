"""Tool_use ids given twice (issue 13, defect 6): the loop's own transcript is legal as it
stands, whenever the session ends, with no boundary repair. A duplicate of an earlier block of
the same response, or of a tool_use the transcript already holds, never reaches the transcript."""

from __future__ import annotations

from tests.helpers.loop_tools import TOOLS, tool_response
from tests.helpers.runtime_script import feed, of_type
from toolturn.runtime.commands import SendRequest, SessionEnded, StartTool
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.record import DuplicateToolUse
from toolturn.runtime.repair import check_pairing


def test_a_session_ending_right_after_a_duplicate_leaves_a_legal_transcript() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", max_turns=1)
    loop.start("go", 0)
    calls = ("t1", "Read", {"path": "/a"}), ("t1", "Read", {"path": "/b"})
    feed(loop, tool_response("msg_1", *calls), 100)
    out = loop.tool_finished("t1", "success", "a", 1_000)
    assert of_type(SessionEnded, out) == [SessionEnded("max_turns")]
    assert check_pairing(loop.messages) == []
    uses = [b for b in loop.messages[1]["content"] if b["type"] == "tool_use"]
    assert [use["input"] for use in uses] == [{"path": "/a"}]
    assert loop.repairs == []


def test_an_id_the_transcript_already_holds_is_not_run_and_not_kept() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", max_turns=2)
    loop.start("go", 0)
    feed(loop, tool_response("msg_1", ("t1", "Read", {"path": "/a"})), 100)
    [_send] = of_type(SendRequest, loop.tool_finished("t1", "success", "a", 1_000))
    again = ("t1", "Read", {"path": "/b"}), ("t2", "Read", {"path": "/c"})
    out = feed(loop, tool_response("msg_2", *again), 2_000)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["t2"]
    [duplicate] = loop.record.of_kind(DuplicateToolUse)
    assert (duplicate.tool_use_id, duplicate.turn) == ("t1", 2)
    out = loop.tool_finished("t2", "success", "c", 3_000)
    assert of_type(SessionEnded, out) == [SessionEnded("max_turns")]
    assert check_pairing(loop.messages) == []
    assert loop.repairs == []
    ids = [b["id"] for m in loop.messages for b in m["content"] if b["type"] == "tool_use"]
    assert ids == ["t1", "t2"]


def test_a_resumed_transcripts_ids_count_as_given() -> None:
    earlier = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "/a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    loop = ToolTurnLoop(TOOLS, model="m", max_turns=1, messages=earlier)
    loop.start("more", 0)
    calls = ("t1", "Read", {"path": "/b"}), ("t2", "Read", {"path": "/c"})
    out = feed(loop, tool_response("msg_2", *calls), 100)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["t2"]
    loop.tool_finished("t2", "success", "c", 1_000)
    assert check_pairing(loop.messages) == []
    assert loop.repairs == []

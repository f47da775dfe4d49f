"""`CallRecord.turn` / `.attempt`: each call knows the response that made it, as its
`BlockComplete` entry in the record does, across turns and a retried attempt; the simulator's
tools rows take their turn from it."""

from __future__ import annotations

from tests.helpers.engine_runs import default_scenario, dict_rows, run
from tests.helpers.loop_tools import TOOLS, tool_response
from tests.helpers.runtime_script import error_event, feed, message_start, of_type, tool_use_block
from toolturn.runtime.commands import SendRequest, WaitUntil
from toolturn.runtime.executor import ToolExecutor
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.record import BlockComplete, Record
from toolturn.runtime.tooldef import ToolDefinition


def test_each_call_knows_its_turn_and_attempt() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", policy="at_message_stop")
    loop.start("go", 0)
    # Attempt 1 of turn 1 completes a call, then breaks: overloaded, retried.
    out = feed(loop, [message_start("msg_1"), *tool_use_block(0, "a", "Read", {"path": "/a"}),
                      error_event()], 100)
    [wait] = of_type(WaitUntil, out)
    [retry] = loop.wake(wait.time_ns)
    assert isinstance(retry, SendRequest) and retry.attempt == 2
    feed(loop, tool_response("msg_2", ("b", "Read", {"path": "/b"})), wait.time_ns + 100)
    loop.tool_finished("b", "success", "B", wait.time_ns + 1_000)
    feed(loop, tool_response("msg_3", ("c", "Read", {"path": "/c"})), wait.time_ns + 2_000)
    calls = [(r.tool_use_id, r.turn, r.attempt) for r in loop.call_records()]
    assert calls == [("a", 1, 1), ("b", 1, 2), ("c", 2, 1)]
    blocks = [
        (entry.tool_use_id, entry.turn, entry.attempt)
        for entry in loop.record.of_kind(BlockComplete)
        if entry.tool_use_id is not None
    ]
    assert blocks == calls


def test_an_executor_of_its_own_takes_its_records_turn() -> None:
    record = Record()
    record.turn, record.attempt = 4, 2
    executor = ToolExecutor({"Read": ToolDefinition("Read")}, record=record)
    executor.add_tool_use({"type": "tool_use", "id": "t", "name": "Read", "input": {}}, 0)
    record.turn = 5  # a later turn: the batch stays its own
    [call] = executor.records()
    assert (call.turn, call.attempt) == (4, 2)


def test_the_tools_rows_take_the_calls_turns() -> None:
    result = run(default_scenario(6))
    tools = dict_rows(result.rows["tools"])
    turns = {(row["session_id"], row["turn_index"]) for row in dict_rows(result.rows["turns"])}
    assert tools and all((row["session_id"], row["turn_index"]) in turns for row in tools)

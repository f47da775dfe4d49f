"""Executor rule 3b: a call given its own run key runs beside the first call of its id, the
driver knows it by the key, and its tool_result answers the block's id."""

from __future__ import annotations

import pytest

from toolturn.runtime.commands import ResultReady, StartTool
from toolturn.runtime.executor import ToolExecutor
from toolturn.runtime.tooldef import ToolDefinition

READ = ToolDefinition("Read", concurrency_safe=True)


def block(path: str) -> dict[str, object]:
    return {"type": "tool_use", "id": "a", "name": "Read", "input": {"path": path}}


def test_a_keyed_copy_runs_beside_the_first_and_answers_the_id() -> None:
    executor = ToolExecutor({"Read": READ}, "streaming")
    first = executor.add_tool_use(block("/a"), 10)
    copy = executor.add_tool_use(block("/b"), 20, run_key="a#2")
    assert first == [StartTool("a", "Read", {"path": "/a"})]
    assert copy == [StartTool("a#2", "Read", {"path": "/b"})]  # no wait for the first
    executor.message_ended(30)
    assert executor.tool_finished("a#2", "success", "B", 40) == []  # tool_use order holds it
    out = executor.tool_finished("a", "success", "A", 50)
    assert [(r.tool_use_id, r.result["tool_use_id"], r.result["content"])
            for r in out if isinstance(r, ResultReady)] == [("a", "a", "A"), ("a#2", "a", "B")]
    assert [record.tool_use_id for record in executor.records()] == ["a", "a#2"]
    assert executor.done


def test_a_key_given_twice_is_refused() -> None:
    executor = ToolExecutor({"Read": READ}, "streaming")
    executor.add_tool_use(block("/a"), 10, run_key="a#2")
    with pytest.raises(ValueError, match="duplicate tool_use id 'a#2'"):
        executor.add_tool_use(block("/b"), 20, run_key="a#2")

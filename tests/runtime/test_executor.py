"""The streaming tool executor, driven by hand with fake integer time."""

from __future__ import annotations

from typing import Any

import pytest

from toolturn.runtime.commands import (
    AskPermission,
    CancelTool,
    DiscardedResult,
    ResultReady,
    StartTool,
    ToolProgress,
)
from toolturn.runtime.executor import CallState, ExecutorClosedError, ToolExecutor
from toolturn.runtime.outcomes import CallOutcome, SyntheticCause, ToolOutcome
from toolturn.runtime.permission import PermissionDecision
from toolturn.runtime.policy import ExecutorPolicy
from toolturn.runtime.record import ResultHandedOver, ToolEnded, WastedExecution
from toolturn.runtime.tooldef import ToolDefinition

READ = ToolDefinition(
    "Read",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    concurrency_safe=True,
)
GREP = ToolDefinition("Grep", concurrency_safe=True)
BASH = ToolDefinition("Bash", cancels_siblings=True)
EDIT = ToolDefinition("Edit")
TASK = ToolDefinition("Task", concurrency_safe=True, cancellable=False)
TOOLS = {tool.name: tool for tool in (READ, GREP, BASH, EDIT, TASK)}


def use(tool_use_id: str, name: str, tool_input: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": tool_use_id,
        "name": name,
        "input": tool_input if tool_input is not None else {},
    }


def read(tool_use_id: str) -> dict[str, Any]:
    return use(tool_use_id, "Read", {"path": f"/{tool_use_id}"})


def started(commands: list[Any]) -> list[str]:
    return [c.tool_use_id for c in commands if isinstance(c, StartTool)]


def ready(commands: list[Any]) -> list[str]:
    return [c.tool_use_id for c in commands if isinstance(c, ResultReady)]


def results(commands: list[Any]) -> dict[str, dict[str, Any]]:
    return {c.tool_use_id: c.result for c in commands if isinstance(c, ResultReady)}


def test_streaming_starts_a_call_when_its_block_completes() -> None:
    executor = ToolExecutor(TOOLS, ExecutorPolicy.STREAMING)
    assert started(executor.add_tool_use(read("a"), 10)) == ["a"]
    assert executor.records()[0].start_ns == 10


@pytest.mark.parametrize("policy", [ExecutorPolicy.AT_MESSAGE_STOP, ExecutorPolicy.SERIAL])
def test_baselines_start_nothing_before_the_message_ends(policy: ExecutorPolicy) -> None:
    executor = ToolExecutor(TOOLS, policy)
    assert executor.add_tool_use(read("a"), 10) == []
    assert started(executor.message_ended(50)) == ["a"]
    record = executor.records()[0]
    assert (record.block_complete_ns, record.queued_ns, record.start_ns) == (10, 10, 50)


def test_safe_calls_run_together_but_serial_runs_one_at_a_time() -> None:
    together = ToolExecutor(TOOLS, "at_message_stop")
    together.add_tool_use(read("a"), 1)
    together.add_tool_use(read("b"), 2)
    assert started(together.message_ended(3)) == ["a", "b"]

    serial = ToolExecutor(TOOLS, "serial")
    serial.add_tool_use(read("a"), 1)
    serial.add_tool_use(read("b"), 2)
    assert started(serial.message_ended(3)) == ["a"]
    assert started(serial.tool_finished("a", ToolOutcome.SUCCESS, "A", 4)) == ["b"]


def test_an_unsafe_call_waits_for_earlier_calls_and_holds_back_later_ones() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    assert started(executor.add_tool_use(read("a"), 1)) == ["a"]
    assert started(executor.add_tool_use(use("e", "Edit"), 2)) == []
    # A safe call after the waiting unsafe one is held back although it could run beside "a".
    assert started(executor.add_tool_use(read("c"), 3)) == []
    assert started(executor.tool_finished("a", "success", "A", 4)) == ["e"]
    assert started(executor.tool_finished("e", "success", "E", 5)) == ["c"]
    states = {r.tool_use_id: r.state for r in executor.records()}
    assert states == {
        "a": CallState.HANDED_OVER,
        "e": CallState.HANDED_OVER,
        "c": CallState.EXECUTING,
    }


def test_results_are_handed_over_in_tool_use_order() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    executor.add_tool_use(read("a"), 1)
    executor.add_tool_use(read("b"), 2)
    executor.message_ended(3)
    assert ready(executor.tool_finished("b", "success", "B", 4)) == []
    assert ready(executor.tool_finished("a", "success", "A", 5)) == ["a", "b"]
    assert executor.done
    assert [r.handed_over_ns for r in executor.records()] == [5, 5]


def test_progress_goes_to_observers_and_never_becomes_a_result() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    executor.add_tool_use(use("t", "Task"), 1)
    assert executor.tool_progress("t", {"done": 1, "of": 3}, 2) == [
        ToolProgress("t", "Task", {"done": 1, "of": 3})
    ]
    executor.message_ended(3)
    out = executor.tool_finished("t", "success", "all done", 4)
    assert [c.result for c in out if isinstance(c, ResultReady)] == [
        {"type": "tool_result", "tool_use_id": "t", "content": "all done"}
    ]


def test_rejected_calls_become_error_results_saying_why() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    out = executor.add_tool_use(use("u", "Nope"), 1)
    out += executor.add_tool_use(use("s", "Read", {"path": 3}), 2)
    out += executor.add_tool_use(use("j", "Read", {}), 3, input_error="Expecting ',' delimiter")
    got = results(out)
    assert all(block["is_error"] for block in got.values())
    assert "no such tool: 'Nope'" in got["u"]["content"]
    assert "invalid" in got["s"]["content"] and "'path'" in got["s"]["content"]
    assert "not valid JSON" in got["j"]["content"]
    outcomes = [r.outcome for r in executor.records()]
    assert outcomes == [
        CallOutcome.UNKNOWN_TOOL,
        CallOutcome.INVALID_INPUT,
        CallOutcome.INVALID_INPUT,
    ]
    assert all(r.queued_ns is None for r in executor.records())


def test_tool_failures_are_error_results_with_the_original_id() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    for tool_use_id in "xyz":
        executor.add_tool_use(read(tool_use_id), 1)
    out = executor.tool_finished("x", ToolOutcome.ERROR, "no such file", 2)
    out += executor.tool_finished("y", ToolOutcome.EXCEPTION, "KeyError: 'k'", 3)
    out += executor.tool_finished("z", ToolOutcome.CANCELLED, "", 4)
    got = results(out)
    assert got["x"] == {
        "type": "tool_result",
        "tool_use_id": "x",
        "content": "no such file",
        "is_error": True,
    }
    assert "raised an exception: KeyError" in got["y"]["content"] and got["y"]["is_error"]
    assert "was cancelled" in got["z"]["content"] and got["z"]["is_error"]


def test_permission_can_allow_deny_or_ask_and_asking_takes_time() -> None:
    def policy(tool: ToolDefinition, tool_input: Any) -> PermissionDecision:
        return {"Read": PermissionDecision.ALLOW, "Grep": PermissionDecision.DENY}.get(
            tool.name, PermissionDecision.ASK
        )

    executor = ToolExecutor(TOOLS, "streaming", permission=policy)
    assert started(executor.add_tool_use(read("r"), 1)) == ["r"]
    denied = executor.add_tool_use(use("g", "Grep"), 2)
    asked = executor.add_tool_use(use("e", "Edit"), 3)
    assert asked == []  # "e" is unsafe: it waits for "r" before it is even asked about.
    out = executor.tool_finished("r", "success", "R", 4)
    assert [c for c in out if isinstance(c, AskPermission)] == [AskPermission("e", "Edit", {})]
    assert ready(out) == ["r", "g"]
    assert "permission to use tool 'Grep' was denied" in results(out)["g"]["content"]
    assert not denied
    assert started(executor.permission_decided("e", True, 900)) == ["e"]
    assert executor.records()[2].admitted_ns == 4 and executor.records()[2].start_ns == 900


def test_a_decision_or_outcome_given_as_its_string_value_counts_as_the_member() -> None:
    executor = ToolExecutor(TOOLS, "serial", permission=lambda tool, tool_input: "deny")
    out = executor.add_tool_use(read("r"), 1) + executor.message_ended(2)
    assert "permission to use tool 'Read' was denied" in results(out)["r"]["content"]
    assert executor.policy is ExecutorPolicy.SERIAL
    executor = ToolExecutor(TOOLS, "streaming")
    executor.add_tool_use(read("r"), 1)
    executor.tool_finished("r", "error", "no such file", 2)
    assert executor.records()[0].outcome is CallOutcome.ERROR


def test_a_denied_answer_carries_its_message() -> None:
    executor = ToolExecutor(
        TOOLS, "streaming", permission=lambda tool, tool_input: PermissionDecision.ASK
    )
    executor.add_tool_use(use("e", "Edit"), 1)
    out = executor.permission_decided("e", False, 5, message="The user said no.")
    assert results(out)["e"]["content"].endswith("denied. The user said no.")
    assert executor.records()[0].outcome is CallOutcome.PERMISSION_DENIED


def test_an_error_in_a_sibling_cancelling_tool_cancels_the_batch() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    executor.add_tool_use(read("a"), 1)
    executor.add_tool_use(use("b", "Bash"), 2)
    executor.add_tool_use(read("c"), 3)
    executor.tool_finished("a", "success", "A", 4)
    out = executor.tool_finished("b", "error", "exit status 1", 5)
    assert ready(out) == ["b", "c"]
    assert "sibling call b failed" in results(out)["c"]["content"]
    # A call added later in the same batch is ended the same way.
    late = executor.add_tool_use(read("d"), 6)
    assert started(late) == [] and "sibling call b failed" in results(late)["d"]["content"]
    assert [r.synthetic_cause for r in executor.records()] == [
        None,
        None,
        SyntheticCause.SIBLING_ERROR,
        SyntheticCause.SIBLING_ERROR,
    ]


def test_sibling_abort_cancels_running_calls() -> None:
    safe_shell = ToolDefinition("Sh", concurrency_safe=True, cancels_siblings=True)
    executor = ToolExecutor({**TOOLS, "Sh": safe_shell}, "streaming")
    executor.add_tool_use(use("s", "Sh"), 1)
    executor.add_tool_use(read("r"), 2)
    out = executor.tool_finished("s", "exception", "OSError", 3)
    assert CancelTool("r", SyntheticCause.SIBLING_ERROR) in out
    assert ready(out) == ["s", "r"]
    # The driver's late report for the cancelled call is accepted and ignored.
    assert executor.tool_finished("r", "cancelled", "", 4) == []


def test_an_error_in_an_ordinary_tool_cancels_nothing() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    executor.add_tool_use(read("a"), 1)
    executor.add_tool_use(read("b"), 2)
    out = executor.tool_finished("a", "error", "boom", 3)
    assert not any(isinstance(c, CancelTool) for c in out)
    assert ready(executor.tool_finished("b", "success", "B", 4)) == ["b"]


def test_abort_cancels_cancellable_calls_lets_others_finish_and_queued_never_start() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    executor.add_tool_use(read("r"), 1)
    executor.add_tool_use(use("t", "Task"), 2)
    executor.add_tool_use(use("e", "Edit"), 3)
    out = executor.abort(SyntheticCause.USER_INTERRUPT, 4)
    assert [c for c in out if isinstance(c, CancelTool)] == [
        CancelTool("r", SyntheticCause.USER_INTERRUPT)
    ]
    assert ready(out) == ["r"]  # "t" still runs and holds the order.
    assert not executor.done
    out = executor.tool_finished("t", "success", "T", 9)
    assert ready(out) == ["t", "e"] and started(out) == []
    assert results(out)["t"]["content"] == "T"
    assert "the user interrupted" in results(out)["e"]["content"]
    assert executor.done
    with pytest.raises(ExecutorClosedError):
        executor.add_tool_use(read("z"), 10)


def test_discard_reports_every_call_and_counts_wasted_executions() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    executor.add_tool_use(read("a"), 1)
    executor.add_tool_use(read("b"), 2)
    executor.add_tool_use(use("e", "Edit"), 3)
    executor.tool_finished("b", "success", "B", 4)
    out = executor.discard(SyntheticCause.FALLBACK, 5)
    assert ready(out) == []
    assert [c for c in out if isinstance(c, CancelTool)] == [
        CancelTool("a", SyntheticCause.FALLBACK)
    ]
    discarded = [c for c in out if isinstance(c, DiscardedResult)]
    assert [c.tool_use_id for c in discarded] == ["a", "b", "e"]
    assert [c.synthetic_cause for c in discarded] == [
        SyntheticCause.FALLBACK,
        None,
        SyntheticCause.FALLBACK,
    ]
    assert executor.wasted_executions == 2
    assert [r.wasted for r in executor.records()] == [True, True, False]
    assert len(executor.record.of_kind(WastedExecution)) == 2
    assert executor.done
    assert executor.tool_finished("a", "success", "late", 6) == []


def test_every_call_ends_with_exactly_one_result_in_the_record() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    executor.add_tool_use(read("a"), 1)
    executor.add_tool_use(use("x", "Nope"), 2)
    executor.add_tool_use(use("b", "Bash"), 3)
    executor.message_ended(4)
    executor.tool_finished("a", "success", "A", 5)
    executor.tool_finished("b", "success", "B", 6)
    handed = [entry.tool_use_id for entry in executor.record.of_kind(ResultHandedOver)]
    assert handed == ["a", "x", "b"]
    ended = [entry.tool_use_id for entry in executor.record.of_kind(ToolEnded)]
    assert sorted(ended) == ["a", "b", "x"]


def test_duplicate_ids_are_refused() -> None:
    executor = ToolExecutor(TOOLS, "streaming")
    executor.add_tool_use(read("a"), 1)
    with pytest.raises(ValueError, match="duplicate"):
        executor.add_tool_use(read("a"), 2)


def test_a_malformed_schema_is_refused_when_the_executor_is_made() -> None:
    import jsonschema.exceptions

    broken = ToolDefinition("Broken", {"type": "no-such-type"})
    with pytest.raises(jsonschema.exceptions.SchemaError):
        ToolExecutor({"Broken": broken}, "streaming")

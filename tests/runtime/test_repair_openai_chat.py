"""The Chat Completions repair: each verdict's fix, where it is reported, strict mode, sharing,
and time linear in the input."""

from __future__ import annotations

import time
from typing import Any

import pytest

from toolturn.runtime.openai.chat_pairing import check_chat_pairing
from toolturn.runtime.openai.chat_repair import ensure_chat_pairing, missing_tool_message
from toolturn.runtime.pairing import RepairKind, TranscriptShapeError
from toolturn.runtime.repair import MISSING_RESULT_TEXT, PLACEHOLDER_TEXT, PairingError, Repair

USER = {"role": "user", "content": "hi"}
SYSTEM = {"role": "system", "content": "be brief"}


def assistant(*ids: str, content: str | None = None) -> dict[str, Any]:
    function = {"name": "f", "arguments": "{}"}
    calls = [{"id": i, "type": "function", "function": function} for i in ids]
    return {"role": "assistant", "content": content, "tool_calls": calls}


def tool(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_paired_messages_come_back_equal_with_their_objects_shared() -> None:
    messages = [SYSTEM, USER, assistant("a"), tool("a"), {"role": "assistant", "content": "x"}]
    repaired, repairs = ensure_chat_pairing(messages)
    assert repairs == []
    assert repaired == messages and repaired is not messages
    assert all(a is b for a, b in zip(repaired, messages, strict=True))


def test_missing_tool_messages_follow_the_answers_in_call_order() -> None:
    answer = tool("b")
    repaired, repairs = ensure_chat_pairing([USER, assistant("a", "b", "c"), answer, USER])
    assert repaired == [
        USER, assistant("a", "b", "c"), answer, missing_tool_message("a"),
        missing_tool_message("c"), USER,
    ]
    assert missing_tool_message("a")["content"] == MISSING_RESULT_TEXT
    assert repairs == [
        Repair(RepairKind.MISSING_RESULT_INSERTED, 3, "a"),
        Repair(RepairKind.MISSING_RESULT_INSERTED, 4, "c"),
    ]


def test_a_late_tool_message_moves_up_after_the_runs_answers() -> None:
    late = tool("a", "real")
    messages = [USER, assistant("a", "b"), tool("b"), SYSTEM, late, USER]
    repaired, repairs = ensure_chat_pairing(messages)
    assert repaired == [USER, assistant("a", "b"), tool("b"), late, SYSTEM, USER]
    assert repaired[3] is late
    assert repairs == [Repair(RepairKind.RESULT_MOVED_TO_FRONT, 3, "a")]


def test_orphan_and_duplicate_tool_messages_are_removed_keeping_the_first_answer() -> None:
    first = tool("a", "first")
    messages = [tool("z"), USER, assistant("a"), first, tool("a", "second"), tool("q")]
    repaired, repairs = ensure_chat_pairing(messages)
    assert repaired == [USER, assistant("a"), first]
    assert repairs == [
        Repair(RepairKind.ORPHAN_RESULT_REMOVED, 0, "z"),
        Repair(RepairKind.DUPLICATE_RESULT_REMOVED, 3, "a"),
        Repair(RepairKind.ORPHAN_RESULT_REMOVED, 3, "q"),
    ]


def test_a_reused_call_id_is_removed_with_its_answer() -> None:
    messages = [USER, assistant("a"), tool("a"), assistant("a", "b", content="again"), tool("a"),
                tool("b")]
    repaired, repairs = ensure_chat_pairing(messages)
    assert repaired == [USER, assistant("a"), tool("a"), assistant("b", content="again"),
                        tool("b")]
    assert repairs == [
        Repair(RepairKind.DUPLICATE_TOOL_USE_REMOVED, 3, "a"),
        Repair(RepairKind.ORPHAN_RESULT_REMOVED, 4, "a"),
    ]


def test_an_assistant_left_with_no_call_and_no_content_gets_a_placeholder() -> None:
    repaired, repairs = ensure_chat_pairing([USER, assistant("a", "a"), tool("a")])
    assert repaired[1] == assistant("a")
    repaired, repairs = ensure_chat_pairing([USER, assistant("a"), tool("a"), assistant("a")])
    assert repaired[3] == {"role": "assistant", "content": PLACEHOLDER_TEXT}
    assert repairs == [
        Repair(RepairKind.DUPLICATE_TOOL_USE_REMOVED, 3, "a"),
        Repair(RepairKind.PLACEHOLDER_INSERTED, 3),
    ]


def test_the_repair_is_a_fixed_point_and_does_not_mutate_its_input() -> None:
    messages = [tool("x"), USER, assistant("a", "b", "a"), USER, tool("b"), assistant("c")]
    frozen = [dict(message) for message in messages]
    repaired, _ = ensure_chat_pairing(messages)
    assert messages == frozen
    assert check_chat_pairing(repaired) == []
    assert ensure_chat_pairing(repaired) == (repaired, [])


def test_strict_mode_raises_with_every_violation_and_repairs_nothing() -> None:
    with pytest.raises(PairingError) as raised:
        ensure_chat_pairing([USER, tool("a")], strict=True)
    assert len(raised.value.violations) == 1
    messages = [USER, assistant("a"), tool("a")]
    assert ensure_chat_pairing(messages, strict=True) == (messages, [])


def test_input_that_is_not_a_list_of_messages_raises_a_shape_error() -> None:
    with pytest.raises(TranscriptShapeError, match=r"messages\[1\]: tool message has no string"):
        ensure_chat_pairing([USER, {"role": "tool", "content": "x"}])


def _seconds(messages: list[dict[str, Any]]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        ensure_chat_pairing(messages)
        best = min(best, time.perf_counter() - start)
    return best


def test_the_repair_is_linear_in_the_input() -> None:
    def broken(rounds: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = [USER]
        for n in range(rounds):  # every round broken: a late answer, a missing one, an orphan
            messages += [assistant(f"l{n}", f"m{n}"), USER, tool(f"l{n}"), tool(f"o{n}")]
        return messages

    small, large = _seconds(broken(400)), _seconds(broken(4000))
    # Ten times the input: about ten times the time, far from the hundred of a quadratic pass.
    assert large < 30 * small + 0.05


def test_the_repair_is_linear_in_the_calls_of_one_message() -> None:
    def wide(calls: int) -> list[dict[str, Any]]:
        ids = [f"c{n}" for n in range(calls)]
        half = calls // 2  # answered in the run, then late after a user message, then missing
        return [USER, assistant(*ids), *map(tool, ids[:half]), USER,
                *map(tool, ids[half: calls - 10])]

    small, large = _seconds(wide(500)), _seconds(wide(5000))
    assert large < 30 * small + 0.05

"""The Chat Completions pairing check: the API's wording, in its order; our lines for
duplicates; shape errors that name the place."""

from __future__ import annotations

from typing import Any

import pytest

from toolturn.runtime.openai.chat_pairing import (
    MISSING_RESPONSES,
    NO_CALL,
    ToolVerdict,
    check_chat_pairing,
    classify_chat,
)
from toolturn.runtime.pairing import TranscriptShapeError

USER = {"role": "user", "content": "hi"}


def assistant(*ids: str, content: str | None = None) -> dict[str, Any]:
    function = {"name": "f", "arguments": "{}"}
    calls = [{"id": i, "type": "function", "function": function} for i in ids]
    return {"role": "assistant", "content": content, "tool_calls": calls}


def tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


def missing(*ids: str) -> str:
    return MISSING_RESPONSES.format(ids=", ".join(ids))


def test_paired_messages_with_every_role_pass() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "developer", "content": "d"},
        USER,
        assistant("a", "b"),
        tool("b"),
        tool("a"),
        {"role": "assistant", "content": "done"},
        {"role": "function", "name": "legacy", "content": "x"},
        USER,
    ]
    assert check_chat_pairing(messages) == []
    assert check_chat_pairing([]) == []


def test_the_api_wording_is_exact() -> None:
    assert check_chat_pairing([USER, assistant("call_1", "call_2"), tool("call_1")]) == [
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2"
    ]
    assert check_chat_pairing([USER, tool("call_1")]) == [
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
        "with 'tool_calls'."
    ]


def test_a_tool_message_after_a_user_message_is_late_and_leaves_its_call_unanswered() -> None:
    messages = [USER, assistant("a", "b"), tool("a"), USER, tool("b")]
    # As the API says it: the run ends at the user message, then the tool message has no call.
    assert check_chat_pairing(messages) == [missing("b"), NO_CALL]
    verdicts = classify_chat(messages)[1].tools
    assert verdicts == {2: ToolVerdict.ANSWER, 4: ToolVerdict.LATE}


def test_a_tool_message_answering_an_earlier_assistant_is_an_orphan() -> None:
    messages = [USER, assistant("a"), tool("a"), assistant("b"), tool("a"), tool("b")]
    assert check_chat_pairing(messages) == [NO_CALL]
    assert classify_chat(messages)[2].tools[4] is ToolVerdict.ORPHAN


def test_duplicates_get_our_lines() -> None:
    messages = [USER, assistant("a", "a"), tool("a"), tool("a"), assistant("a"), tool("a")]
    assert check_chat_pairing(messages) == [
        "Invalid parameter: 'messages[1].tool_calls[1]' reuses the tool call id a; each tool "
        "call must have its own id.",
        "Invalid parameter: 'messages[3]' is a second response to tool_call_id a; each tool "
        "call must have exactly one tool message.",
        "Invalid parameter: 'messages[4].tool_calls[0]' reuses the tool call id a; each tool "
        "call must have its own id.",
        NO_CALL,
    ]


def test_a_history_ending_on_calls_misses_them_all() -> None:
    assert check_chat_pairing([USER, assistant("a", "b")]) == [missing("a", "b")]


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ("hello", "messages: must be a list, not str"),
        ([USER, None], "messages[1]: a message must be an object, not NoneType"),
        ([{"content": "x"}], "messages[0]: message has no 'role'"),
        ([{"role": 1}], "messages[0].role: must be a string, not int"),
        ([{"role": "robot"}], "messages[0].role: 'robot' is not one of"),
        ([{"role": "tool", "content": "x"}], "messages[0]: tool message has no string"),
        ([{"role": "assistant", "tool_calls": {}}], "messages[0].tool_calls: must be a list"),
        ([{"role": "assistant", "tool_calls": [{}]}], "messages[0].tool_calls[0]: a tool call"),
    ],
)
def test_input_that_is_not_a_list_of_messages_raises_naming_the_place(
    messages: Any, message: str
) -> None:
    with pytest.raises(TranscriptShapeError) as raised:
        check_chat_pairing(messages)
    assert str(raised.value).startswith(message)

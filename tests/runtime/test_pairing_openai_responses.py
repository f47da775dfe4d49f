"""The Responses input pairing check: the API's wording, in its order; our lines for duplicates;
shape errors that name the place."""

from __future__ import annotations

from typing import Any

import pytest

from toolturn.runtime.openai.responses_pairing import (
    FindingKind,
    check_responses_pairing,
    classify_responses,
)
from toolturn.runtime.pairing import TranscriptShapeError

USER = {"role": "user", "content": "hi"}


def call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}


def output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


def test_a_paired_input_with_every_item_type_passes() -> None:
    items = [
        {"type": "message", "role": "developer", "content": "be brief"},
        USER,
        {"type": "reasoning", "id": "rs_1", "summary": []},
        call("a"),
        call("b"),
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
        output("b"),
        output("a"),
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    ]
    assert check_responses_pairing(items) == []
    assert check_responses_pairing([]) == []


def test_a_call_without_output_is_worded_as_the_api() -> None:
    assert check_responses_pairing([USER, call("call_1")]) == [
        "No tool output found for function call call_1."
    ]


def test_an_output_without_call_is_worded_as_the_api() -> None:
    assert check_responses_pairing([USER, output("call_9")]) == [
        "No tool call found for function call output with call_id call_9."
    ]


def test_an_output_before_its_call_is_refused_but_answers_it() -> None:
    # The API wants the call earlier; it counts the output as the call's answer all the same.
    items = [USER, output("a"), call("a")]
    assert check_responses_pairing(items) == [
        "No tool call found for function call output with call_id a."
    ]
    assert [f.kind for f in classify_responses(items)] == [FindingKind.EARLY_OUTPUT]


def test_item_lines_come_in_item_order_then_missing_outputs_in_call_order() -> None:
    items = [USER, call("b"), output("x"), call("a"), call("b"), output("y")]
    assert check_responses_pairing(items) == [
        "No tool call found for function call output with call_id x.",
        "Duplicate function call with call_id b (input[4]): each tool call must have its own "
        "call_id.",
        "No tool call found for function call output with call_id y.",
        "No tool output found for function call b.",
        "No tool output found for function call a.",
    ]


def test_a_second_output_is_a_duplicate_and_an_early_one_beside_a_late_one_too() -> None:
    items = [output("a"), call("a"), output("a"), output("a")]
    kinds = [f.kind for f in classify_responses(items)]
    assert kinds == [FindingKind.EARLY_DUPLICATE, FindingKind.DUPLICATE_OUTPUT]
    assert check_responses_pairing(items)[1] == (
        "Duplicate function call output for call_id a (input[3]): each tool call must have "
        "exactly one output."
    )


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ("hello", "input: must be a list of items, not str"),
        ({"a": 1}, "input: must be a list of items, not dict"),
        ([USER, 3], "input[1]: an item must be an object, not int"),
        ([{"content": "x"}], "input[0]: item has no 'type'"),
        ([{"type": 7}], "input[0].type: must be a string, not int"),
        ([{"type": "function_call", "name": "f"}], "input[0]: `function_call` item has no string"),
        ([{"type": "function_call_output", "call_id": 5}], "input[0]: `function_call_output`"),
    ],
)
def test_input_that_is_not_a_list_of_items_raises_naming_the_place(
    items: Any, message: str
) -> None:
    with pytest.raises(TranscriptShapeError) as raised:
        check_responses_pairing(items)
    assert str(raised.value).startswith(message)


def test_custom_tool_calls_pair_with_custom_tool_call_outputs_only() -> None:
    custom = {"type": "custom_tool_call", "call_id": "p", "name": "apply_patch", "input": "x"}
    answer = {"type": "custom_tool_call_output", "call_id": "p", "output": "done"}
    assert check_responses_pairing([USER, custom, answer]) == []
    # A function_call_output does not answer a custom tool call (nor the other way round).
    assert check_responses_pairing([USER, custom, output("p")]) == [
        "No tool call found for function call output with call_id p.",
        "No tool output found for custom tool call p.",
    ]
    assert check_responses_pairing([USER, call("q"), {**answer, "call_id": "q"}]) == [
        "No tool call found for custom tool call output with call_id q.",
        "No tool output found for function call q.",
    ]

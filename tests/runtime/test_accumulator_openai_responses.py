"""The Responses API accumulator's rules, one test each, with hand-built event dicts."""

from __future__ import annotations

from typing import Any

import pytest
from openai._models import construct_type
from openai.types.responses import ResponseStreamEvent

from toolturn.runtime.accumulator import StreamProtocolError
from toolturn.runtime.openai.responses import OutputItem, ResponsesAccumulator

Event = dict[str, Any]


def response(status: str = "in_progress", output: list[Event] | None = None) -> Event:
    body: Event = {"id": "resp_1", "object": "response", "created_at": 1, "status": status,
                   "model": "gpt-t"}
    if output is not None:
        body["output"] = output
    return body


def created() -> Event:
    return {"type": "response.created", "response": response(output=[])}


def call_item(index: int, arguments: str = "", status: str = "in_progress") -> Event:
    return {"id": f"fc_{index}", "type": "function_call", "status": status,
            "call_id": f"call_{index}", "name": "read", "arguments": arguments}


def added(index: int, item: Event) -> Event:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: Event) -> Event:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def arguments(index: int, piece: str) -> Event:
    return {"type": "response.function_call_arguments.delta", "output_index": index,
            "item_id": f"fc_{index}", "delta": piece}


def message_item(index: int, text: str | None = None) -> Event:
    content = [] if text is None else [{"type": "output_text", "text": text, "annotations": []}]
    return {"id": f"msg_{index}", "type": "message", "status": "in_progress",
            "role": "assistant", "content": content}


def part_added(index: int, content_index: int = 0) -> Event:
    return {"type": "response.content_part.added", "output_index": index,
            "item_id": f"msg_{index}", "content_index": content_index,
            "part": {"type": "output_text", "text": "", "annotations": []}}


def text(index: int, piece: str, content_index: int = 0) -> Event:
    return {"type": "response.output_text.delta", "output_index": index,
            "item_id": f"msg_{index}", "content_index": content_index, "delta": piece}


def fed(*events: Event) -> ResponsesAccumulator:
    accumulator = ResponsesAccumulator()
    for event in events:
        accumulator.feed(event)
    return accumulator


def test_the_first_event_must_be_response_created() -> None:
    with pytest.raises(StreamProtocolError, match=r"the first event must be response\.created"):
        ResponsesAccumulator().feed(added(0, call_item(0)))
    with pytest.raises(StreamProtocolError, match=r"a second response\.created"):
        fed(created(), created())


def test_a_call_is_returned_at_its_done_event_with_its_arguments_parsed() -> None:
    accumulator = fed(created(), added(0, call_item(0)), arguments(0, '{"path": '))
    assert accumulator.feed(arguments(0, '"a"}')) is None
    assert accumulator.open_item(0)["arguments"] == '{"path": "a"}'
    final = call_item(0, '{"path": "a"}', "completed")
    item = accumulator.feed(done(0, final))
    assert item == OutputItem("resp_1", 0, final, {"path": "a"}, None)
    assert item.is_call and accumulator.completed == [item] and accumulator.open_indices == ()
    assert accumulator.response()["output"] == [final]  # before the end: done items only


def test_arguments_that_are_not_an_object_are_the_calls_error() -> None:
    item = fed(created(), added(0, call_item(0))).feed(done(0, call_item(0, "[1]", "completed")))
    assert item is not None and item.input is None
    assert item.input_error == "arguments are JSON list, not an object"


def test_message_text_accumulates_per_part() -> None:
    accumulator = fed(created(), added(0, message_item(0)), part_added(0), text(0, "Hel"),
                      text(0, "lo"), part_added(0, 1), text(0, "\u00e9", 1))
    assert [part["text"] for part in accumulator.open_item(0)["content"]] == ["Hello", "\u00e9"]
    item = accumulator.feed(done(0, message_item(0, "Hello")))
    assert item is not None and not item.is_call and item.input is None


def test_deltas_that_do_not_fit_are_violations() -> None:
    accumulator = fed(created(), added(0, call_item(0)), added(1, message_item(1)))
    cases = [
        (arguments(5, "x"), "output index 5, which is never added"),
        (text(0, "x"), "text for an item that is not a message"),
        (arguments(1, "x"), "arguments for an item that is not a function_call"),
        (text(1, "x"), "text for a part never added"),
        ({**arguments(0, "x"), "delta": 3}, "a delta that is not a string"),
    ]
    for event, message in cases:
        with pytest.raises(StreamProtocolError, match=message):
            accumulator.feed(event)
    accumulator.feed(done(0, call_item(0, "{}", "completed")))
    with pytest.raises(StreamProtocolError, match="which is already done"):
        accumulator.feed(arguments(0, "x"))


def test_an_item_is_added_once_and_done_once_as_itself() -> None:
    accumulator = fed(created(), added(0, call_item(0)))
    with pytest.raises(StreamProtocolError, match="output index 0 added twice"):
        accumulator.feed(added(0, call_item(0)))
    with pytest.raises(StreamProtocolError, match="changed its type or id at done"):
        accumulator.feed(done(0, message_item(0)))
    accumulator.feed(done(0, call_item(0, "{}", "completed")))
    with pytest.raises(StreamProtocolError, match="output index 0 done twice"):
        accumulator.feed(done(0, call_item(0, "{}", "completed")))


def test_two_calls_with_one_call_id_are_both_returned() -> None:
    # The SDK's state refuses such a stream ("conflicting output identities"); Codex CLI runs
    # both calls (issue 34, section 2), so the runtime must see both.
    twin = {**call_item(1), "call_id": "call_0"}
    accumulator = fed(created(), added(0, call_item(0)), done(0, call_item(0, "{}", "completed")),
                      added(1, twin))
    item = accumulator.feed(done(1, {**twin, "status": "completed", "arguments": "{}"}))
    assert item is not None and [done.item["call_id"] for done in accumulator.completed] == [
        "call_0", "call_0"]


def test_an_item_may_be_done_without_being_added() -> None:
    item = fed(created()).feed(done(3, call_item(3, "{}", "completed")))
    assert item is not None and item.output_index == 3


def test_completed_without_output_takes_the_done_items() -> None:
    final = call_item(0, "{}", "completed")
    accumulator = fed(created(), added(0, call_item(0)), done(0, final),
                      {"type": "response.completed", "response": response("completed")})
    assert accumulator.finished and accumulator.status == "completed"
    assert accumulator.response() == {**response("completed"), "output": [final]}


def test_completed_with_an_item_never_done_is_a_violation() -> None:
    accumulator = fed(created(), added(0, call_item(0)))
    with pytest.raises(StreamProtocolError, match=r"items never done \(output index \[0\]\)"):
        accumulator.feed({"type": "response.completed", "response": response("completed", [])})


def test_failed_without_output_keeps_the_items_as_far_as_they_came() -> None:
    accumulator = fed(created(), added(0, call_item(0)), done(0, call_item(0, "{}", "completed")),
                      added(1, call_item(1)), arguments(1, '{"a'),
                      {"type": "response.failed", "response": response("failed")})
    assert accumulator.status == "failed" and accumulator.open_indices == (1,)
    assert [item["arguments"] for item in accumulator.response()["output"]] == ["{}", '{"a']


def test_after_the_end_only_error_events_are_taken() -> None:
    accumulator = fed(created(), {"type": "response.incomplete",
                                  "response": response("incomplete", [])})
    accumulator.feed({"type": "error", "code": None, "message": "late"})
    with pytest.raises(StreamProtocolError, match="an event after the response ended"):
        accumulator.feed(added(0, call_item(0)))
    assert accumulator.errors == [{"type": "error", "code": None, "message": "late"}]


def test_an_error_event_ends_nothing() -> None:
    accumulator = fed(created(), {"type": "error", "code": "x", "message": "m"},
                      added(0, call_item(0)))
    assert accumulator.open_indices == (0,) and len(accumulator.errors) == 1


def test_the_end_must_name_the_same_response() -> None:
    other = {**response("completed", []), "id": "resp_2"}
    with pytest.raises(StreamProtocolError, match="for another response id"):
        fed(created(), {"type": "response.completed", "response": other})


def test_a_violation_leaves_the_accumulator_as_it_was() -> None:
    accumulator = fed(created(), added(0, call_item(0)), arguments(0, "{}"))
    with pytest.raises(StreamProtocolError, match="a function_call without arguments"):
        accumulator.feed(done(0, {**call_item(0), "arguments": None}))
    assert accumulator.open_indices == (0,) and accumulator.open_item(0)["arguments"] == "{}"
    assert accumulator.feed(done(0, call_item(0, "{}", "completed"))) is not None


def test_a_malformed_event_is_named() -> None:
    with pytest.raises(StreamProtocolError, match=r"malformed response\.output_item\.done event"):
        fed(created(), {"type": "response.output_item.done", "item": call_item(0)})


def test_sdk_event_objects_are_accepted() -> None:
    accumulator = ResponsesAccumulator()
    accumulator.feed(construct_type(type_=ResponseStreamEvent, value=created()))
    assert accumulator.response_id == "resp_1"

"""Differential tests: random legal streams of each OpenAI protocol, possibly cut short, through
our accumulators and through the official openai SDK's own stream accumulation
(``ResponseStreamState``, ``ChatCompletionStreamState``), give the same output, and our calls
are known complete exactly where the SDK says they are done.

Both sides read the same bytes with the SDK's SSE decoder, as its ``Stream`` does: the subject
here is the accumulation, not the decoder (tests/wire/test_sse*.py hold ours to the SDK's)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai._models import construct_type
from openai._streaming import SSEDecoder
from openai._types import omit
from openai.lib.streaming.chat._completions import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

from tests.helpers.json_strategies import json_objects, split_text
from toolturn.runtime.openai.chat import DONE, ChatAccumulator
from toolturn.runtime.openai.responses import ResponsesAccumulator

Event = dict[str, Any]

texts = st.text(max_size=40)  # every code point but lone surrogates' kin: unicode throughout


@st.composite
def arguments_text(draw: st.DrawFn) -> str:
    return json.dumps(draw(json_objects), ensure_ascii=draw(st.booleans()))


def sse_body(events: list[Event | str], with_event_lines: bool) -> bytes:
    """The stream as the API writes it: Responses names each event, Chat Completions does not."""
    lines = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
        name = f"event: {event['type']}\n" if with_event_lines and isinstance(event, dict) else ""
        lines.append(f"{name}data: {data}\n\n")
    return "".join(lines).encode("utf-8", "surrogatepass")


def decoded(body: bytes) -> list[Any]:
    """What the SDK's decoder reads: each data's JSON, `[DONE]` as that text (the SDK's Stream
    stops there)."""
    out: list[Any] = []
    for sse in SSEDecoder().iter_bytes(iter([body])):
        out.append(DONE if sse.data.startswith(DONE) else sse.json())
    return out


def without_parse_fields(value: Any) -> Any:
    """The SDK's parse helpers add `parsed` and `parsed_arguments` (None without a schema) and
    keep each streamed tool call's `index`; the API's shapes have none of them."""
    if isinstance(value, dict):
        return {
            key: without_parse_fields(item)
            for key, item in value.items()
            if key not in ("parsed", "parsed_arguments")
        }
    if isinstance(value, list):
        return [without_parse_fields(item) for item in value]
    return value


def cut(draw: st.DrawFn, events: list[Any]) -> list[Any]:
    if draw(st.booleans()):
        return events[: draw(st.integers(1, len(events)))]
    return events


# ----- the Responses API -----


def _response(response_id: str, status: str, output: list[Event] | None) -> Event:
    response: Event = {
        "id": response_id, "object": "response", "created_at": 1_700_000_000,
        "status": status, "model": "gpt-test", "error": None, "incomplete_details": None,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "usage": None,
    }
    if output is not None:
        response["output"] = output
    return response


@st.composite
def responses_item(draw: st.DrawFn, index: int) -> tuple[list[Event], Event]:
    """One output item's events (without sequence numbers) and its done item."""
    kind = draw(st.sampled_from(["message", "function_call", "reasoning"]))
    at = {"output_index": index}
    if kind == "function_call":
        item_id, raw = f"fc_{index}", draw(arguments_text())
        added = {"id": item_id, "type": "function_call", "status": "in_progress",
                 "call_id": f"call_{index}", "name": draw(st.sampled_from(["read", "grep"])),
                 "arguments": ""}
        events = [{"type": "response.output_item.added", **at, "item": added}]
        events += [{"type": "response.function_call_arguments.delta", **at, "item_id": item_id,
                    "delta": part} for part in draw(split_text(raw))]
        events.append({"type": "response.function_call_arguments.done", **at,
                       "item_id": item_id, "arguments": raw})
        return events, {**added, "status": "completed", "arguments": raw}
    if kind == "reasoning":
        item_id, summary = f"rs_{index}", draw(texts)
        added = {"id": item_id, "type": "reasoning", "summary": []}
        events = [{"type": "response.output_item.added", **at, "item": added}]
        events += [{"type": "response.reasoning_summary_text.delta", **at, "item_id": item_id,
                    "summary_index": 0, "delta": part} for part in draw(split_text(summary))]
        return events, {**added, "summary": [{"type": "summary_text", "text": summary}]}
    item_id = f"msg_{index}"
    added = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant",
             "content": []}
    events = [{"type": "response.output_item.added", **at, "item": added}]
    parts = []
    for content_index in range(draw(st.integers(1, 2))):
        text = draw(texts)
        where = {**at, "item_id": item_id, "content_index": content_index}
        empty = {"type": "output_text", "text": "", "annotations": []}
        events.append({"type": "response.content_part.added", **where, "part": empty})
        events += [{"type": "response.output_text.delta", **where, "delta": part, "logprobs": []}
                   for part in draw(split_text(text))]
        events.append({"type": "response.output_text.done", **where, "text": text,
                       "logprobs": []})
        parts.append({**empty, "text": text})
        events.append({"type": "response.content_part.done", **where, "part": parts[-1]})
    return events, {**added, "status": "completed", "content": parts}


@st.composite
def responses_streams(draw: st.DrawFn) -> list[Event]:
    response_id = f"resp_{draw(st.integers(0, 10**6))}"
    events: list[Event] = [
        {"type": "response.created", "response": _response(response_id, "in_progress", [])},
        {"type": "response.in_progress", "response": _response(response_id, "in_progress", [])},
    ]
    done_items = []
    for index in range(draw(st.integers(0, 4))):
        item_events, item = draw(responses_item(index))
        events += item_events
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        done_items.append(item)
    end = draw(st.sampled_from(["completed", "failed", "incomplete"]))
    output = done_items if draw(st.booleans()) else None  # the SDK recovers an absent output
    final = _response(response_id, end, output)
    if end == "completed":
        final["usage"] = {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}
    events.append({"type": f"response.{end}", "response": final})
    if draw(st.booleans()):
        events.insert(draw(st.integers(1, len(events))),
                      {"type": "error", "code": None, "message": "overloaded", "param": None})
    events = cut(draw, events)
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(responses_streams())
def test_responses_equal_the_sdks(events: list[Event]) -> None:
    ours = ResponsesAccumulator()
    sdk = ResponseStreamState(input_tools=omit, text_format=omit)
    sdk_end: Any = None  # the SDK's failed or incomplete event, its output filled in
    for data in decoded(sse_body(events, with_event_lines=True)):
        done = ours.feed(data)
        sdk_events = sdk.handle_event(construct_type(type_=ResponseStreamEvent, value=data))
        if data["type"] in ("response.failed", "response.incomplete"):
            sdk_end = sdk_events[-1]
        if done is not None:  # the item is complete where the SDK completes it
            sdk_done = sdk._completed_output[done.output_index]
            assert done.item == sdk_done.to_dict()
            if done.is_call:
                assert done.input == json.loads(done.item["arguments"])
    added = set(sdk._output_items) | set(sdk._completed_output)
    assert ours.open_indices == tuple(sorted(added - set(sdk._completed_output)))
    for index in ours.open_indices:  # what the deltas built, for the items a cut left open
        assert ours.open_item(index) == without_parse_fields(sdk._output_items[index].to_dict())
    assert [done.output_index for done in ours.completed] == list(sdk._completed_output)
    if ours.status == "completed":
        assert sdk._completed_response is not None
        assert ours.response() == without_parse_fields(sdk._completed_response.to_dict())
    elif ours.finished:  # failed, incomplete
        assert ours.response() == without_parse_fields(sdk_end.response.to_dict())
    else:
        assert sdk._completed_response is None
        assert ours.response()["output"] == [done.item for done in ours.completed]


# ----- Chat Completions -----


@st.composite
def chat_choice_deltas(draw: st.DrawFn, choice: int) -> list[Event]:
    """One choice's entries, in order: role, text, calls (arguments in pieces; a piece may share
    its entry list with the next call's start), the finish."""

    def entry(delta: Event, finish: str | None = None, logprobs: Any = None) -> Event:
        return {"index": choice, "delta": delta, "logprobs": logprobs, "finish_reason": finish}

    entries = [entry({"role": "assistant", "content": "", "refusal": None})]
    for part in draw(split_text(draw(texts))):
        logprobs = None
        if draw(st.integers(0, 4)) == 0:
            logprobs = {"content": [{"token": part, "logprob": -0.5, "bytes": None,
                                     "top_logprobs": []}], "refusal": None}
        entries.append(entry({"content": part}, logprobs=logprobs))
    pending: list[Event] = []  # tool_calls entries not yet sent
    calls = draw(st.integers(0, 3))
    for index in range(calls):
        start: Event = {"index": index, "id": f"call_{choice}_{index}", "type": "function",
                        "function": {"name": draw(st.sampled_from(["read", "grep"])),
                                     "arguments": ""}}
        pieces = draw(split_text(draw(arguments_text())))
        if pending and draw(st.booleans()):
            entries.append(entry({"tool_calls": [*pending, start]}))
        else:
            entries += [entry({"tool_calls": [one]}) for one in pending]
            entries.append(entry({"tool_calls": [start]}))
        pending = [{"index": index, "function": {"arguments": piece}} for piece in pieces[:-1]]
        entries += [entry({"tool_calls": [one]}) for one in pending]
        pending = [{"index": index, "function": {"arguments": pieces[-1]}}]
    entries += [entry({"tool_calls": [one]}) for one in pending]
    finish = "tool_calls" if calls else draw(st.sampled_from(["stop", "length"]))
    entries.append(entry({}, finish))
    return entries


@st.composite
def chat_streams(draw: st.DrawFn) -> list[Event | str]:
    head = {"id": f"chatcmpl-{draw(st.integers(0, 10**6))}", "object": "chat.completion.chunk",
            "created": 1_700_000_000, "model": "gpt-test",
            "system_fingerprint": draw(st.sampled_from([None, "fp_1"]))}
    if draw(st.booleans()):
        head["service_tier"] = "default"
    per_choice = [draw(chat_choice_deltas(choice)) for choice in range(draw(st.integers(1, 2)))]
    # Choices interleave at random, each in its own order, each first seen in index order (as
    # the API sends them; the SDK's snapshot even needs it: it lists choices by position).
    rest = draw(st.permutations([n for n, entries in enumerate(per_choice) for _ in entries[1:]]))
    order = [*range(len(per_choice)), *rest]
    positions = [0] * len(per_choice)
    chunks: list[Event | str] = []
    for choice in order:
        chunks.append({**head, "choices": [per_choice[choice][positions[choice]]]})
        positions[choice] += 1
    if draw(st.booleans()):  # stream_options.include_usage
        usage = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
        chunks.append({**head, "choices": [], "usage": usage})
    chunks.append(DONE)
    return cut(draw, chunks)


def sdk_done_calls(events: list[Any]) -> list[tuple[int, str, str]]:
    return [(event.index, event.name, event.arguments) for event in events
            if event.type == "tool_calls.function.arguments.done"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chat_streams(), st.booleans())
def test_chat_completions_equal_the_sdks(chunks: list[Event | str], speculative: bool) -> None:
    ours = ChatAccumulator(speculative=speculative)
    sdk = ChatCompletionStreamState()
    for data in decoded(sse_body(chunks, with_event_lines=False)):
        notices = ours.feed(data)
        if data == DONE:
            break
        sdk_events = sdk.handle_chunk(construct_type(type_=ChatCompletionChunk, value=data))
        complete = [(notice.call.index, notice.call.name, notice.call.call["function"]["arguments"])
                    for notice in notices if notice.kind == "complete"]
        assert complete == sdk_done_calls(sdk_events)  # known complete where the SDK says done
        for notice in notices:
            if notice.kind == "complete":
                assert notice.call.input == json.loads(notice.call.call["function"]["arguments"])
    snapshot = sdk.current_completion_snapshot.to_dict()
    for choice in snapshot["choices"]:  # the SDK keeps each streamed call's index
        for call in choice["message"].get("tool_calls") or []:
            call.pop("index")
    assert without_nulls(ours.completion()) == without_nulls(without_parse_fields(snapshot))


def without_nulls(completion: Event) -> Event:
    """Null fields dropped from the top and from each message: the SDK's snapshot has some
    (annotations, audio, usage...) or not depending on which of its models set them, not on the
    stream; the API's null and an absent field mean the same."""
    completion = {key: value for key, value in completion.items() if value is not None}
    completion["choices"] = [
        {**choice, "message": {key: value for key, value in choice["message"].items()
                               if value is not None}}
        for choice in completion["choices"]
    ]
    return completion

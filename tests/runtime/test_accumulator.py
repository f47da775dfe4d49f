"""The stream accumulator's rules, one test each, with hand-built event dicts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic._models import construct_type
from anthropic.types import RawMessageStreamEvent

from tests.helpers.runtime_script import message_start
from toolturn.runtime import accumulator as accumulator_module
from toolturn.runtime.accumulator import (
    BlockMessage,
    StreamAccumulator,
    StreamProtocolError,
    merge_block_messages,
)


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": fields}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def tool(index: int, tool_id: str = "toolu_1") -> dict[str, Any]:
    return block_start(index, {"type": "tool_use", "id": tool_id, "name": "f", "input": {}})


def json_part(index: int, text: str) -> dict[str, Any]:
    return delta(index, type="input_json_delta", partial_json=text)


def started(*events: dict[str, Any]) -> StreamAccumulator:
    accumulator = StreamAccumulator()
    for event in (message_start(), *events):
        accumulator.feed(event)
    return accumulator


def test_message_start_sets_id_model_and_usage() -> None:
    accumulator = started()
    assert (accumulator.message_id, accumulator.model, accumulator.started) == (
        "msg_1",
        "model-a",
        True,
    )
    assert accumulator.usage == {"input_tokens": 10, "output_tokens": 1}
    assert accumulator.snapshot()["content"] == []


def test_text_block_is_returned_whole_at_its_stop() -> None:
    accumulator = started(block_start(0, {"type": "text", "text": ""}))
    assert accumulator.feed(delta(0, type="text_delta", text="Hel")) is None
    accumulator.feed(delta(0, type="text_delta", text="lo"))
    done = accumulator.feed(block_stop(0))
    assert done == BlockMessage("msg_1", 0, {"type": "text", "text": "Hello"})
    assert done.as_message() == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Hello"}],
    }
    assert accumulator.completed == [done]


def test_thinking_starts_empty_appends_thinking_and_replaces_signature() -> None:
    accumulator = started(
        block_start(0, {"type": "thinking"}),
        delta(0, type="thinking_delta", thinking="a"),
        delta(0, type="signature_delta", signature="first"),
        delta(0, type="thinking_delta", thinking="b"),
        delta(0, type="signature_delta", signature="second"),
    )
    done = accumulator.feed(block_stop(0))
    assert done is not None
    assert done.block == {"type": "thinking", "thinking": "ab", "signature": "second"}


def test_thinking_without_deltas_has_empty_thinking_and_signature() -> None:
    done = started(block_start(0, {"type": "thinking"})).feed(block_stop(0))
    assert done is not None and done.block == {"type": "thinking", "thinking": "", "signature": ""}


def test_citations_append_to_the_text_block() -> None:
    first, second = (
        {"type": "char_location", "cited_text": "a"},
        {"type": "char_location", "cited_text": "b"},
    )
    accumulator = started(
        block_start(0, {"type": "text", "text": "", "citations": None}),
        delta(0, type="citations_delta", citation=first),
        delta(0, type="text_delta", text="x"),
        delta(0, type="citations_delta", citation=second),
    )
    done = accumulator.feed(block_stop(0))
    assert done is not None and done.block == {
        "type": "text",
        "text": "x",
        "citations": [first, second],
    }


def test_redacted_thinking_and_unknown_blocks_pass_through_untouched() -> None:
    redacted = {"type": "redacted_thinking", "data": "opaque"}
    future = {"type": "future_block", "payload": [1, {"k": None}]}
    accumulator = started(block_start(0, redacted), block_start(1, future))
    assert accumulator.feed(block_stop(1)) == BlockMessage("msg_1", 1, future)
    assert accumulator.feed(block_stop(0)) == BlockMessage("msg_1", 0, redacted)


def test_unknown_delta_types_are_ignored() -> None:
    accumulator = started(
        block_start(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="kept"),
        delta(0, type="future_delta", anything=1),
    )
    done = accumulator.feed(block_stop(0))
    assert done is not None and done.block["text"] == "kept"


def test_tool_input_is_parsed_once_at_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = accumulator_module.parse_json

    def counting_parse(text: str) -> Any:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(accumulator_module, "parse_json", counting_parse)
    accumulator = started(
        tool(0), *(json_part(0, part) for part in ['{"a": [1, ', '2], "b"', ': "\\u00', 'e9"}'])
    )
    assert calls == []
    done = accumulator.feed(block_stop(0))
    assert calls == ['{"a": [1, 2], "b": "\\u00e9"}']
    assert done is not None and done.block["input"] == {"a": [1, 2], "b": "é"}


def test_empty_tool_input_means_an_empty_object() -> None:
    done = started(tool(0), json_part(0, "")).feed(block_stop(0))
    assert done is not None
    assert (done.block["input"], done.input_error, done.raw_input) == ({}, None, None)
    assert done.input_json is None


def test_parsed_tool_input_keeps_the_text_it_was_parsed_from() -> None:
    text = '{"b": 1,  "a": "\\u00e9"}'
    accumulator = started(tool(0), json_part(0, text[:5]), json_part(0, text[5:]))
    done = accumulator.feed(block_stop(0))
    assert done is not None and done.block["input"] == {"b": 1, "a": "é"}
    assert (done.input_json, done.raw_input) == (text, None)


def test_server_tool_use_input_is_parsed_too() -> None:
    start = block_start(
        0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    )
    done = started(start, json_part(0, '{"query": "x"}')).feed(block_stop(0))
    assert done is not None and done.block["input"] == {"query": "x"}


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ('{"path": "unterminated', "not valid JSON"),
        ("[1, 2]", "JSON list, not an object"),
        ('{"x": NaN}', "NaN is not valid JSON"),
        # Parsed as inf, it was printed back as `Infinity`: not JSON either, so rejected as NaN.
        ('{"x": 1e999}', "1e999 is out of a double's range"),
        ('{"x": [-1.5e400]}', "-1.5e400 is out of a double's range"),
        # json recurses per level: RecursionError, which is not a ValueError, escaped.
        ("[" * 100_000 + "]" * 100_000, "nesting too deep"),
    ],
    ids=["cut", "list", "nan", "overflow", "negative-overflow", "deep"],
)
def test_invalid_tool_json_marks_the_block_instead_of_raising(raw: str, why: str) -> None:
    done = started(tool(0), json_part(0, raw)).feed(block_stop(0))
    assert done is not None
    assert done.block["input"] == {}
    assert (done.raw_input, done.input_json) == (raw, None)
    assert done.input_error is not None and why in done.input_error


def test_message_delta_sets_stop_reason_and_overwrites_the_usage_keys_it_carries() -> None:
    accumulator = started()
    accumulator.feed(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
            "usage": {"output_tokens": 40, "input_tokens": None, "cache_read_input_tokens": 3},
        }
    )
    assert (accumulator.stop_reason, accumulator.stop_sequence) == ("max_tokens", None)
    assert accumulator.usage == {
        "input_tokens": 10,
        "output_tokens": 40,
        "cache_read_input_tokens": 3,
    }
    accumulator.feed(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "stop_sequence", "stop_sequence": "##"},
            "usage": {"output_tokens": 41},
        }
    )
    snapshot = accumulator.snapshot()
    assert (
        snapshot["stop_reason"],
        snapshot["stop_sequence"],
        snapshot["usage"]["output_tokens"],
    ) == ("stop_sequence", "##", 41)


def test_ping_and_unknown_events_are_ignored() -> None:
    accumulator = started({"type": "ping"}, {"type": "future_event", "x": 1})
    assert accumulator.snapshot() == started().snapshot()


def test_message_stop_finishes() -> None:
    accumulator = started({"type": "message_stop"})
    assert accumulator.finished


def test_error_event_ends_the_stream_and_keeps_the_error() -> None:
    error = {"type": "overloaded_error", "message": "Overloaded"}
    accumulator = started(
        block_start(0, {"type": "text", "text": ""}), {"type": "error", "error": error}
    )
    assert accumulator.error == error
    assert not accumulator.finished
    assert accumulator.open_indices == (0,)
    with pytest.raises(StreamProtocolError, match="content_block_stop event after an error event"):
        accumulator.feed(block_stop(0))


def test_error_event_may_come_before_message_start() -> None:
    accumulator = StreamAccumulator()
    accumulator.feed({"type": "error", "error": {"type": "api_error", "message": "boom"}})
    assert accumulator.error == {"type": "api_error", "message": "boom"}
    assert not accumulator.started


def test_a_cut_reports_open_blocks_and_never_emits_them() -> None:
    accumulator = started(
        block_start(0, {"type": "text", "text": ""}),
        block_stop(0),
        tool(1),
        json_part(1, '{"a": '),
        tool(2, "toolu_2"),
    )
    assert accumulator.open_indices == (1, 2)
    assert [done.index for done in accumulator.completed] == [0]
    assert [block["type"] for block in accumulator.snapshot()["content"]] == ["text"]


def test_snapshot_is_in_index_order_and_detached() -> None:
    accumulator = started(
        block_start(0, {"type": "text", "text": ""}),
        tool(1),
        json_part(1, "{}"),
        block_stop(1),
        block_stop(0),
    )
    snapshot = accumulator.snapshot()
    assert [block["type"] for block in snapshot["content"]] == ["text", "tool_use"]
    assert [done.index for done in accumulator.completed] == [1, 0]  # completion order
    snapshot["content"][0]["text"] = "changed"
    assert accumulator.completed[1].block["text"] == ""


def test_sdk_typed_events_go_through_the_adapter() -> None:
    events = [
        message_start(),
        tool(0),
        json_part(0, '{"k": '),
        json_part(0, '"v"}'),
        block_stop(0),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
    from_dicts, from_sdk = StreamAccumulator(), StreamAccumulator()
    for event in events:
        from_dicts.feed(event)
        from_sdk.feed(construct_type(type_=RawMessageStreamEvent, value=event))
    assert from_sdk.completed == from_dicts.completed
    assert from_sdk.stop_reason == "tool_use" and from_sdk.usage["output_tokens"] == 5


def test_non_mapping_events_are_rejected() -> None:
    with pytest.raises(StreamProtocolError, match="must be a mapping"):
        StreamAccumulator().feed(["message_start"])


def test_merge_joins_blocks_of_one_id_in_index_order_and_keeps_ids_apart() -> None:
    blocks = [
        BlockMessage("msg_a", 1, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}),
        BlockMessage("msg_b", 0, {"type": "text", "text": "second message"}),
        BlockMessage("msg_a", 0, {"type": "text", "text": "first"}),
    ]
    assert merge_block_messages(blocks) == [
        {"role": "assistant", "content": [blocks[2].block, blocks[0].block]},
        {"role": "assistant", "content": [blocks[1].block]},
    ]
    assert merge_block_messages([]) == []


VIOLATIONS: list[tuple[list[dict[str, Any]], str]] = [
    ([block_start(0, {"type": "text"})], "content_block_start event before message_start"),
    ([{"type": "ping"}], "ping event before message_start"),
    ([delta(0, type="text_delta", text="x")], "content_block_delta event before message_start"),
    ([message_start(), message_start("msg_2")], "a second message_start"),
    (
        [message_start(), {"type": "message_stop"}, {"type": "ping"}],
        "ping event after message_stop",
    ),
    (
        [message_start(), delta(3, type="text_delta", text="x")],
        "index 3, which is no started block",
    ),
    (
        [message_start(), tool(0), block_stop(0), json_part(0, "{}")],
        "index 0, which is a stopped block",
    ),
    ([message_start(), block_stop(0)], "index 0, which is never started"),
    ([message_start(), tool(0), block_stop(0), block_stop(0)], "index 0, which is already stopped"),
    ([message_start(), tool(0), tool(0)], "index 0, which is still open"),
    (
        [message_start(), tool(0), delta(0, type="text_delta", text="x")],
        "text_delta does not fit the tool_use block",
    ),
    (
        [
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, type="signature_delta", signature="s"),
        ],
        "signature_delta does not fit the text block",
    ),
    (
        [
            message_start(),
            block_start(0, {"type": "redacted_thinking", "data": "d"}),
            delta(0, type="thinking_delta", thinking="t"),
        ],
        "thinking_delta does not fit the redacted_thinking block",
    ),
    (
        [message_start(), tool(0), {"type": "content_block_delta", "index": 0}],
        "malformed content_block_delta event",
    ),
    ([{"no_type": 1}], "malformed untyped event"),
    ([message_start(), block_start(-1, {"type": "text"})], "bad index"),
    (
        [message_start(), block_start(0, {"type": "thinking", "thinking": None})],
        "thinking block whose thinking is not a string",
    ),
    (
        [message_start(), {"type": "message_delta", "delta": [], "usage": {}}],
        "delta or usage is not an object",
    ),
]


@pytest.mark.parametrize(("events", "says"), VIOLATIONS)
def test_protocol_violations_raise_and_say_what_arrived(
    events: list[dict[str, Any]], says: str
) -> None:
    accumulator = StreamAccumulator()
    *before, culprit = events
    for event in before:
        accumulator.feed(event)
    with pytest.raises(StreamProtocolError, match=says) as raised:
        accumulator.feed(culprit)
    assert json.dumps(culprit)[:40] in str(raised.value)  # the message shows the event itself


def test_a_violation_in_a_deeply_nested_event_is_described_shortly() -> None:
    # Describing the event once recursed as deep as it was nested: RecursionError.
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    accumulator = started(tool(0))
    with pytest.raises(StreamProtocolError, match="partial_json is not a string") as raised:
        accumulator.feed(delta(0, type="input_json_delta", partial_json=deep))
    assert "[[[...]]]" in str(raised.value)


def test_a_violation_leaves_the_accumulator_unchanged() -> None:
    accumulator = started(
        block_start(0, {"type": "text", "text": ""}), delta(0, type="text_delta", text="a")
    )
    with pytest.raises(StreamProtocolError, match="text_delta whose text is not a string"):
        accumulator.feed(delta(0, type="text_delta", text=None))
    with pytest.raises(StreamProtocolError, match="malformed error event"):
        accumulator.feed({"type": "error", "error": [1, 2, 3]})
    done = accumulator.feed(block_stop(0))
    assert done is not None and done.block["text"] == "a"
    assert accumulator.error is None

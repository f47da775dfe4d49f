"""The Chat Completions accumulator's rules, one test each, with hand-built chunks."""

from __future__ import annotations

from typing import Any

import pytest
from openai._models import construct_type
from openai.types.chat import ChatCompletionChunk

from toolturn.runtime.accumulator import StreamProtocolError
from toolturn.runtime.openai.chat import DONE, ChatAccumulator

HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 7, "model": "gpt-t",
        "system_fingerprint": "fp_1"}


def chunk(delta: dict[str, Any], finish: str | None = None, choice: int = 0) -> dict[str, Any]:
    return {**HEAD, "choices": [{"index": choice, "delta": delta, "logprobs": None,
                                 "finish_reason": finish}]}


def calls(*entries: dict[str, Any]) -> dict[str, Any]:
    return chunk({"tool_calls": list(entries)})


def start(index: int, name: str = "read") -> dict[str, Any]:
    return {"index": index, "id": f"call_{index}", "type": "function",
            "function": {"name": name, "arguments": ""}}


def args(index: int, piece: str) -> dict[str, Any]:
    return {"index": index, "function": {"arguments": piece}}


def fed(*chunks: Any, speculative: bool = False) -> tuple[ChatAccumulator, list[list[Any]]]:
    accumulator = ChatAccumulator(speculative=speculative)
    notices = [[(n.kind, n.call.index) for n in accumulator.feed(one)] for one in chunks]
    return accumulator, notices


def test_text_and_refusal_accumulate_into_the_completion() -> None:
    accumulator, _ = fed(
        chunk({"role": "assistant", "content": "", "refusal": None}),
        chunk({"content": "Hel"}), chunk({"content": None}), chunk({"content": "lo \u00e9"}),
        chunk({}, "stop"),
        {**HEAD, "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2,
                                          "total_tokens": 5}},
        DONE,
    )
    assert accumulator.completion() == {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 7, "model": "gpt-t",
        "system_fingerprint": "fp_1",
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        "choices": [{"index": 0, "logprobs": None, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Hello \u00e9",
                                 "refusal": None}}],
    }
    assert accumulator.finished


def test_a_call_is_complete_when_the_next_index_begins() -> None:
    accumulator, notices = fed(
        calls(start(0)), calls(args(0, '{"p": ')), calls(args(0, '"a"}')),
        calls(start(1, "grep")), calls(args(1, "{}")), chunk({}, "tool_calls"),
    )
    assert notices == [[], [], [], [("complete", 0)], [], [("complete", 1)]]
    first, second = accumulator.completed
    assert (first.id, first.name, first.input) == ("call_0", "read", {"p": "a"})
    assert first.call == {"id": "call_0", "type": "function",
                          "function": {"name": "read", "arguments": '{"p": "a"}'}}
    assert (second.name, second.input, accumulator.open_calls) == ("grep", {}, ())


def test_several_calls_in_one_chunk_complete_in_it() -> None:
    whole = [{**start(n), "function": {"name": "read", "arguments": "{}"}} for n in range(3)]
    _, notices = fed(calls(*whole), chunk({}, "tool_calls"))
    assert notices == [[("complete", 0), ("complete", 1)], [("complete", 2)]]


def test_arguments_that_are_not_an_object_are_the_calls_error() -> None:
    accumulator, _ = fed(calls(start(0)), calls(args(0, "[1]")), calls(start(1)),
                         calls(args(1, '{"a"')), chunk({}, "tool_calls"))
    first, second = accumulator.completed
    assert first.input is None and first.input_error == "arguments are JSON list, not an object"
    assert second.input is None and "not valid JSON" in str(second.input_error)


def test_empty_arguments_are_the_empty_object() -> None:
    accumulator, _ = fed(calls(start(0)), chunk({}, "tool_calls"))
    assert (accumulator.completed[0].input, accumulator.completed[0].input_error) == ({}, None)


def test_a_call_continued_after_it_was_known_complete_is_a_violation() -> None:
    accumulator, _ = fed(calls(start(0)), calls(start(1)))
    with pytest.raises(StreamProtocolError, match="index 0 of choice 0, which was known complete"):
        accumulator.feed(calls(args(0, "{}")))
    accumulator, _ = fed(calls(start(0)), chunk({}, "tool_calls"))
    with pytest.raises(StreamProtocolError, match="was known complete"):
        accumulator.feed(calls(args(0, " ")))


def test_a_call_that_skips_an_index_is_a_violation() -> None:
    accumulator, _ = fed(calls(start(0)))
    with pytest.raises(StreamProtocolError, match="index 2 of choice 0, which skips an index"):
        accumulator.feed(calls(start(2)))


def test_speculative_notices_parsed_then_changed() -> None:
    accumulator, notices = fed(
        calls(start(0)), calls(args(0, '{"a": 1')), calls(args(0, "} ")), calls(args(0, "x")),
        chunk({}, "tool_calls"), speculative=True,
    )
    assert notices == [[], [], [("parsed", 0)], [("changed", 0)], [("complete", 0)]]
    assert accumulator.completed[0].input is None  # '{"a": 1} x' is no JSON


def test_a_speculative_parse_that_holds_is_the_completes_input() -> None:
    accumulator = ChatAccumulator(speculative=True)
    accumulator.feed(calls(start(0)))
    (parsed,) = accumulator.feed(calls(args(0, '{"a": [1]}')))
    (complete,) = accumulator.feed(chunk({}, "tool_calls"))
    assert parsed.kind == "parsed" and complete.kind == "complete"
    assert parsed.call.input == complete.call.input == {"a": [1]}


def test_without_speculation_no_parsed_notice() -> None:
    _, notices = fed(calls(start(0)), calls(args(0, "{}")), chunk({}, "tool_calls"))
    assert notices == [[], [], [("complete", 0)]]


def test_a_cut_leaves_the_open_call_unreported() -> None:
    accumulator, _ = fed(calls(start(0)), calls(start(1)), calls(args(1, '{"a"')))
    assert accumulator.open_calls == ((0, 1),)
    assert [done.index for done in accumulator.completed] == [0]
    assert accumulator.completion()["choices"][0]["message"]["tool_calls"][1]["function"] == {
        "name": "read", "arguments": '{"a"'}


def test_choices_accumulate_apart() -> None:
    accumulator, notices = fed(
        calls(start(0)), chunk({"content": "b"}, choice=1), chunk({}, "stop", choice=1),
        chunk({}, "tool_calls"),
    )
    first, second = accumulator.completion()["choices"]
    assert (first["finish_reason"], second["message"]["content"]) == ("tool_calls", "b")
    assert notices[-1] == [("complete", 0)] and accumulator.completed[0].choice == 0


def test_logprobs_extend() -> None:
    token = {"token": "a", "logprob": -1.0, "bytes": None, "top_logprobs": []}
    accumulator = ChatAccumulator()
    for _ in range(2):
        entry = chunk({"content": "a"})
        entry["choices"][0]["logprobs"] = {"content": [token], "refusal": None}
        accumulator.feed(entry)
    logprobs = accumulator.completion()["choices"][0]["logprobs"]
    assert logprobs == {"content": [token, token], "refusal": None}


def test_done_and_error_end_the_stream() -> None:
    accumulator, _ = fed(chunk({"content": "a"}), DONE)
    with pytest.raises(StreamProtocolError, match=r"a chunk after \[DONE\]"):
        accumulator.feed(chunk({"content": "b"}))
    accumulator, _ = fed(chunk({"content": "a"}), {"error": {"message": "overloaded"}})
    assert accumulator.error == {"message": "overloaded"}
    with pytest.raises(StreamProtocolError, match="a chunk after an error"):
        accumulator.feed(DONE)


def test_a_chunk_of_another_object_is_skipped() -> None:
    azure_filter = {"id": "", "object": "", "created": 0, "model": "", "choices": [],
                    "prompt_filter_results": [{"prompt_index": 0}]}
    accumulator, _ = fed(azure_filter, chunk({"content": "a"}))
    assert accumulator.completion()["id"] == "chatcmpl-1"


def test_a_malformed_chunk_is_named() -> None:
    cases = [
        ({"object": "chat.completion.chunk", "id": "x"},
         r"malformed chunk \(KeyError\('choices'\)\)"),
        (chunk({"content": 5}), "delta text that is not a string"),
        (calls({**start(0), "function": {"name": "f", "arguments": 1}}),
         "function arguments that are not a string"),
    ]
    for bad, message in cases:
        with pytest.raises(StreamProtocolError, match=message):
            ChatAccumulator().feed(bad)


def test_after_a_violation_every_chunk_is_refused() -> None:
    # The violating chunk's first entry was applied before its second broke the rule.
    accumulator, _ = fed(calls(start(0)))
    with pytest.raises(StreamProtocolError, match="skips an index"):
        accumulator.feed(calls(args(0, "{}"), start(5)))
    assert accumulator.broken is not None and "skips an index" in accumulator.broken
    with pytest.raises(StreamProtocolError, match=r"a chunk after a protocol violation \(tool"):
        accumulator.feed(chunk({}, "tool_calls"))


def test_sdk_chunk_objects_are_accepted() -> None:
    accumulator = ChatAccumulator()
    accumulator.feed(construct_type(type_=ChatCompletionChunk, value=chunk({"content": "hi"})))
    assert accumulator.completion()["choices"][0]["message"]["content"] == "hi"

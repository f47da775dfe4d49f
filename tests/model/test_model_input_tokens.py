"""The input-token estimate: characters / 4 of system, tools and content, the same whether a
message or tool list was counted before or not, and counted again when its content changes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from toolturn.model import input_tokens
from toolturn.model.input_tokens import InputTokenCounter, content_chars, value_chars

TOOLS = [
    {
        "name": "Read",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


def _transcript() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Please read the file."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a.py"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x" * 400}],
        },
    ]


def _walked(body: dict[str, Any]) -> int:
    """The estimate by a full walk, with nothing remembered."""
    size = value_chars(body.get("system", "")) + value_chars(body.get("tools", []))
    size += sum(content_chars(message["content"]) for message in body["messages"])
    return max(1, size // input_tokens.CHARS_PER_INPUT_TOKEN)


def _body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    tools = copy.deepcopy(TOOLS)
    return {"model": "m", "max_tokens": 100, "messages": list(messages), "tools": tools, **extra}


def test_counts_strings_keys_and_scalars() -> None:
    assert value_chars({"ab": [1, "cde", None]}) == 2 + 4 + 3 + 4
    assert content_chars("hello") == 5
    block = {"type": "tool_use", "id": "t", "name": "R", "input": {"k": 1}}
    assert content_chars([{"type": "text", "text": "hi"}, block]) == 2 + value_chars(block)


def test_a_growing_transcript_counts_as_a_full_walk() -> None:
    counter = InputTokenCounter()
    messages: list[dict[str, Any]] = []
    for message in _transcript():
        messages.append(message)
        body = _body(messages, system="Be brief.")
        assert counter(body, 1) == _walked(body)
        assert counter(body, 1) == _walked(body)  # the second time from memory
    # An equal but new body (as decoded from JSON) gets the same count.
    fresh = copy.deepcopy(_body(messages, system="Be brief."))
    assert counter(fresh, 1) == _walked(fresh)


@pytest.mark.parametrize("change", ["replace_content", "append_block", "new_tool"])
def test_changed_content_is_counted_again(change: str) -> None:
    counter = InputTokenCounter()
    messages = _transcript()
    body = _body(messages)
    before = counter(body, 1)
    if change == "replace_content":
        messages[2]["content"] = [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "y" * 4000}
        ]
    elif change == "append_block":
        messages[2]["content"].append({"type": "text", "text": "z" * 4000})
    else:
        body["tools"].append({"name": "Grep", "description": "g" * 4000, "input_schema": {}})
    assert counter(body, 1) == _walked(body) >= before + 900


def test_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(input_tokens, "CACHE_LIMIT", 3)
    counter = InputTokenCounter()
    for session in range(5):
        body = _body(copy.deepcopy(_transcript()))
        assert counter(body, session) == _walked(body)
    assert len(counter) <= 3


def test_a_forgotten_session_holds_nothing_and_is_counted_afresh() -> None:
    counter = InputTokenCounter()
    bodies = {"a": _body(_transcript()), "b": _body(_transcript()[:1], system="Be brief.")}
    for session, body in bodies.items():
        assert counter(body, session) == _walked(body)
    counter.forget("a")
    counter.forget("never seen")
    assert len(counter) == 1
    assert counter(bodies["a"], "a") == _walked(bodies["a"])
    # Another session's memory never gives a wrong count, only a slower one.
    assert counter(bodies["b"], "a") == _walked(bodies["b"]) < _walked(bodies["a"])
    assert counter(bodies["a"], "b") == _walked(bodies["a"])

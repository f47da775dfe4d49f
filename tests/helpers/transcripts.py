"""Transcripts for the pairing tests: hand-built messages, and hypothesis strategies of valid
transcripts and of the ways real ones break."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

Message = dict[str, Any]

SERVER_TOOLS = st.sampled_from(
    [
        ("server_tool_use", "web_search", "web_search_tool_result"),
        ("server_tool_use", "code_execution", "code_execution_tool_result"),
        ("mcp_tool_use", "fetch_page", "mcp_tool_result"),
    ]
)
WORDS = st.sampled_from(["hello", "ls -la", "result", "éè ✓", "42", "ok\nthen"])


@st.composite
def user_text(draw: st.DrawFn) -> Message:
    text = draw(WORDS)
    if draw(st.booleans()):
        return {"role": "user", "content": text}
    return {"role": "user", "content": [{"type": "text", "text": text}]}


@st.composite
def valid_transcripts(draw: st.DrawFn) -> list[Message]:
    """A transcript the API accepts: alternating turns with every tool call answered."""
    counter = iter(range(10_000))
    messages: list[Message] = [draw(user_text())]
    for _ in range(draw(st.integers(0, 6))):
        blocks: list[dict[str, Any]] = []
        if draw(st.booleans()):
            blocks.append({"type": "thinking", "thinking": draw(WORDS), "signature": "sig"})
        if draw(st.booleans()):
            blocks.append({"type": "text", "text": draw(WORDS)})
        for _ in range(draw(st.integers(0, 2))):
            server_id = f"srvtoolu_{next(counter)}"
            use_type, name, result_type = draw(SERVER_TOOLS)
            blocks.append({"type": use_type, "id": server_id, "name": name, "input": {}})
            blocks.append({"type": result_type, "tool_use_id": server_id, "content": []})
        tool_ids = [f"toolu_{next(counter)}" for _ in range(draw(st.integers(0, 3)))]
        blocks.extend(
            {"type": "tool_use", "id": tool_id, "name": "bash", "input": {"n": 1}}
            for tool_id in tool_ids
        )
        if not blocks:
            messages.append({"role": "assistant", "content": draw(WORDS)})
        else:
            messages.append({"role": "assistant", "content": blocks})
        if tool_ids:
            results: list[dict[str, Any]] = [
                {"type": "tool_result", "tool_use_id": tool_id, "content": draw(WORDS)}
                for tool_id in draw(st.permutations(tool_ids))
            ]
            if draw(st.booleans()):
                results.append({"type": "text", "text": draw(WORDS)})
            messages.append({"role": "user", "content": results})
        elif draw(st.booleans()):
            messages.append(draw(user_text()))
        else:
            break
    return messages


@st.composite
def broken_transcripts(draw: st.DrawFn) -> list[Message]:
    """A valid transcript damaged one to four times."""
    messages = copy.deepcopy(draw(valid_transcripts()))
    for _ in range(draw(st.integers(1, 4))):
        _break(draw, messages)
    return messages


def user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def _list_content_indices(messages: list[Message]) -> list[int]:
    return [i for i, m in enumerate(messages) if isinstance(m["content"], list) and m["content"]]


def _break(draw: st.DrawFn, messages: list[Message]) -> None:
    damage = draw(
        st.sampled_from(
            [
                "drop_message",
                "duplicate_message",
                "swap_messages",
                "truncate",
                "start_mid_turn",
                "drop_block",
                "duplicate_block",
                "move_block",
                "swap_blocks",
                "empty_content",
                "empty_text_block",
                "flip_role",
            ]
        )
    )
    if not messages:
        return
    index = draw(st.integers(0, len(messages) - 1))
    if damage == "drop_message":
        del messages[index]
    elif damage == "duplicate_message":
        messages.insert(index, copy.deepcopy(messages[index]))
    elif damage == "swap_messages" and index + 1 < len(messages):
        messages[index], messages[index + 1] = messages[index + 1], messages[index]
    elif damage == "truncate":
        del messages[index + 1 :]
    elif damage == "start_mid_turn":
        del messages[:index]
    elif damage == "flip_role":
        message = messages[index]
        message["role"] = "user" if message["role"] == "assistant" else "assistant"
    elif damage == "empty_content":
        messages[index]["content"] = draw(st.sampled_from(["", []]))
    elif damage == "empty_text_block":
        content = messages[index]["content"]
        if isinstance(content, list):
            content.insert(draw(st.integers(0, len(content))), {"type": "text", "text": ""})
    else:
        _break_blocks(draw, messages, damage)


def _break_blocks(draw: st.DrawFn, messages: list[Message], damage: str) -> None:
    candidates = _list_content_indices(messages)
    if not candidates:
        return
    content = messages[draw(st.sampled_from(candidates))]["content"]
    position = draw(st.integers(0, len(content) - 1))
    if damage == "drop_block":
        del content[position]
    elif damage == "duplicate_block":
        content.insert(position, copy.deepcopy(content[position]))
    elif damage == "swap_blocks":
        other = draw(st.integers(0, len(content) - 1))
        content[position], content[other] = content[other], content[position]
    elif damage == "move_block":
        block = content.pop(position)
        target = messages[draw(st.integers(0, len(messages) - 1))]
        if isinstance(target["content"], str):
            target["content"] = [{"type": "text", "text": target["content"]}]
        target["content"].insert(draw(st.integers(0, len(target["content"]))), block)

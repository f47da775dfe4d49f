"""Property tests: valid transcripts pass untouched; broken ones are repaired to a fixed point.

Valid transcripts are generated turn by turn (user text, assistant text / tool_use / server tool
pairs, user tool_results in any order, optional trailing text), then broken at random by the
ways real transcripts break: a block or message dropped, duplicated or moved, blocks or
messages reordered, the transcript truncated or started mid-turn, content emptied, a role flipped.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.runtime.repair import PairingError, check_pairing, ensure_tool_result_pairing

Message = dict[str, Any]

PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
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


def _list_content_indices(messages: list[Message]) -> list[int]:
    return [i for i, m in enumerate(messages) if isinstance(m["content"], list) and m["content"]]


@st.composite
def broken_transcripts(draw: st.DrawFn) -> list[Message]:
    """A valid transcript damaged one to four times."""
    messages = copy.deepcopy(draw(valid_transcripts()))
    for _ in range(draw(st.integers(1, 4))):
        _break(draw, messages)
    return messages


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


@PROPERTY_SETTINGS
@given(valid_transcripts())
def test_a_valid_transcript_passes_and_comes_back_unchanged(messages: list[Message]) -> None:
    snapshot = copy.deepcopy(messages)
    assert check_pairing(messages) == []
    repaired, repairs = ensure_tool_result_pairing(messages)
    assert repairs == []
    assert repaired == snapshot
    assert messages == snapshot
    assert ensure_tool_result_pairing(messages, strict=True) == (snapshot, [])


@PROPERTY_SETTINGS
@given(broken_transcripts())
def test_repair_output_passes_the_check(messages: list[Message]) -> None:
    repaired, _ = ensure_tool_result_pairing(messages)
    assert check_pairing(repaired) == []


@PROPERTY_SETTINGS
@given(broken_transcripts())
def test_repair_is_a_fixed_point(messages: list[Message]) -> None:
    repaired, _ = ensure_tool_result_pairing(messages)
    again, repairs = ensure_tool_result_pairing(repaired)
    assert repairs == []
    assert again == repaired


@PROPERTY_SETTINGS
@given(broken_transcripts())
def test_repair_never_mutates_its_input(messages: list[Message]) -> None:
    snapshot = copy.deepcopy(messages)
    ensure_tool_result_pairing(messages)
    assert messages == snapshot


@PROPERTY_SETTINGS
@given(broken_transcripts())
def test_the_check_and_the_repair_agree_on_what_is_broken(messages: list[Message]) -> None:
    violations = check_pairing(messages)
    _, repairs = ensure_tool_result_pairing(messages)
    assert bool(violations) == bool(repairs)
    if violations:
        with pytest.raises(PairingError) as error:
            ensure_tool_result_pairing(messages, strict=True)
        assert error.value.violations == violations


@PROPERTY_SETTINGS
@given(broken_transcripts())
def test_every_tool_use_kept_is_answered_first_in_the_next_message(
    messages: list[Message],
) -> None:
    repaired, _ = ensure_tool_result_pairing(messages)
    for index, message in enumerate(repaired):
        if message["role"] != "assistant" or isinstance(message["content"], str):
            continue
        use_ids = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if not use_ids:
            continue
        following = repaired[index + 1]["content"]
        leading = following[: len(use_ids)]
        assert sorted(b["tool_use_id"] for b in leading) == sorted(use_ids)
        assert all(b["type"] == "tool_result" for b in leading)

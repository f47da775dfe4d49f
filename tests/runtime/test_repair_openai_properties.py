"""Property tests for the OpenAI histories' pairing (Responses input items, Chat Completions
messages): valid histories pass untouched; broken ones are repaired to a fixed point where every
call is answered exactly once, real answers are kept, and nothing else moves.

Valid histories are generated turn by turn (a user message, then rounds of an optional reasoning
item or text, calls with fresh ids, their answers in any order), then broken the ways real
histories break: an item dropped, duplicated or moved, an orphan answer added, the history cut.
The checks here are compared with the wire server's (`toolturn.wire.openai_*_request.pairing`)
on the same histories (skipped where `toolturn.wire` lacks them).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolturn.runtime.openai.chat_pairing import check_chat_pairing
from toolturn.runtime.openai.chat_repair import ensure_chat_pairing
from toolturn.runtime.openai.responses_pairing import check_responses_pairing
from toolturn.runtime.openai.responses_repair import ensure_responses_pairing
from toolturn.runtime.pairing import RepairKind
from toolturn.runtime.repair import MISSING_RESULT_TEXT

Item = dict[str, Any]
PROPERTY_SETTINGS = settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# Our own lines (the API does not refuse duplicates): the rest is worded as the wire server, custom
# tool calls included (the server pairs them through the same walk).
OUR_LINES = ("Duplicate ", "reuses the tool call id", "is a second response")
CALL_TYPES = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
}


def _responses_round(draw: st.DrawFn, ids: list[str]) -> list[Item]:
    items: list[Item] = []
    if draw(st.booleans()):
        items.append({"type": "reasoning", "id": f"rs_{len(ids)}", "summary": []})
    if draw(st.booleans()):
        items.append({"type": "message", "role": "assistant", "content": "thinking aloud"})
    calls = [f"call_{len(ids) + n}" for n in range(draw(st.integers(1, 3)))]
    ids += calls
    types = {c: draw(st.sampled_from(sorted(CALL_TYPES))) for c in calls}
    items += [{"type": types[c], "call_id": c, "name": "f", "arguments": "{}"} for c in calls]
    if draw(st.booleans()):  # the API takes an output anywhere after its call
        items.append({"role": "developer", "content": "be brief"})
    outputs = draw(st.permutations(calls))
    items += [{"type": CALL_TYPES[types[c]], "call_id": c, "output": f"out {c}"} for c in outputs]
    return items


def _chat_round(draw: st.DrawFn, ids: list[str]) -> list[Item]:
    calls = [f"call_{len(ids) + n}" for n in range(draw(st.integers(1, 3)))]
    ids += calls
    content = draw(st.sampled_from([None, "", "let me look"]))
    assistant: Item = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}}
            for c in calls
        ],
    }
    outputs = draw(st.permutations(calls))
    tools: list[Item] = [
        {"role": "tool", "tool_call_id": c, "content": f"out {c}"} for c in outputs
    ]
    return [assistant, *tools]


@st.composite
def valid_histories(draw: st.DrawFn, protocol: str) -> list[Item]:
    round_of = _responses_round if protocol == "responses" else _chat_round
    history: list[Item] = [{"role": "user", "content": "hello"}]
    ids: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        history += round_of(draw, ids)
        if draw(st.booleans()):
            history.append({"role": "user", "content": "go on"})
    return history


def _orphan(protocol: str, call_id: str) -> Item:
    if protocol == "responses":
        return {"type": "function_call_output", "call_id": call_id, "output": "stray"}
    return {"role": "tool", "tool_call_id": call_id, "content": "stray"}


@st.composite
def broken_histories(draw: st.DrawFn, protocol: str) -> list[Item]:
    history = draw(valid_histories(protocol))
    for _ in range(draw(st.integers(1, 4))):
        operation = draw(st.sampled_from(["drop", "duplicate", "move", "orphan", "cut"]))
        if not history and operation != "orphan":
            continue
        at = draw(st.integers(0, max(len(history) - 1, 0)))
        to = draw(st.integers(0, len(history)))
        if operation == "drop":
            del history[at]
        elif operation == "duplicate":
            history.insert(to, copy.deepcopy(history[at]))
        elif operation == "move":
            history.insert(to, history.pop(at))
        elif operation == "orphan":
            call_id = draw(st.sampled_from(["call_0", "call_1", "call_99"]))
            history.insert(to, _orphan(protocol, call_id))
        else:
            history = history[:at]
    return history


def _calls_and_answers(protocol: str, history: list[Item]) -> tuple[list[str], list[str]]:
    """Every call id in order, and every answered id in order (an independent reading)."""
    if protocol == "responses":
        calls = [i["call_id"] for i in history if i.get("type") in CALL_TYPES]
        answers = [i["call_id"] for i in history if i.get("type") in CALL_TYPES.values()]
        return calls, answers
    calls = [
        c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls") or ()
    ]
    return calls, [m["tool_call_id"] for m in history if m["role"] == "tool"]


def _answer_text(protocol: str, answer: Item) -> Any:
    return answer.get("output") if protocol == "responses" else answer.get("content")


CHECK: dict[str, Callable[[list[Item]], list[str]]] = {
    "responses": check_responses_pairing,
    "chat": check_chat_pairing,
}
REPAIR: dict[str, Callable[..., tuple[list[Any], list[Any]]]] = {
    "responses": ensure_responses_pairing,
    "chat": ensure_chat_pairing,
}
PROTOCOLS = pytest.mark.parametrize("protocol", ["responses", "chat"])


@PROTOCOLS
@PROPERTY_SETTINGS
@given(data=st.data())
def test_a_valid_history_passes_and_comes_back_unchanged(
    protocol: str, data: st.DataObject
) -> None:
    history = data.draw(valid_histories(protocol))
    snapshot = copy.deepcopy(history)
    assert CHECK[protocol](history) == []
    repaired, repairs = REPAIR[protocol](history)
    assert repairs == []
    assert repaired == snapshot
    assert all(a is b for a, b in zip(repaired, history, strict=True))
    assert REPAIR[protocol](history, strict=True) == (snapshot, [])


@PROTOCOLS
@PROPERTY_SETTINGS
@given(data=st.data())
def test_repair_answers_every_call_once_and_is_a_fixed_point(
    protocol: str, data: st.DataObject
) -> None:
    history = data.draw(broken_histories(protocol))
    snapshot = copy.deepcopy(history)
    repaired, repairs = REPAIR[protocol](history)
    assert history == snapshot  # never mutated
    assert CHECK[protocol](repaired) == []
    assert REPAIR[protocol](repaired) == (repaired, [])
    calls, answers = _calls_and_answers(protocol, repaired)
    assert len(set(calls)) == len(calls)  # duplicates resolved
    assert Counter(answers) == Counter(calls)  # every call answered once, no orphan left
    inserted = [r for r in repairs if r.kind is RepairKind.MISSING_RESULT_INSERTED]
    synthetic = [a for a in repaired if _answer_text(protocol, a) == MISSING_RESULT_TEXT]
    assert len(inserted) == len(synthetic)
    # Nothing is invented but the error answers (and, in chat, an assistant message rebuilt
    # without its duplicate calls): every other item is one of the input's objects.
    originals = {id(item) for item in history}
    for item in repaired:
        if id(item) not in originals and not any(item is answer for answer in synthetic):
            assert protocol == "chat" and item["role"] == "assistant"


@PROPERTY_SETTINGS
@given(broken_histories("responses"))
def test_responses_repair_keeps_a_real_output_of_every_call_that_had_one(
    history: list[Item],
) -> None:
    outputs = set(CALL_TYPES.values())
    had_output = {(i["type"], i["call_id"]) for i in history if i.get("type") in outputs}
    repaired, _ = ensure_responses_pairing(history)
    for item in repaired:
        if (item.get("type"), item.get("call_id")) in had_output:
            assert item["output"] != MISSING_RESULT_TEXT
    # Items that do not pair keep their order.
    pairing = (*CALL_TYPES, *outputs)
    others = [i for i in history if i.get("type") not in pairing]
    assert [i for i in repaired if i.get("type") not in pairing] == others


@PROPERTY_SETTINGS
@given(broken_histories("chat"))
def test_chat_repair_keeps_non_tool_messages_in_order(history: list[Item]) -> None:
    repaired, _ = ensure_chat_pairing(history)
    kept = [m for m in repaired if m["role"] == "user"]
    assert kept == [m for m in history if m["role"] == "user"]
    assert sum(m["role"] == "assistant" for m in repaired) == sum(
        m["role"] == "assistant" for m in history
    )


def _wire_pairing(protocol: str) -> Callable[[dict[str, Any]], list[str]]:
    """The wire server's pairing check, as the lines of its problems (each also names the
    request's `param`, which our checks have no use for)."""
    module = "openai_responses_request" if protocol == "responses" else "openai_chat_request"
    wire = pytest.importorskip(f"toolturn.wire.{module}")
    return lambda body: [problem.message for problem in wire.pairing(body)]


@PROTOCOLS
@settings(PROPERTY_SETTINGS, max_examples=150)  # a check each of ours and the wire's: fewer
@given(data=st.data())
def test_the_checks_word_what_the_wire_server_refuses(protocol: str, data: st.DataObject) -> None:
    wire_pairing = _wire_pairing(protocol)
    history = data.draw(broken_histories(protocol))
    key = "input" if protocol == "responses" else "messages"
    wire = wire_pairing({"model": "m", key: history})
    ours = CHECK[protocol](history)
    calls, _ = _calls_and_answers(protocol, history)
    if protocol == "responses" or len(set(calls)) == len(calls):
        # The same lines in the same order, beside our lines about duplicates.
        assert [line for line in ours if not any(mark in line for mark in OUR_LINES)] == wire
    # Whatever the wire refuses, we refuse; whatever we accept, it accepts.
    assert bool(wire) <= bool(ours)

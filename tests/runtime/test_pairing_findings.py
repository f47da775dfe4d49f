"""The one classifier: each kind of finding, where it is found, how `check_pairing` words it and
which repair `ensure_tool_result_pairing` makes of it. Every `FindingKind` has a case here."""

from __future__ import annotations

from typing import Any

import pytest

from toolturn.runtime.pairing import (
    Finding,
    FindingKind,
    RepairKind,
    api_wording,
    check_pairing,
    classify_assistant,
    classify_user,
)
from toolturn.runtime.repair import ensure_tool_result_pairing

F, R = FindingKind, RepairKind
Message = dict[str, Any]
GO: Message = {"role": "user", "content": "go"}


def use(use_id: str, block_type: str = "tool_use", name: str = "Read") -> dict[str, Any]:
    return {"type": block_type, "id": use_id, "name": name, "input": {}}


def result(use_id: str, block_type: str = "tool_result") -> dict[str, Any]:
    return {"type": block_type, "tool_use_id": use_id, "content": "r"}


def text(value: str = "so") -> dict[str, Any]:
    return {"type": "text", "text": value}


def assistant(*blocks: dict[str, Any]) -> Message:
    return {"role": "assistant", "content": list(blocks)}


def user(*blocks: dict[str, Any]) -> Message:
    return {"role": "user", "content": list(blocks)}


# (transcript, index of the message with the findings, findings as (kind, position, id),
#  repairs as (kind, index, id))
CASES: dict[str, tuple[list[Message], int, list[tuple[Any, ...]], list[tuple[Any, ...]]]] = {
    "duplicate tool_use": (
        [GO, assistant(use("a")), user(result("a")), assistant(use("a"), text())], 3,
        [(F.DUPLICATE_TOOL_USE, 0, "a")], [(R.DUPLICATE_TOOL_USE_REMOVED, 3, "a")],
    ),
    "unanswered server use": (
        [GO, assistant(use("s", "server_tool_use", "web_search"), text())], 1,
        [(F.UNANSWERED_SERVER_USE, 0, "s")], [(R.SERVER_TOOL_USE_REMOVED, 1, "s")],
    ),
    "unexpected server result": (
        [GO, assistant(text(), result("s", "web_search_tool_result"))], 1,
        [(F.UNEXPECTED_SERVER_RESULT, 1, "s")], [(R.ORPHAN_RESULT_REMOVED, 1, "s")],
    ),
    "duplicate server result": (
        [GO, assistant(use("s", "server_tool_use", "web_search"),
                       result("s", "web_search_tool_result"),
                       result("s", "web_search_tool_result"))], 1,
        [(F.DUPLICATE_RESULT, 2, "s")], [(R.DUPLICATE_RESULT_REMOVED, 1, "s")],
    ),
    "duplicate result": (
        [GO, assistant(use("a")), user(result("a"), result("a"))], 2,
        [(F.DUPLICATE_RESULT, 1, "a")], [(R.DUPLICATE_RESULT_REMOVED, 2, "a")],
    ),
    "tool_result in an assistant message": (
        [GO, assistant(text(), result("z"))], 1,
        [(F.MISPLACED_BLOCK, 1, "z")], [(R.MISPLACED_BLOCK_REMOVED, 1, "z")],
    ),
    "tool_use in a user message": (
        [user(text(), use("q"))], 0,
        [(F.MISPLACED_BLOCK, 1, "q")], [(R.MISPLACED_BLOCK_REMOVED, 0, "q")],
    ),
    "empty text": (
        [user(text("hi"), text(""))], 0,
        [(F.EMPTY_TEXT, 1, None)], [(R.EMPTY_TEXT_REMOVED, 0, None)],
    ),
    "unexpected result": (
        [GO, assistant(text()), user(text(), result("z"), result("y"))], 2,
        [(F.UNEXPECTED_RESULT, 1, "z"), (F.UNEXPECTED_RESULT, 2, "y")],
        [(R.ORPHAN_RESULT_REMOVED, 2, "z"), (R.ORPHAN_RESULT_REMOVED, 2, "y")],
    ),
    "unexpected result in the first message": (
        [user(result("z"), text())], 0,
        [(F.UNEXPECTED_RESULT, 0, "z")], [(R.LEADING_ORPHAN_REMOVED, 0, "z")],
    ),
    "result not first": (
        [GO, assistant(use("a"), use("b")), user(result("a"), text(), result("b"))], 2,
        [(F.RESULT_NOT_FIRST, 2, "b")], [(R.RESULT_MOVED_TO_FRONT, 2, "b")],
    ),
    "result after a block the repair removes: no move": (
        [GO, assistant(use("a")), user(text(""), result("a"))], 2,
        [(F.EMPTY_TEXT, 0, None), (F.RESULT_NOT_FIRST, 1, "a")],
        [(R.EMPTY_TEXT_REMOVED, 2, None)],
    ),
    "missing result": (
        [GO, assistant(use("a"), use("b"), use("c")), user(result("b"))], 2,
        [(F.MISSING_RESULT, 1, "a"), (F.MISSING_RESULT, 1, "c")],
        [(R.MISSING_RESULT_INSERTED, 2, "a"), (R.MISSING_RESULT_INSERTED, 2, "c")],
    ),
}


def findings_of(messages: list[Message], index: int) -> list[Finding]:
    """The classifier's findings in `messages[index]`, with the state of the messages before."""
    seen: set[str] = set()
    awaiting: list[str] = []
    findings: list[Finding] = []
    for message in messages[: index + 1]:
        content = message["content"]
        blocks = content if isinstance(content, list) else []
        if message["role"] == "assistant":
            findings, awaiting = classify_assistant(blocks, seen)
        else:
            findings, awaiting = classify_user(blocks, awaiting), []
    return findings


@pytest.mark.parametrize("case", CASES)
def test_each_finding_has_its_wording_and_its_repair(case: str) -> None:
    messages, index, expected, repairs = CASES[case]
    findings = findings_of(messages, index)
    assert [(f.kind, f.position, f.tool_use_id) for f in findings] == expected
    assert check_pairing(messages) == api_wording(findings, index)
    repaired, made = ensure_tool_result_pairing(messages)
    assert [(r.kind, r.message_index, r.tool_use_id) for r in made] == repairs
    assert check_pairing(repaired) == []


def test_every_kind_has_a_case_and_a_repair() -> None:
    kinds = {expected[0] for _, _, found, _ in CASES.values() for expected in found}
    assert kinds == set(FindingKind)
    assert all(isinstance(kind.repair, RepairKind) for kind in FindingKind)


def test_the_api_words_some_kinds_once_per_message() -> None:
    messages, index, _, _ = CASES["missing result"]
    [line] = api_wording(findings_of(messages, index), index)
    assert line.startswith("messages.1: `tool_use` ids were found without") and "a, c." in line
    messages, index, _, _ = CASES["unexpected result"]
    [line] = api_wording(findings_of(messages, index), index)
    assert line.startswith("messages.2.content.1: unexpected `tool_use_id`") and "z, y." in line
    messages, index, _, _ = CASES["result not first"]
    assert api_wording(findings_of(messages, index), index) == [
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
        "Messages following `tool_use` blocks must begin with a matching number of "
        "`tool_result` blocks."
    ]


def test_a_missing_result_is_said_instead_of_results_not_first() -> None:
    messages = [GO, assistant(use("a"), use("b")), user(text(), result("a"))]
    findings = findings_of(messages, 2)
    assert {f.kind for f in findings} == {F.RESULT_NOT_FIRST, F.MISSING_RESULT}
    [line] = api_wording(findings, 2)
    assert "were found without `tool_result` blocks" in line and "b." in line

"""Hand-written cases for `ensure_tool_result_pairing`: one per repair kind, exact output."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.helpers.transcripts import assistant, text, user
from toolturn.runtime.pairing import TranscriptShapeError
from toolturn.runtime.repair import (
    MISSING_RESULT_TEXT,
    PLACEHOLDER_TEXT,
    RESUMED_SESSION_TEXT,
    PairingError,
    Repair,
    RepairKind,
    check_pairing,
    ensure_tool_result_pairing,
)

K = RepairKind


def use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "bash", "input": {"cmd": "ls"}}


def result(tool_id: str, content: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


def missing(tool_id: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tool_id,
        "is_error": True,
        "content": MISSING_RESULT_TEXT,
    }


def server_use(tool_id: str) -> dict[str, Any]:
    return {"type": "server_tool_use", "id": tool_id, "name": "web_search", "input": {"query": "q"}}


def server_result(tool_id: str) -> dict[str, Any]:
    return {"type": "web_search_tool_result", "tool_use_id": tool_id, "content": []}


def repair(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Repair]]:
    """Repair, and check on the way the properties every repair must have."""
    snapshot = copy.deepcopy(messages)
    repaired, repairs = ensure_tool_result_pairing(messages)
    assert messages == snapshot, "the input was mutated"
    assert check_pairing(repaired) == []
    assert ensure_tool_result_pairing(repaired) == (repaired, [])
    return repaired, repairs


def test_a_valid_transcript_comes_back_equal_with_shared_messages() -> None:
    messages = [
        {"role": "user", "content": "list files"},
        assistant(text("Listing."), use("toolu_01")),
        user(result("toolu_01"), text("thanks")),
        {"role": "assistant", "content": "Two files."},
    ]
    repaired, repairs = repair(messages)
    assert repairs == []
    assert repaired == messages
    assert all(out is original for out, original in zip(repaired, messages, strict=True))


def test_missing_result_is_inserted_first_in_the_next_user_message() -> None:
    repaired, repairs = repair(
        [
            user(text("go")),
            assistant(use("toolu_01"), use("toolu_02")),
            user(result("toolu_02"), text("and?")),
        ]
    )
    assert repaired[2] == user(missing("toolu_01"), result("toolu_02"), text("and?"))
    assert repairs == [Repair(K.MISSING_RESULT_INSERTED, 2, "toolu_01")]


def test_missing_results_before_a_string_user_message() -> None:
    repaired, repairs = repair(
        [user(text("go")), assistant(use("toolu_01")), {"role": "user", "content": "stop"}]
    )
    assert repaired[2] == user(missing("toolu_01"), text("stop"))
    assert repairs == [Repair(K.MISSING_RESULT_INSERTED, 2, "toolu_01")]


def test_a_user_message_is_appended_when_the_transcript_ends_on_tool_use() -> None:
    repaired, repairs = repair([user(text("go")), assistant(text("Running."), use("toolu_01"))])
    assert repaired[2] == user(missing("toolu_01"))
    assert repairs == [
        Repair(K.USER_MESSAGE_INSERTED, 2, None),
        Repair(K.MISSING_RESULT_INSERTED, 2, "toolu_01"),
    ]


def test_orphan_result_is_removed() -> None:
    repaired, repairs = repair(
        [user(text("go")), assistant(use("toolu_01")), user(result("toolu_01"), result("toolu_09"))]
    )
    assert repaired[2] == user(result("toolu_01"))
    assert repairs == [Repair(K.ORPHAN_RESULT_REMOVED, 2, "toolu_09")]


def test_result_for_a_tool_use_two_messages_back_is_an_orphan() -> None:
    repaired, repairs = repair(
        [
            user(text("go")),
            assistant(use("toolu_01")),
            user(result("toolu_01")),
            assistant(text("done")),
            user(result("toolu_01"), text("again")),
        ]
    )
    assert repaired[4] == user(text("again"))
    assert repairs == [Repair(K.ORPHAN_RESULT_REMOVED, 4, "toolu_01")]


def test_duplicate_tool_use_in_one_message_keeps_the_first() -> None:
    repaired, repairs = repair(
        [user(text("go")), assistant(use("toolu_01"), use("toolu_01")), user(result("toolu_01"))]
    )
    assert repaired[1] == assistant(use("toolu_01"))
    assert repairs == [Repair(K.DUPLICATE_TOOL_USE_REMOVED, 1, "toolu_01")]


def test_duplicate_tool_use_across_messages_drops_the_later_pair() -> None:
    repaired, repairs = repair(
        [
            user(text("go")),
            assistant(use("toolu_01")),
            user(result("toolu_01")),
            assistant(text("again"), use("toolu_01")),
            user(result("toolu_01", "second")),
        ]
    )
    assert repaired[3] == assistant(text("again"))
    assert repaired[4] == {"role": "user", "content": [text(PLACEHOLDER_TEXT)]}
    assert repairs == [
        Repair(K.DUPLICATE_TOOL_USE_REMOVED, 3, "toolu_01"),
        Repair(K.ORPHAN_RESULT_REMOVED, 4, "toolu_01"),
        Repair(K.PLACEHOLDER_INSERTED, 4, None),
    ]


def test_duplicate_result_keeps_the_first() -> None:
    repaired, repairs = repair(
        [
            user(text("go")),
            assistant(use("toolu_01")),
            user(result("toolu_01", "a"), result("toolu_01", "b")),
        ]
    )
    assert repaired[2] == user(result("toolu_01", "a"))
    assert repairs == [Repair(K.DUPLICATE_RESULT_REMOVED, 2, "toolu_01")]


def test_results_after_other_content_move_to_the_front_in_order() -> None:
    repaired, repairs = repair(
        [
            user(text("go")),
            assistant(use("toolu_01"), use("toolu_02")),
            user(result("toolu_02"), text("note"), result("toolu_01")),
        ]
    )
    assert repaired[2] == user(result("toolu_02"), result("toolu_01"), text("note"))
    assert repairs == [Repair(K.RESULT_MOVED_TO_FRONT, 2, "toolu_01")]


def test_leading_orphan_results_of_a_resumed_session_are_removed() -> None:
    repaired, repairs = repair([user(result("toolu_07"), text("continue")), assistant(text("ok"))])
    assert repaired[0] == user(text("continue"))
    assert repairs == [Repair(K.LEADING_ORPHAN_REMOVED, 0, "toolu_07")]


def test_a_first_message_of_only_orphan_results_gets_a_placeholder() -> None:
    repaired, repairs = repair([user(result("toolu_07")), assistant(text("ok"))])
    assert repaired[0] == user(text(PLACEHOLDER_TEXT))
    assert repairs == [
        Repair(K.LEADING_ORPHAN_REMOVED, 0, "toolu_07"),
        Repair(K.PLACEHOLDER_INSERTED, 0, None),
    ]


def test_a_transcript_starting_with_an_assistant_message_gets_a_user_message_first() -> None:
    repaired, repairs = repair([assistant(use("toolu_01")), user(result("toolu_01"))])
    assert repaired == [
        user(text(RESUMED_SESSION_TEXT)),
        assistant(use("toolu_01")),
        user(result("toolu_01")),
    ]
    assert repairs == [Repair(K.USER_MESSAGE_INSERTED, 0, None)]


def test_consecutive_same_role_messages_merge_strings_becoming_text_blocks() -> None:
    repaired, repairs = repair(
        [
            {"role": "user", "content": "first"},
            {"role": "user", "content": ""},
            user(text("second")),
            {"role": "assistant", "content": "answer"},
        ]
    )
    assert repaired[0] == user(text("first"), text("second"))
    assert repairs == [Repair(K.SAME_ROLE_MERGED, 0, None), Repair(K.SAME_ROLE_MERGED, 0, None)]


def test_merged_assistant_messages_answer_their_tool_uses_together() -> None:
    repaired, repairs = repair(
        [
            user(text("go")),
            assistant(use("toolu_01")),
            assistant(use("toolu_02")),
            user(result("toolu_02"), result("toolu_01")),
        ]
    )
    assert repaired[1] == assistant(use("toolu_01"), use("toolu_02"))
    assert repaired[2] == user(result("toolu_02"), result("toolu_01"))
    assert repairs == [Repair(K.SAME_ROLE_MERGED, 1, None)]


def test_an_emptied_user_message_gets_a_placeholder() -> None:
    repaired, repairs = repair(
        [user(text("go")), assistant(text("hi")), user(result("toolu_05")), assistant(text("bye"))]
    )
    assert repaired[2] == user(text(PLACEHOLDER_TEXT))
    assert repairs == [
        Repair(K.ORPHAN_RESULT_REMOVED, 2, "toolu_05"),
        Repair(K.PLACEHOLDER_INSERTED, 2, None),
    ]


def test_empty_content_gets_a_placeholder_except_a_final_assistant_prefill() -> None:
    repaired, repairs = repair(
        [
            {"role": "user", "content": ""},
            assistant(),
            user(text("x")),
            {"role": "assistant", "content": ""},
        ]
    )
    assert repaired == [
        user(text(PLACEHOLDER_TEXT)),
        assistant(text(PLACEHOLDER_TEXT)),
        user(text("x")),
        {"role": "assistant", "content": ""},
    ]
    assert repairs == [
        Repair(K.PLACEHOLDER_INSERTED, 0, None),
        Repair(K.PLACEHOLDER_INSERTED, 1, None),
    ]


def test_empty_text_blocks_are_removed() -> None:
    repaired, repairs = repair(
        [user(text(""), text("go")), assistant(text(""), use("toolu_01")), user(result("toolu_01"))]
    )
    assert repaired[0] == user(text("go"))
    assert repaired[1] == assistant(use("toolu_01"))
    assert repairs == [Repair(K.EMPTY_TEXT_REMOVED, 0, None), Repair(K.EMPTY_TEXT_REMOVED, 1, None)]


def test_server_tool_use_without_its_result_is_removed() -> None:
    repaired, repairs = repair(
        [
            user(text("search")),
            assistant(
                server_use("srvtoolu_01"),
                server_use("srvtoolu_02"),
                server_result("srvtoolu_02"),
                text("found"),
            ),
        ]
    )
    assert repaired[1] == assistant(
        server_use("srvtoolu_02"), server_result("srvtoolu_02"), text("found")
    )
    assert repairs == [Repair(K.SERVER_TOOL_USE_REMOVED, 1, "srvtoolu_01")]


def test_server_result_before_its_use_or_without_one_is_removed() -> None:
    repaired, repairs = repair(
        [
            user(text("search")),
            assistant(
                server_result("srvtoolu_01"),
                server_use("srvtoolu_01"),
                server_result("srvtoolu_01"),
                server_result("srvtoolu_01"),
            ),
        ]
    )
    assert repaired[1] == assistant(server_use("srvtoolu_01"), server_result("srvtoolu_01"))
    assert repairs == [
        Repair(K.ORPHAN_RESULT_REMOVED, 1, "srvtoolu_01"),
        Repair(K.DUPLICATE_RESULT_REMOVED, 1, "srvtoolu_01"),
    ]


def test_pairing_blocks_on_the_wrong_side_are_removed() -> None:
    repaired, repairs = repair(
        [user(text("go"), use("toolu_01")), assistant(text("hi"), result("toolu_02"))]
    )
    assert repaired == [user(text("go")), assistant(text("hi"))]
    assert repairs == [
        Repair(K.MISPLACED_BLOCK_REMOVED, 0, "toolu_01"),
        Repair(K.MISPLACED_BLOCK_REMOVED, 1, "toolu_02"),
    ]


def test_message_index_counts_in_the_output_transcript() -> None:
    # The user message inserted in front shifts every later index by one.
    _, repairs = repair([assistant(use("toolu_01")), user(text("no results"))])
    assert repairs == [
        Repair(K.USER_MESSAGE_INSERTED, 0, None),
        Repair(K.MISSING_RESULT_INSERTED, 2, "toolu_01"),
    ]


def test_an_empty_transcript_is_left_alone() -> None:
    assert ensure_tool_result_pairing([]) == ([], [])


def test_strict_mode_raises_with_every_violation_and_repairs_nothing() -> None:
    messages = [user(text("go")), assistant(use("toolu_01")), user(result("toolu_09"))]
    with pytest.raises(PairingError) as error:
        ensure_tool_result_pairing(messages, strict=True)
    assert error.value.violations == check_pairing(messages)
    assert len(error.value.violations) == 2


def test_strict_mode_returns_a_valid_transcript_as_is() -> None:
    messages = [user(text("go")), assistant(text("hi"))]
    assert ensure_tool_result_pairing(messages, strict=True) == (messages, [])


def test_repair_report_serialises_to_json_fields() -> None:
    assert Repair(K.ORPHAN_RESULT_REMOVED, 4, "toolu_09").to_json() == {
        "kind": "orphan_result_removed",
        "message_index": 4,
        "tool_use_id": "toolu_09",
    }


def test_input_that_is_not_a_transcript_raises_a_shape_error_naming_the_place() -> None:
    with pytest.raises(
        TranscriptShapeError, match=r"messages\[1\]\.content\[0\]: block has no 'type'"
    ):
        ensure_tool_result_pairing([user(text("go")), assistant({"text": "x"})])

"""`check_pairing`: each rule, worded exactly as the API's 400 responses word it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.transcripts import assistant, text, user
from toolturn.runtime.pairing import TranscriptShapeError
from toolturn.runtime.repair import check_pairing


def use(tool_id: str, block_type: str = "tool_use", name: str = "bash") -> dict[str, Any]:
    return {"type": block_type, "id": tool_id, "name": name, "input": {}}


def result(tool_id: str, block_type: str = "tool_result") -> dict[str, Any]:
    return {"type": block_type, "tool_use_id": tool_id, "content": "ok"}


def test_a_valid_transcript_has_no_violations() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        assistant(
            use("srvtoolu_01", "server_tool_use", "web_search"),
            result("srvtoolu_01", "web_search_tool_result"),
            use("toolu_01"),
            use("toolu_02"),
        ),
        user(result("toolu_02"), result("toolu_01"), text("more")),
        {"role": "assistant", "content": ""},
    ]
    assert check_pairing(messages) == []


def test_missing_results_are_listed_at_the_assistant_message_like_the_api() -> None:
    messages = [
        user(text("go")),
        assistant(text("x")),
        user(text("y")),
        assistant(use("toolu_01"), use("toolu_02")),
        user(text("no")),
    ]
    assert check_pairing(messages) == [
        "messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01, toolu_02. Each `tool_use` block must have a corresponding `tool_result` block "
        "in the next message."
    ]


def test_a_transcript_ending_on_tool_use_misses_its_results() -> None:
    assert check_pairing([user(text("go")), assistant(use("toolu_01"))]) == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01. Each `tool_use` block must have a corresponding `tool_result` block in the next "
        "message."
    ]


def test_unexpected_results_are_listed_at_the_first_offending_block_like_the_api() -> None:
    messages = [
        user(text("go")),
        assistant(text("a")),
        user(text("b")),
        assistant(use("toolu_01")),
        user(result("toolu_01"), result("toolu_09"), result("toolu_08")),
    ]
    assert check_pairing(messages) == [
        "messages.4.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_09, "
        "toolu_08. Each `tool_result` block must have a corresponding `tool_use` block in the "
        "previous message."
    ]


def test_results_not_at_the_front() -> None:
    messages = [
        user(text("go")),
        assistant(use("toolu_01"), use("toolu_02")),
        user(result("toolu_01"), text("x"), result("toolu_02")),
    ]
    assert check_pairing(messages) == [
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
        "Messages following `tool_use` blocks must begin with a matching number of `tool_result` "
        "blocks."
    ]


def test_roles() -> None:
    messages = [assistant(text("a")), user(text("b")), user(text("c"))]
    assert check_pairing(messages) == [
        'messages: first message must use the "user" role',
        'messages: roles must alternate between "user" and "assistant", but found multiple "user" '
        "roles in a row",
    ]


def test_empty_content() -> None:
    messages = [
        {"role": "user", "content": ""},
        assistant(),
        user(text("")),
        {"role": "assistant", "content": []},
    ]
    assert check_pairing(messages) == [
        "messages.0: user messages must have non-empty content",
        "messages: all messages must have non-empty content except for the optional final "
        "assistant message",
        "messages: text content blocks must be non-empty",
    ]


def test_duplicate_ids() -> None:
    messages = [
        user(text("go")),
        assistant(use("toolu_01"), use("toolu_01")),
        user(result("toolu_01"), result("toolu_01")),
        assistant(use("toolu_01")),
        user(text("x")),
    ]
    assert check_pairing(messages) == [
        "messages.1.content.1: tool_use ids must be unique",
        "messages.2.content.1: multiple `tool_result` blocks found for `tool_use_id` toolu_01. "
        "Each `tool_use` block must have exactly one result.",
        "messages.3.content.0: tool_use ids must be unique",
    ]


def test_server_tool_pairing() -> None:
    messages = [
        user(text("go")),
        assistant(
            result("srvtoolu_00", "advisor_tool_result"),
            use("srvtoolu_01", "server_tool_use", "web_fetch"),
            use("srvtoolu_02", "server_tool_use", "tool_search_tool_regex"),
        ),
    ]
    assert check_pairing(messages) == [
        "messages.1.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: "
        "srvtoolu_00. Each `advisor_tool_result` block must have a corresponding `server_tool_use` "
        "block before it.",
        "messages.1: `web_fetch` tool use with id `srvtoolu_01` was found without a corresponding "
        "`web_fetch_tool_result` block",
        "messages.1: `tool_search_tool_regex` tool use with id `srvtoolu_02` was found without a "
        "corresponding `tool_search_tool_result` block",
    ]


def test_pairing_blocks_on_the_wrong_side() -> None:
    messages = [user(text("go"), use("toolu_01")), assistant(result("toolu_02"))]
    assert check_pairing(messages) == [
        "messages.0.content.1: `tool_use` blocks are not allowed in `user` messages",
        "messages.1.content.0: `tool_result` blocks are not allowed in `assistant` messages",
    ]


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ([["user", "hi"]], r"messages\[0\]: a message must be an object, not list"),
        ([{"content": "hi"}], r"messages\[0\]: message has no 'role'"),
        (
            [{"role": "system", "content": "hi"}],
            r"messages\[0\]\.role: 'system' is not 'user' or 'assistant'",
        ),
        # Unhashable roles once crashed the set lookup with a TypeError.
        ([{"role": [], "content": "hi"}], r"messages\[0\]\.role: must be a string, not list"),
        ([{"role": {}, "content": "hi"}], r"messages\[0\]\.role: must be a string, not dict"),
        ([{"role": 1, "content": "hi"}], r"messages\[0\]\.role: must be a string, not int"),
        (None, r"^messages: must be a list, not NoneType$"),
        ({"role": "user", "content": "hi"}, r"^messages: must be a list, not dict$"),
        ("user", r"^messages: must be a list, not str$"),
        ([{"role": "user"}], r"messages\[0\]: message has no 'content'"),
        (
            [{"role": "user", "content": 3}],
            r"messages\[0\]\.content: must be a string or a list of blocks, not int",
        ),
        (
            [{"role": "user", "content": ["hi"]}],
            r"messages\[0\]\.content\[0\]: a block must be an object, not str",
        ),
        (
            [{"role": "user", "content": [{"text": "hi"}]}],
            r"messages\[0\]\.content\[0\]: block has no 'type'",
        ),
        (
            [{"role": "user", "content": [{"type": 1}]}],
            r"messages\[0\]\.content\[0\]\.type: must be a string, not int",
        ),
        (
            [{"role": "user", "content": [{"type": "tool_result"}]}],
            r"messages\[0\]\.content\[0\]: `tool_result` block has no string 'tool_use_id'",
        ),
        (
            [{"role": "assistant", "content": [{"type": "tool_use", "id": 5}]}],
            r"messages\[0\]\.content\[0\]: `tool_use` block has no string 'id'",
        ),
    ],
)
def test_input_that_is_not_a_transcript_raises(messages: list[Any], error: str) -> None:
    with pytest.raises(TranscriptShapeError, match=error):
        check_pairing(messages)


def test_a_server_tool_use_whose_name_is_not_a_string_is_called_by_its_type() -> None:
    # A name is printed in the violation only if it is a string: printing a list nested deeper
    # than the recursion limit raised RecursionError.
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    server_use = {**use("srvtoolu_01", "server_tool_use"), "name": deep}
    messages = [user(text("go")), assistant(server_use)]
    assert check_pairing(messages) == [
        "messages.1: `server_tool_use` tool use with id `srvtoolu_01` was found without a "
        "corresponding `server_tool_result` block"
    ]

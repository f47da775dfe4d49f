"""Recovery profiles (issue 16): each choice of `toolturn.runtime.recovery` on a scripted stream
under fake integer time, asserting the exact next request; the `default` answer of each is what the
older tests of the loop (test_loop_recovery.py) show. Every transcript is legal with no repair."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.helpers.loop_tools import TOOLS, tool_response
from tests.helpers.runtime_script import (
    PROMPT,
    READ_A,
    error_event,
    feed,
    message_end,
    message_start,
    of_type,
    result,
    sent,
    text_block,
    tool_use_block,
)
from toolturn.runtime.commands import (
    CancelTool,
    ResultReady,
    SendRequest,
    SessionEnded,
    StartTool,
    TurnEnded,
    WaitUntil,
)
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.outcomes import SyntheticCause
from toolturn.runtime.recovery import (
    CLAUDE_CODE,
    CONTINUE_TEXT,
    DEFAULT,
    PROFILES,
    RESUME_TEXT,
    AfterToolUseCut,
    RecoveryPolicy,
    ResultOrder,
    RunningOnCut,
    profile_of,
)
from toolturn.runtime.repair import check_pairing
from toolturn.runtime.tooldef import ToolDefinition

READ_B = {"type": "tool_use", "id": "b", "name": "Read", "input": {"path": "/b"}}
TEXT = {"type": "text", "text": "Reading."}


def started(profile: RecoveryPolicy | str, **settings: Any) -> ToolTurnLoop:
    loop = ToolTurnLoop(TOOLS, model="m", profile=profile, **settings)
    loop.start("go", 0)
    return loop


def clean(loop: ToolTurnLoop) -> None:
    assert check_pairing(loop.messages) == []
    assert loop.repairs == []


def test_profiles_by_name_or_object() -> None:
    assert set(PROFILES) == {"default", "claude-code", "codex"}
    assert profile_of("claude-code") is CLAUDE_CODE and profile_of(DEFAULT) is DEFAULT
    assert ToolTurnLoop(TOOLS, model="m").profile is DEFAULT
    unknown = r"unknown recovery profile 'nope' .known: default, claude"
    with pytest.raises(ValueError, match=unknown):
        ToolTurnLoop(TOOLS, model="m", profile="nope")


# ----- result order -----


@pytest.mark.parametrize(
    ("profile", "order"), [("default", ["a", "b"]), ("claude-code", ["b", "a"])]
)
def test_result_order(profile: str, order: list[str]) -> None:
    loop = started(profile)
    feed(loop, tool_response("msg_1", ("a", "Read", {"path": "/a"}), ("b", "Read", {"path": "/b"})),
         100)
    loop.tool_finished("b", "success", "B", 500)
    messages = sent(loop.tool_finished("a", "success", "A", 600))
    assert [block["tool_use_id"] for block in messages[-1]["content"]] == order
    clean(loop)


# ----- a cut after a tool_use completed -----


def partial_stream() -> list[dict[str, Any]]:
    return [message_start("msg_1"), *text_block(0, "Reading."),
            *tool_use_block(1, "a", "Read", {"path": "/a"}),
            *tool_use_block(2, "b", "Read", {"path": "/b"}, stop=False)]


@pytest.mark.parametrize("how", ["cut", "api_error"])
def test_continue_after_a_cut_with_a_complete_tool_use(how: str) -> None:
    loop = started("claude-code")
    assert [c.tool_use_id for c in of_type(StartTool, feed(loop, partial_stream(), 100))] == ["a"]
    out = (loop.stream_ended(900) if how == "cut" else loop.on_event(error_event("api_error"), 900))
    assert of_type(CancelTool, out) == [] and of_type(WaitUntil, out) == []
    assert of_type(SessionEnded, out) == []
    out = loop.tool_finished("a", "success", "A", 1_000)
    assert of_type(TurnEnded, out) == [TurnEnded(1, "stream_error", 1)]
    assert sent(out) == [
        PROMPT, {"role": "assistant", "content": [TEXT, READ_A]},
        {"role": "user", "content": [result("a", "A")]},
    ]
    clean(loop)


def test_an_attempt_overloaded_after_content_is_discarded_and_retried() -> None:
    loop = started("default")
    feed(loop, partial_stream(), 100)
    out = loop.on_event(error_event("overloaded_error"), 900)
    assert of_type(CancelTool, out) == [CancelTool("a", SyntheticCause.DISCARDED)]
    assert of_type(WaitUntil, out) == [WaitUntil(900 + 500_000_000)]
    assert sent(loop.wake(900 + 500_000_000)) == [PROMPT]


def test_claude_code_keeps_the_calls_of_a_stream_overloaded_after_content() -> None:
    # As the CLI 2.1.337 does (3 runs of 3 of the probe's error_after_tool_use, 2026-12-07):
    # the completed call is kept and answered, the turn goes on; no retry of the attempt.
    loop = started("claude-code")
    feed(loop, partial_stream(), 100)
    out = loop.on_event(error_event("overloaded_error"), 900)
    assert of_type(CancelTool, out) == [] and of_type(WaitUntil, out) == []
    out = loop.tool_finished("a", "success", "A", 1_000)
    assert of_type(TurnEnded, out) == [TurnEnded(1, "stream_error", 1)]
    assert sent(out) == [
        PROMPT, {"role": "assistant", "content": [TEXT, READ_A]},
        {"role": "user", "content": [result("a", "A")]},
    ]
    clean(loop)


def test_running_calls_finish_when_a_cut_ends_the_session() -> None:
    finish = replace(DEFAULT, name="finish", running_on_cut=RunningOnCut.FINISH)
    loop = started(finish)
    feed(loop, partial_stream(), 100)
    out = loop.stream_ended(900)
    assert of_type(CancelTool, out) == [] and of_type(SessionEnded, out) == []
    out = loop.tool_finished("a", "success", "A", 1_000)
    assert of_type(SessionEnded, out) == [SessionEnded("stream_error")]
    assert loop.messages[-1] == {"role": "user", "content": [result("a", "A")]}
    clean(loop)


# ----- a cut after text only -----


def test_resume_after_a_cut_with_text_only_is_sent_at_once() -> None:
    loop = started("claude-code")
    feed(loop, [message_start("msg_1"), *text_block(0, "Half an ans"),
                *text_block(1, "swer", parts=1)[:2]], 100)
    out = loop.stream_ended(500)
    assert of_type(WaitUntil, out) == []
    assert sent(out) == [
        PROMPT, {"role": "assistant", "content": [{"type": "text", "text": "Half an ans"}]},
        {"role": "user", "content": [{"type": "text", "text": RESUME_TEXT}]},
    ]
    clean(loop)


def test_resume_when_nothing_of_the_text_survived_joins_the_prompt() -> None:
    loop = started("claude-code")
    feed(loop, [message_start("msg_1"), *text_block(0, "Half", parts=1)[:2]], 100)
    out = loop.on_event(error_event("api_error", "Internal"), 500)
    assert sent(out) == [
        {"role": "user", "content": [{"type": "text", "text": "go"},
                                     {"type": "text", "text": RESUME_TEXT}]},
    ]


# ----- a cut before any content -----


@pytest.mark.parametrize("how", ["cut", "api_error"])
def test_retry_the_identical_request_after_a_cut_before_content(how: str) -> None:
    loop = ToolTurnLoop(TOOLS, model="m", profile="claude-code")
    [first] = loop.start("go", 0)
    loop.on_event(message_start("msg_1"), 100)
    out = (loop.stream_ended(200) if how == "cut"
           else loop.on_event(error_event("api_error", "Internal"), 200))
    assert of_type(WaitUntil, out) == [WaitUntil(200 + 500_000_000)]
    [again] = loop.wake(200 + 500_000_000)
    assert isinstance(again, SendRequest)
    assert again.request_body == first.request_body and again.attempt == 2


def test_default_ends_the_session_on_a_cut_after_message_start() -> None:
    loop = started("default")
    loop.on_event(message_start("msg_1"), 100)
    assert of_type(SessionEnded, loop.stream_ended(200)) == [SessionEnded("stream_error")]


# ----- max_tokens -----


def test_continue_after_max_tokens_without_a_complete_tool_use() -> None:
    loop = started("claude-code")
    events = [message_start("msg_1"), *text_block(0, "Reading."),
              *tool_use_block(1, "b", "Read", {"path": "/b"}, stop=False),
              *message_end("max_tokens")]
    out = feed(loop, events, 100)
    assert of_type(TurnEnded, out) == [TurnEnded(1, "max_tokens", 0)]
    assert sent(out) == [
        PROMPT, {"role": "assistant", "content": [TEXT]},
        {"role": "user", "content": [{"type": "text", "text": CONTINUE_TEXT}]},
    ]
    clean(loop)


def test_default_ends_the_session_at_max_tokens_without_a_tool_use() -> None:
    loop = started("default")
    out = feed(loop, [message_start("msg_1"), *text_block(0, "Read"), *message_end("max_tokens")],
               100)
    assert of_type(SessionEnded, out) == [SessionEnded("max_tokens")]


def test_a_closed_tool_use_cut_by_max_tokens_is_malformed_json_with_no_continuation() -> None:
    loop = started("claude-code")
    events = [message_start("msg_1"), *tool_use_block(0, "a", "Read", '{"path": "/a'),
              *message_end("max_tokens")]
    out = feed(loop, events, 100)
    assert of_type(StartTool, out) == []
    raw = '{"path": "/a'
    messages = sent(out)
    assert messages[:2] == [
        PROMPT,
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "Read",
             "input": {"__unparsedToolInput": {"raw": raw, "len": len(raw)}}}]},
    ]
    [answer] = messages[2]["content"]
    assert answer["tool_use_id"] == "a" and answer["is_error"]
    assert answer["content"].startswith(
        "<tool_use_error>Error: input for tool 'Read' is not valid JSON: "
    ) and answer["content"].endswith("</tool_use_error>")
    clean(loop)


# ----- error wording -----


def test_an_unknown_tools_result_is_worded_by_the_profile() -> None:
    for profile, text in [
        ("default", "Error: no such tool: 'Nope'."),
        ("claude-code", "<tool_use_error>Error: No such tool available: Nope</tool_use_error>"),
    ]:
        loop = started(profile)
        out = feed(loop, tool_response("msg_1", ("n", "Nope", {})), 100)
        assert sent(out)[-1] == {"role": "user", "content": [result("n", text, is_error=True)]}


def test_the_claude_code_profiles_own_error_texts_say_they_are_not_the_clis() -> None:
    texts = PROFILES["claude-code"].error_texts
    for text in (texts.invalid_json_text("Read", "x"), texts.invalid_input_text("Read", "x")):
        assert "(worded by toolturn's claude-code profile, not by the CLI)" in text
    assert "toolturn" not in texts.unknown_tool_text("Read")  # the CLI's own words


# ----- duplicate ids -----


def test_run_each_runs_a_repeated_id_after_the_first_and_keeps_the_first() -> None:
    loop = started("claude-code")
    calls = ("t1", "Read", {"path": "/a"}), ("t1", "Read", {"path": "/b"})
    out = feed(loop, tool_response("msg_1", *calls), 100)
    assert [c.input for c in of_type(StartTool, out)] == [{"path": "/a"}]
    out = loop.tool_finished("t1", "success", "first", 500)
    assert [c.input for c in of_type(StartTool, out)] == [{"path": "/b"}]
    assert of_type(SendRequest, out) == []
    messages = sent(loop.tool_finished("t1", "success", "second", 900))
    assert messages == [
        PROMPT,
        {"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "/a"}}]},
        {"role": "user", "content": [result("t1", "first")]},
    ]
    clean(loop)


# ----- retries -----


def test_claude_codes_retry_budget_and_backoff() -> None:
    loop = started("claude-code")
    now = 0
    for retry in range(1, 11):
        [wait] = loop.request_failed(529, now)
        # 500 ms x 2^(n-1), capped at 32 s (the cap is ours: not observed).
        assert wait == WaitUntil(now + min(500_000_000 * 2 ** (retry - 1), 32_000_000_000))
        now = wait.time_ns
        assert isinstance(loop.wake(now)[0], SendRequest)
    assert loop.request_failed(529, now) == [SessionEnded("request_failed")]


def test_jitter_is_added_when_the_profile_says_so() -> None:
    retry = replace(CLAUDE_CODE.retry, jitter=lambda _: 0.25)  # type: ignore[type-var]
    loop = started("claude-code", retry=retry)
    assert loop.request_failed(429, 0) == [WaitUntil(625_000_000)]


# ----- siblings and per-call safety -----


def test_a_failing_bash_cancels_no_sibling_under_claude_code() -> None:
    # Bash (cancels_siblings in TOOLS) runs alone; the Read queued behind it is ended by its
    # failure under default, and starts after it under claude-code.
    for profile, starts in [("default", []), ("claude-code", ["a"])]:
        loop = started(profile)
        feed(loop, tool_response("msg_1", ("x", "Bash", {"command": "false"}),
                                 ("a", "Read", {"path": "/a"})), 100)
        out = loop.tool_finished("x", "error", "exit 1", 500)
        assert [c.tool_use_id for c in of_type(StartTool, out)] == starts, profile


BASH_TOOLS = [
    ToolDefinition("Bash", {"type": "object"}), ToolDefinition("Read", concurrency_safe=True),
]


def test_read_only_bash_runs_in_parallel_and_anything_else_alone_in_fifo_order() -> None:
    loop = ToolTurnLoop(BASH_TOOLS, model="m", profile="claude-code")
    loop.start("go", 0)
    calls = [("l", "Bash", {"command": "ls -la"}), ("g", "Bash", {"command": "git status"}),
             ("w", "Bash", {"command": "ls > out"}), ("c", "Bash", {"command": "cat a"})]
    out = feed(loop, tool_response("msg_1", *calls), 100)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["l", "g"]
    loop.tool_finished("l", "success", "", 1_000)
    out = loop.tool_finished("g", "success", "", 1_100)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["w"]  # "c" waits behind it
    out = loop.tool_finished("w", "success", "", 1_200)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["c"]
    # The default profile knows no such rule: every Bash call runs alone.
    loop = ToolTurnLoop(BASH_TOOLS, model="m")
    loop.start("go", 0)
    assert [c.tool_use_id for c in of_type(StartTool, feed(loop, tool_response("msg_1", *calls),
                                                            100))] == ["l"]


def test_a_profile_of_ones_own() -> None:
    mine = replace(DEFAULT, name="mine", result_order=ResultOrder.COMPLETION,
                   after_tool_use_cut=AfterToolUseCut.CONTINUE)
    loop = started(mine)
    feed(loop, partial_stream(), 100)
    assert of_type(SessionEnded, loop.stream_ended(900)) == []
    assert of_type(ResultReady, loop.tool_finished("a", "success", "A", 1_000))


def test_run_each_with_only_a_repeat_of_a_transcript_id_ends_as_without_calls() -> None:
    loop = started("claude-code")
    feed(loop, tool_response("msg_1", ("t1", "Read", {"path": "/a"})), 100)
    loop.tool_finished("t1", "success", "first", 500)
    out = feed(loop, tool_response("msg_2", ("t1", "Read", {"path": "/b"}), text="Again."), 600)
    assert [c.input for c in of_type(StartTool, out)] == [{"path": "/b"}]
    out = loop.tool_finished("t1", "success", "again", 900)
    assert of_type(SessionEnded, out) == [SessionEnded("tool_use")]
    again = {"role": "assistant", "content": [{"type": "text", "text": "Again."}]}
    assert loop.messages[-1] == again
    clean(loop)

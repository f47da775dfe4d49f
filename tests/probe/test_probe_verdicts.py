"""The probe's classes, read from what the client sent next (`toolturn.probe.verdicts`, issue 30):
each class from a scripted pair of requests, a run's class over several struck requests, and
what the project's own claude-code profile does in every shipped case (its run through
ToolTurnLoop, `toolturn.probe.profile_agent`)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from toolturn.model.response import Turn
from toolturn.probe.exchanges import Exchange
from toolturn.probe.profile_agent import profile_class, run_tool
from toolturn.probe.suite import PACKAGED_SUITE, load_suite
from toolturn.probe.verdicts import CLASSES, run_class
from toolturn.runtime.outcomes import ToolOutcome
from toolturn.runtime.recovery import CODEX, DEFAULT, RetryTransport
from toolturn.wire.next_step import WrittenCall, next_step

PROMPT = {"role": "user", "content": "Look at this project."}
TEXT = {"type": "text", "text": "I will look."}
READ = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "README.md"}}
BASH = {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "ls"}}
RESULT_1 = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "# probe"}
RESULT_2 = {"type": "tool_result", "tool_use_id": "toolu_2", "content": "README.md"}
RESUME = {"role": "user", "content": "Output token limit hit. Resume directly."}


def exchange(index: int, messages: list[Any], *, stream: bool = True, extra: Any = None,
             violations: tuple[str, ...] = (), answer: list[dict[str, Any]] | None = None,
             completed: set[int] | None = None, session: int = 1) -> Exchange:
    body: dict[str, Any] = {"model": "m", "max_tokens": 100, "messages": messages,
                            "stream": stream}
    if extra is not None:
        body["metadata"] = extra
    written = [WrittenCall(b["id"], completed is None or i in completed)
               for i, b in enumerate(answer or []) if b["type"] == "tool_use"]
    return Exchange(index, Turn(session, 0, 1), json.dumps(body).encode(), body, violations,
                    faulted=answer is not None, written=written)


def step(struck: Exchange, following: Exchange | None) -> str:
    """The class of the pair, by the one classifier (`toolturn.wire.next_step`)."""
    return next_step(struck.asked(), struck.written, None if following is None
                     else following.asked())


STRUCK = exchange(0, [PROMPT], answer=[TEXT, READ, BASH], completed={0, 1})


def then(messages: list[Any], **options: Any) -> Exchange:
    return exchange(1, messages, **options)


@pytest.mark.parametrize(("following", "verdict"), [
    (None, "stopped"),
    (replace(STRUCK, index=1, faulted=False), "identical_retry"),
    (then([PROMPT], stream=False), "non_streaming_retry"),
    (then([PROMPT], extra={"user_id": "x"}), "modified_retry"),
    (then([PROMPT, {"role": "assistant", "content": [TEXT, READ, READ]},
           {"role": "user", "content": [RESULT_1]}], violations=("tool_use ids must be unique",)),
     "broken_transcript"),
    (then([PROMPT, {"role": "assistant", "content": [TEXT, READ]},
           {"role": "user", "content": [RESULT_1]}]), "calls_answered"),
    (then([PROMPT, {"role": "assistant", "content": [TEXT, READ]},
           {"role": "user", "content": [{**RESULT_1, "is_error": True}]}]),
     "calls_answered_with_errors"),
    (then([PROMPT, {"role": "assistant", "content": [TEXT, BASH]},
           {"role": "user", "content": [RESULT_2]}]), "some_calls_dropped"),
    (then([PROMPT, {"role": "assistant", "content": [TEXT]}, RESUME]), "calls_dropped_resumed"),
    (then([PROMPT, RESUME]), "calls_dropped_resumed"),
    # The CLI (2.1.332) wraps its resume prompt in a reminder tag.
    (then([PROMPT, {"role": "assistant", "content": [TEXT]},
           {"role": "user", "content": [{"type": "text", "text": "<system-reminder>\nOutput "
                                         "token limit hit.\n</system-reminder>"}]}]),
     "calls_dropped_resumed"),
    (then([PROMPT, {"role": "assistant", "content": [TEXT]},
           {"role": "user", "content": [{"type": "text", "text": " "}]}]), "calls_dropped"),
    (then([{"role": "user", "content": "Summarise this conversation."}]),
     "transcript_rewritten"),
])
def test_each_class_from_what_the_client_sent_next(following: Exchange | None,
                                                   verdict: str) -> None:
    assert step(STRUCK, following) == verdict
    assert verdict in CLASSES


def test_an_answer_without_calls_is_resumed_or_moved_on() -> None:
    struck = exchange(0, [PROMPT], answer=[TEXT])
    kept = {"role": "assistant", "content": [TEXT]}
    assert step(struck, then([PROMPT, kept, RESUME])) == "resumed"
    assert step(struck, then([PROMPT, kept, {"role": "user", "content": [
        RESULT_1]}])) == "moved_on"


def test_cache_markers_and_system_messages_do_not_count_as_changes() -> None:
    marked = {"role": "user", "content": [{"type": "text", "text": "Look at this project.",
                                           "cache_control": {"type": "ephemeral"}}]}
    struck = exchange(0, [{"role": "user", "content": [{"type": "text",
                                                        "text": "Look at this project."}]}],
                      answer=[TEXT])
    assert step(struck, then([{"role": "system", "content": "s"}, marked])) == (
        "modified_retry")


def test_a_run_joins_its_struck_requests_classes_once_each_in_order() -> None:
    first = replace(STRUCK, index=0)
    again = replace(STRUCK, index=1)
    other = then([PROMPT], stream=False)
    other.faulted = False
    assert run_class([first, again, other]) == "identical_retry+non_streaming_retry"
    # Another session's request between them is not what this session did next.
    stranger = replace(exchange(1, [PROMPT, RESUME], session=2), index=1)
    assert run_class([first, stranger]) == "stopped"
    assert run_class([replace(STRUCK, faulted=False)]) == "fault_not_reached"


# What the claude-code profile does in each shipped case (CLI 2.1.337's, measured 2026-12-07): a
# cut keeps the completed calls and goes on; a cut before any block is retried as it was; an
# `event: error` is a cut (retried streaming); max_tokens inside a call drops it and asks
# to resume; bad calls (and a call closed by max_tokens) get error results and the turn goes on.
PROFILE = {
    "two_calls_clean": "calls_answered", "out_of_order_reads": "calls_answered",
    "cut_in_tool_json": "calls_answered", "cut_after_tool_use": "calls_answered",
    "cut_after_tool_use_late_cut": "calls_answered",
    "cut_after_tool_use_clean_eof": "calls_answered",
    "cut_before_first_block": "identical_retry",
    "error_after_tool_use": "calls_answered", "error_before_blocks": "identical_retry",
    "overloaded_storm": "identical_retry",
    "stall_after_message_start": "calls_answered", "stall_after_text": "calls_answered",
    "malformed_tool_json": "calls_answered_with_errors",
    "unknown_tool": "calls_answered_with_errors",
    "invalid_tool_input": "calls_answered_with_errors", "duplicate_tool_ids": "calls_answered",
    "max_tokens_open_tool_use": "calls_dropped_resumed",
    "max_tokens_closed_tool_use": "calls_answered_with_errors",
    "end_turn_with_tool_use": "calls_answered",
}
SUITE = load_suite(PACKAGED_SUITE)
FAST = replace(SUITE, speed=200.0)  # a 60 s stall takes 0.3 s


@pytest.mark.parametrize("case", SUITE.cases, ids=lambda case: case.name)
def test_the_claude_code_profile_in_every_shipped_case(case: Any) -> None:
    assert profile_class(case, FAST) == PROFILE[case.name]


def test_another_profile_is_classed_by_the_same_rules() -> None:
    cases = {case.name: case for case in SUITE.cases}
    # The default profile ends the session on a cut, and retries an error event as it was.
    assert profile_class(cases["cut_after_tool_use"], FAST, DEFAULT) == "stopped"
    assert profile_class(cases["error_before_blocks"], FAST, DEFAULT) == "identical_retry"
    # A profile that retries an error event without streaming (CLI 2.1.328, issue 30).
    asks_whole = replace(DEFAULT, retry_after_error_event=RetryTransport.NON_STREAMING)
    assert profile_class(cases["error_before_blocks"], FAST, asks_whole) == "non_streaming_retry"


def test_the_profiles_tools_read_the_working_directory_only(tmp_path: Any) -> None:
    (tmp_path / "README.md").write_text("# probe")
    assert run_tool(tmp_path, "Read", {"file_path": str(tmp_path / "README.md")}) == (
        ToolOutcome.SUCCESS, "# probe")
    assert run_tool(tmp_path, "Read", {"file_path": "/etc/hostname"})[0] is ToolOutcome.ERROR
    assert run_tool(tmp_path, "Bash", {"command": "rm -rf /"}) == (
        ToolOutcome.SUCCESS, "(not run) rm -rf /")


def test_an_idle_watch_is_not_slept_out_after_the_stream(monkeypatch: Any) -> None:
    # Under `codex` the loop watches every stream for 300 s of silence (rule 9h); the driver
    # reads each stream to its end before it carries out a command, so such a wait is moot.
    slept: list[float] = []
    monkeypatch.setattr("toolturn.probe.profile_agent.time.sleep", slept.append)
    cases = {case.name: case for case in SUITE.cases}
    assert profile_class(cases["error_before_blocks"], FAST, CODEX) == "identical_retry"
    idle_s = CODEX.stream_idle_timeout_ns / 1e9 / FAST.speed
    assert slept and max(slept) < idle_s / 10  # the backoffs are slept, the idle watches not

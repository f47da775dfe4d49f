"""The `codex` recovery profile (issue 34, section 2): each of its rules on a scripted Messages API
stream under fake integer time, asserting the commands and the exact next request."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.loop_tools import TOOLS, legal, tool_response
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
    text_response,
    tool_use_block,
)
from toolturn.runtime.commands import (
    CancelRequest,
    CancelTool,
    ResultReady,
    SendRequest,
    SessionEnded,
    StartTool,
    TurnEnded,
    WaitUntil,
)
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.recovery import CODEX, DEFAULT, PROFILES, UNPARSED_INPUT_KEY
from toolturn.runtime.repair import check_pairing
from toolturn.wire.openai_responses import ResponsesEvents

MS = 1_000_000
IDLE_LIMIT = 300_000 * MS  # Codex's stream_idle_timeout_ms default
TEXT = {"type": "text", "text": "Reading."}
LOOKING = {"type": "text", "text": "Looking."}  # tool_response's default text


def started(**settings: Any) -> tuple[ToolTurnLoop, SendRequest]:
    loop = ToolTurnLoop(TOOLS, model="m", profile="codex", **settings)
    [first] = of_type(SendRequest, loop.start("go", 0))
    return loop, first


def started_ids(commands: list[Any]) -> list[str]:
    return [command.tool_use_id for command in of_type(StartTool, commands)]


def waits(commands: list[Any], now_ns: int) -> list[int]:
    """The backoffs asked for, as delays from `now_ns`."""
    return [wait.time_ns - now_ns for wait in of_type(WaitUntil, commands)]


def test_the_profile_is_known_by_name() -> None:
    assert PROFILES["codex"] is CODEX
    assert ToolTurnLoop(TOOLS, model="m", profile="codex").profile is CODEX


# ----- when calls start -----


def test_a_call_starts_at_its_block_stop_not_at_the_end() -> None:
    loop, _ = started()
    events = [message_start("msg_1"), *tool_use_block(0, "a", "Read", {"path": "/a"})]
    assert started_ids(feed(loop, events[:-1], 10)) == []  # every argument, no stop yet
    assert started_ids(loop.on_event(events[-1], 100)) == ["a"]


def test_every_call_of_a_response_runs_at_once_writes_or_not() -> None:
    # Edit and Bash are not concurrency-safe: the default profile runs them one at a time.
    calls = [("a", "Edit", {}), ("b", "Edit", {}), ("c", "Bash", {"command": "rm x"})]
    loop, _ = started()
    assert started_ids(feed(loop, tool_response("msg_1", *calls)[:-2], 10)) == ["a", "b", "c"]
    default = ToolTurnLoop(TOOLS, model="m")
    default.start("go", 0)
    assert started_ids(feed(default, tool_response("msg_1", *calls)[:-2], 10)) == ["a"]


def test_a_failing_call_cancels_no_sibling() -> None:
    loop, _ = started()  # Bash cancels its siblings under the default profile
    feed(loop, tool_response("msg_1", ("a", "Bash", {"command": "false"}),
                             ("b", "Read", {"path": "/b"})), 10)
    out = loop.tool_finished("a", "error", "exit 1", 500)
    assert of_type(CancelTool, out) == []
    messages = sent(loop.tool_finished("b", "success", "B", 600))
    assert messages[-1]["content"] == [result("a", "exit 1", is_error=True), result("b", "B")]


# ----- the follow-up -----


def test_the_follow_up_is_in_stream_order_not_completion_order() -> None:
    loop, _ = started()
    feed(loop, tool_response("msg_1", ("a", "Read", {"path": "/a"}),
                             ("b", "Read", {"path": "/b"}), text="Reading."), 10)
    loop.tool_finished("b", "success", "B", 500)
    messages = sent(loop.tool_finished("a", "success", "A", 600))
    read_b = {**READ_A, "id": "b", "input": {"path": "/b"}}
    assert messages == [
        PROMPT,
        {"role": "assistant", "content": [TEXT, READ_A, read_b]},
        {"role": "user", "content": [result("a", "A"), result("b", "B")]},
    ]
    legal(loop)


def test_malformed_arguments_run_nothing_and_keep_the_call() -> None:
    loop, _ = started()
    events = [message_start("msg_1"), *tool_use_block(0, "a", "Read", '{"path": "/a'),
              *tool_use_block(1, "b", "Read", {}), *message_end("tool_use")]
    out = feed(loop, events, 10)
    assert of_type(StartTool, out) == []
    [bad_json, bad_input] = [ready.result for ready in of_type(ResultReady, out)]
    assert bad_json["content"].startswith("failed to parse function arguments: ")
    assert bad_input["content"].startswith("failed to parse function arguments: ")
    assert bad_json["is_error"] and bad_input["is_error"]
    [send] = of_type(SendRequest, out)
    [kept_a, kept_b] = send.request_body["messages"][1]["content"]
    assert kept_a["id"] == "a" and kept_a["input"][UNPARSED_INPUT_KEY]["raw"] == '{"path": "/a'
    assert kept_b == {"type": "tool_use", "id": "b", "name": "Read", "input": {}}
    legal(loop)


def test_an_unknown_tool_is_an_unsupported_call() -> None:
    loop, _ = started()
    out = feed(loop, tool_response("msg_1", ("a", "Nope", {"x": 1})), 10)
    assert of_type(StartTool, out) == []
    assert sent(out)[-1]["content"] == [result("a", "unsupported call: Nope", is_error=True)]


def test_duplicate_ids_both_run_at_once_and_both_outputs_carry_the_id() -> None:
    loop, _ = started()
    calls = [("a", "Read", {"path": "/a"}), ("a", "Read", {"path": "/b"})]
    out = feed(loop, tool_response("msg_1", *calls), 10)
    # Both start at their block stops; the copy under its own key (a driver's reports are per
    # key), while the first still runs.
    assert started_ids(out) == ["a", "a#2"]
    assert [start.input for start in of_type(StartTool, out)] == [{"path": "/a"}, {"path": "/b"}]
    loop.tool_finished("a#2", "success", "B", 500)  # the copy ends first
    [send] = of_type(SendRequest, loop.tool_finished("a", "success", "A", 600))
    read_b = {**READ_A, "input": {"path": "/b"}}
    # What Codex sends: both calls and both outputs under the one id, in stream order; the
    # boundary repairs none of it, and says what a Messages API would refuse.
    assert send.request_body["messages"] == [
        PROMPT,
        {"role": "assistant", "content": [LOOKING, READ_A, read_b]},
        {"role": "user", "content": [result("a", "A"), result("a", "B")]},
    ]
    assert loop.repairs == []
    assert send.pairing_violations == tuple(check_pairing(send.request_body["messages"]))
    assert any("tool_use ids must be unique" in v for v in send.pairing_violations)
    assert [r.tool_use_id for r in loop.call_records()] == ["a", "a#2"]


def test_the_boundary_still_repairs_what_is_not_the_profiles_own() -> None:
    # A transcript that lost a result (a resume, say) is repaired as under any profile, even
    # with the profile's own duplicate in it.
    loop, _ = started()
    feed(loop, tool_response("msg_1", ("a", "Read", {"path": "/a"}), ("a", "Read", {})), 10)
    loop.tool_finished("a#2", "success", "B", 500)
    loop.tool_finished("a", "success", "A", 600)
    feed(loop, tool_response("msg_2", ("c", "Read", {"path": "/c"})), 700)
    broken = [*loop.messages]  # c's call without its result
    loop.resume(broken, 800, cause="crash")
    [send] = of_type(SendRequest, loop.start("continue", 900))
    kinds = {repair.kind.value for repair in loop.repairs}
    assert "missing_result_inserted" in kinds
    assert send.pairing_violations == ()


# ----- a cut -----


def partial_stream() -> list[dict[str, Any]]:
    return [message_start("msg_1"), *text_block(0, "Reading."),
            *tool_use_block(1, "a", "Read", {"path": "/a"}),
            *tool_use_block(2, "b", "Read", {"path": "/b"}, stop=False)]


@pytest.mark.parametrize("how", ["cut", "error_then_cut"])
def test_a_cut_keeps_what_completed_runs_it_then_retries_with_no_marker(how: str) -> None:
    loop, _ = started()
    out = feed(loop, partial_stream(), 10)
    if how == "error_then_cut":
        # An error event before the end is ignored: the stream's end decides.
        assert loop.on_event(error_event("overloaded_error"), 800) == []
    assert started_ids(out) == ["a"]
    out = loop.stream_ended(900)
    assert of_type(CancelTool, out) == [] and of_type(WaitUntil, out) == []
    out = loop.tool_finished("a", "success", "A", 1_000)
    assert of_type(TurnEnded, out) == [TurnEnded(1, "stream_error", 1)]
    assert waits(out, 1_000) == [200 * MS]
    assert of_type(SessionEnded, out) == []
    messages = sent(loop.wake(1_000 + 200 * MS))
    assert messages == [
        PROMPT,
        {"role": "assistant", "content": [TEXT, READ_A]},
        {"role": "user", "content": [result("a", "A")]},
    ]
    assert "b" not in {record.tool_use_id for record in loop.call_records()}  # never run
    legal(loop)


def test_an_error_event_is_ignored_until_the_stream_ends() -> None:
    # The Messages wire sends nothing after an `error` event; anything that follows breaks the
    # protocol, and that is the cut (at its time, not the error event's).
    loop, _ = started()
    events = text_response("msg_1", "Reading.")
    out = feed(loop, [*events[:-2], error_event("api_error")], 10)
    assert [command for _, command in out] == [WaitUntil(10 + IDLE_LIMIT)]  # rule 9h's watch
    out = feed(loop, events[-2:], 500)
    assert waits(out, 500) == [200 * MS] and of_type(SessionEnded, out) == []
    assert sent(loop.wake(500 + 200 * MS)) == [PROMPT, {"role": "assistant", "content": [TEXT]}]


@pytest.mark.parametrize("survived", [1, 3], ids=["message_start", "an_open_text_block"])
def test_with_nothing_kept_the_retry_is_the_identical_request(survived: int) -> None:
    loop, first = started()
    feed(loop, [message_start("msg_1"), *text_block(0, "Read")][:survived], 10)
    out = loop.stream_ended(100)
    assert waits(out, 100) == [200 * MS]
    [retry] = of_type(SendRequest, loop.wake(100 + 200 * MS))
    assert retry.request_body == first.request_body


def test_kept_text_is_resent_and_the_answer_continues_it() -> None:
    loop, _ = started()
    feed(loop, [message_start("msg_1"), *text_block(0, "Reading."), *text_block(1, "More")[:2]],
         10)
    out = loop.stream_ended(100)
    messages = sent(loop.wake(100 + 200 * MS))
    assert waits(out, 100) == [200 * MS]
    assert messages == [PROMPT, {"role": "assistant", "content": [TEXT]}]  # no marker
    out = feed(loop, text_response("msg_2", " Done."), 300 * MS)
    assert of_type(SessionEnded, out) == [SessionEnded("end_turn")]
    assert loop.messages[1:] == [
        {"role": "assistant", "content": [TEXT, {"type": "text", "text": " Done."}]}
    ]
    legal(loop)


def test_an_id_the_transcript_already_holds_is_not_checked_either() -> None:
    loop, _ = started()
    feed(loop, [message_start("msg_1"), *text_block(0, "Reading.")], 10)
    loop.wake(of_type(WaitUntil, loop.stream_ended(100))[0].time_ns)
    feed(loop, tool_response("msg_2", ("a", "Read", {"path": "/a"}), text="Now."), 300 * MS)
    loop.tool_finished("a", "success", "A", 400 * MS)
    # The model repeats the id the continued message holds: the copy runs and is answered.
    out = feed(loop, tool_response("msg_3", ("a", "Read", {"path": "/a"})), 500 * MS)
    assert started_ids(out) == ["a"]
    [send] = of_type(SendRequest, loop.tool_finished("a", "success", "A again", 600 * MS))
    messages = send.request_body["messages"]
    ids = [block.get("id") for message in messages for block in message["content"]
           if block["type"] == "tool_use"]
    answers = [block["content"] for block in messages[-1]["content"]]
    assert ids == ["a", "a"] and answers == ["A again"]
    assert loop.repairs == [] and send.pairing_violations


def test_cuts_spend_the_stream_budget_of_five() -> None:
    loop, _ = started()
    now, delays = 0, []
    for _ in range(5):
        feed(loop, [message_start("msg_1")], now + 10)
        out = loop.stream_ended(now + 20)
        [delay] = waits(out, now + 20)
        delays.append(delay // MS)
        now += 20 + delay
        loop.wake(now)
    assert delays == [200, 400, 800, 1_600, 3_200]
    feed(loop, [message_start("msg_1")], now + 10)
    assert of_type(SessionEnded, loop.stream_ended(now + 20)) == [SessionEnded("stream_error")]


def test_kept_cuts_spend_the_same_budget() -> None:
    loop, _ = started()
    now = 0
    for retry in range(1, 7):
        feed(loop, [message_start("msg_1"), *text_block(0, "Reading.")], now + 10)
        out = loop.stream_ended(now + 100)
        if retry == 6:
            assert of_type(SessionEnded, out) == [SessionEnded("stream_error")]
            break
        assert waits(out, now + 100) == [200 * MS * 2 ** (retry - 1)]
        now = of_type(WaitUntil, out)[0].time_ns
        loop.wake(now)
    assert loop.requests_sent == 6


# ----- cut variants: a retryable failure, an idle timeout -----


def test_a_retryable_response_failed_is_a_cut() -> None:
    # What the wire codec makes of an `error` event on the Responses API: an `error` event, then
    # `response.failed`, code `server_error`, and the stream's end. Codex retries it as a cut.
    codec = ResponsesEvents("msg_1", "m", {"model": "m", "input": "go"})
    codec.feed(message_start("msg_1"))
    error, failed = codec.feed(error_event("api_error", "Internal server error"))
    assert error["type"] == "error" and error["error"]["code"] == "server_error"
    assert failed["type"] == "response.failed"
    assert failed["response"]["error"]["code"] == "server_error"
    loop, _ = started()
    out = feed(loop, [*partial_stream(), error_event("api_error")], 10)
    assert started_ids(out) == ["a"] and of_type(SessionEnded, out) == []
    assert of_type(WaitUntil, loop.stream_ended(900)) == []  # the kept call runs first
    out = loop.tool_finished("a", "success", "A", 1_000)
    assert waits(out, 1_000) == [200 * MS] and of_type(SessionEnded, out) == []
    assert sent(loop.wake(1_000 + 200 * MS)) == [
        PROMPT,
        {"role": "assistant", "content": [TEXT, READ_A]},
        {"role": "user", "content": [result("a", "A")]},
    ]
    legal(loop)


def test_the_idle_limit_is_codexs_default_and_no_other_profiles() -> None:
    assert CODEX.stream_idle_timeout_ns == IDLE_LIMIT
    assert DEFAULT.stream_idle_timeout_ns is None
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("go", 0)
    assert loop.on_event(message_start("msg_1"), 10) == []
    assert loop.wake(10 + IDLE_LIMIT) == []  # silence is no cut without a limit


def test_a_stream_silent_past_the_idle_limit_is_a_cut() -> None:
    loop, _ = started()
    out = feed(loop, partial_stream(), 10)
    assert of_type(WaitUntil, out) == [WaitUntil(10 + IDLE_LIMIT)]
    last = 10 + 10 * (len(partial_stream()) - 1)  # feed's step: the last event's time
    # The wake finds a later event: the silence is shorter; the loop asks again from that one.
    assert loop.wake(10 + IDLE_LIMIT) == [WaitUntil(last + IDLE_LIMIT)]
    assert loop.wake(last + IDLE_LIMIT - 1) == []  # a stale wake: that one is pending
    out = loop.wake(last + IDLE_LIMIT)
    assert of_type(CancelRequest, out) == [CancelRequest("idle_timeout")]
    # A cut: what completed is kept and runs, the open call is dropped, then the retry.
    assert of_type(WaitUntil, out) == [] and of_type(SessionEnded, out) == []
    now = last + IDLE_LIMIT + 100
    out = loop.tool_finished("a", "success", "A", now)
    assert waits(out, now) == [200 * MS]
    assert sent(loop.wake(now + 200 * MS)) == [
        PROMPT,
        {"role": "assistant", "content": [TEXT, READ_A]},
        {"role": "user", "content": [result("a", "A")]},
    ]
    assert "b" not in {record.tool_use_id for record in loop.call_records()}
    legal(loop)


def test_a_silence_before_any_block_retries_the_identical_request() -> None:
    loop, first = started()
    [wait] = of_type(WaitUntil, loop.on_event(message_start("msg_1"), 10))
    out = loop.wake(wait.time_ns)
    assert of_type(CancelRequest, out) == [CancelRequest("idle_timeout")]
    assert waits(out, wait.time_ns) == [200 * MS]
    [retry] = of_type(SendRequest, loop.wake(wait.time_ns + 200 * MS))
    assert retry.request_body == first.request_body


# ----- max tokens and final failures -----


@pytest.mark.parametrize("policy", ["streaming", "at_message_stop"])
def test_a_context_length_failure_mid_stream_runs_the_completed_call_then_ends(
    policy: str,
) -> None:
    # `response.failed` with code context_length_exceeded after some output: on the Messages
    # API, the `invalid_request_error` of a prompt too long.
    loop, _ = started(policy=policy)
    out = feed(loop, partial_stream(), 10)
    failure = error_event("invalid_request_error", "prompt is too long")
    out += [(500, command) for command in loop.on_event(failure, 500)]
    assert started_ids(out) == ["a"]  # at its block stop, or (at_message_stop) at the end
    assert of_type(SendRequest, out) == [] and of_type(SessionEnded, out) == []
    assert loop.stream_ended(600) == []
    out = loop.tool_finished("a", "success", "A", 700)
    assert of_type(WaitUntil, out) == [] and of_type(SendRequest, out) == []
    assert of_type(SessionEnded, out) == [SessionEnded("stream_error")]
    assert loop.messages[1:] == [
        {"role": "assistant", "content": [TEXT, READ_A]},
        {"role": "user", "content": [result("a", "A")]},
    ]
    assert "b" not in {record.tool_use_id for record in loop.call_records()}
    legal(loop)




def test_max_tokens_runs_the_completed_call_then_ends() -> None:
    loop, _ = started()
    events = [message_start("msg_1"), *tool_use_block(0, "a", "Read", {"path": "/a"}),
              *tool_use_block(1, "b", "Read", {"path": "/b"}, stop=False),
              *message_end("max_tokens")]
    assert started_ids(feed(loop, events, 10)) == ["a"]
    out = loop.tool_finished("a", "success", "A", 500)
    assert of_type(SendRequest, out) == [] and of_type(WaitUntil, out) == []
    assert of_type(SessionEnded, out) == [SessionEnded("max_tokens")]
    assert loop.messages[1:] == [
        {"role": "assistant", "content": [READ_A]},
        {"role": "user", "content": [result("a", "A")]},
    ]
    legal(loop)


def test_max_tokens_without_calls_ends_with_no_continuation() -> None:
    loop, _ = started()
    events = [message_start("msg_1"), *text_block(0, "Long"), *message_end("max_tokens")]
    assert of_type(SessionEnded, feed(loop, events, 10)) == [SessionEnded("max_tokens")]


def test_a_context_length_failure_is_final() -> None:
    loop, _ = started()
    out = loop.request_failed(400, 10)  # prompt too long
    assert of_type(WaitUntil, out) == [] and out == [SessionEnded("request_failed")]


# ----- two retry layers -----


def fail_until_the_end(loop: ToolTurnLoop, status: int) -> list[int]:
    """Fail every request with `status`; the backoffs, in ms, until the session ends."""
    now, delays = 0, []
    while True:
        out = loop.request_failed(status, now)
        if of_type(SessionEnded, out):
            return delays
        [delay] = waits(out, now)
        delays.append(delay // MS)
        now += delay
        loop.wake(now)


def test_http_retries_are_an_inner_layer_and_a_spent_one_counts_once() -> None:
    loop, _ = started()
    delays = fail_until_the_end(loop, 500)
    http = [200, 400, 800, 1_600]
    # Each spent inner layer (1 + 4 requests) is one stream failure, with the stream's backoff.
    assert delays == [*http, 200, *http, 400, *http, 800, *http, 1_600, *http, 3_200, *http]
    assert loop.requests_sent == 5 * 6


def test_an_event_starts_the_http_layer_afresh() -> None:
    loop, _ = started()
    now = 0
    for _ in range(4):
        [wait] = of_type(WaitUntil, loop.request_failed(503, now))
        now = wait.time_ns
        loop.wake(now)
    feed(loop, [message_start("msg_1")], now + 10)
    out = loop.stream_ended(now + 20)  # the cut is stream failure 1
    now = of_type(WaitUntil, out)[0].time_ns
    loop.wake(now)
    assert waits(loop.request_failed(503, now), now) == [200 * MS]  # the inner layer's first


def test_a_429_without_retry_after_is_final_with_it_honoured() -> None:
    loop, _ = started()
    assert loop.request_failed(429, 10) == [SessionEnded("request_failed")]
    loop, _ = started()
    assert waits(loop.request_failed(429, 10, retry_after_ns=3_000 * MS), 10) == [3_000 * MS]


def test_other_profiles_keep_one_layer() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", profile="claude-code")
    loop.start("go", 0)
    assert waits(loop.request_failed(429, 10), 10) == [500 * MS]

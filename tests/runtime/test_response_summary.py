"""`ResponseSummary`: the accumulator's account of a response (usage, stop reason) and the loop's
per request, with the message_stop time; the simulator's request rows are made of it."""

from __future__ import annotations

from tests.helpers.engine_runs import default_scenario, dict_rows, run
from tests.helpers.loop_tools import TOOLS
from tests.helpers.runtime_script import (
    error_event,
    feed,
    message_end,
    message_start,
    of_type,
    text_block,
    text_response,
)
from toolturn.metrics.request_log import UNREAD
from toolturn.runtime.accumulator import ResponseSummary, StreamAccumulator
from toolturn.runtime.commands import SendRequest, WaitUntil
from toolturn.runtime.loop import ToolTurnLoop


def test_the_accumulator_summarises_what_it_has_read() -> None:
    accumulator = StreamAccumulator()
    assert accumulator.summary() == ResponseSummary(0, 0, None, None) == UNREAD
    accumulator.feed(message_start(input_tokens=321))
    for event in text_block(0, "Hello there."):
        accumulator.feed(event)
    # message_start's output_tokens (1) is a first count, not the final one.
    assert accumulator.summary() == ResponseSummary(321, 0, None, None)
    delta, stop = message_end("end_turn", output_tokens=17)
    accumulator.feed(delta)
    assert accumulator.summary() == ResponseSummary(321, 17, "end_turn", None)
    accumulator.feed(stop)
    assert accumulator.summary(5_000) == ResponseSummary(321, 17, "end_turn", 5_000)


def test_the_loop_keeps_a_summary_per_request() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    [first] = loop.start("go", 0)
    assert isinstance(first, SendRequest)
    assert loop.response_summary(first.request_id) == UNREAD
    # An overloaded error after message_start: the request is retried after a backoff.
    out = feed(loop, [message_start("msg_1", input_tokens=40), error_event()], 100)
    [wait] = of_type(WaitUntil, out)
    assert loop.response_summary(first.request_id) == ResponseSummary(40, 0, None, None)
    [second] = loop.wake(wait.time_ns)
    assert isinstance(second, SendRequest) and second.request_id == first.request_id + 1
    events = [message_start("msg_2", input_tokens=41), *text_block(0, "Hi."),
              *message_end("end_turn", output_tokens=9)]
    start_ns = wait.time_ns + 1_000
    feed(loop, events, start_ns, step_ns=10)
    stop_ns = start_ns + 10 * (len(events) - 1)  # when message_stop was fed
    assert loop.response_summary(second.request_id) == ResponseSummary(41, 9, "end_turn", stop_ns)
    # The earlier request's summary is kept as it was when the next one was sent.
    assert loop.response_summary(first.request_id) == ResponseSummary(40, 0, None, None)
    loop.start("more", stop_ns + 1)
    feed(loop, text_response("msg_3", "Done."), stop_ns + 100)
    assert loop.response_summary(second.request_id).message_stop_ns == stop_ns


def test_the_request_and_turn_rows_carry_the_loops_summaries() -> None:
    result = run(default_scenario(4))
    answered = [row for row in dict_rows(result.rows["requests"]) if row["status"] == "200"]
    assert answered and all(row["input_tokens"] > 0 for row in answered)
    stopped = [row for row in dict_rows(result.rows["turns"]) if row["message_stop_ns"] is not None]
    assert stopped and all(row["output_tokens"] > 0 for row in stopped)
    assert all(
        row["request_sent_ns"] < row["message_stop_ns"] <= row["turn_end_ns"] for row in stopped
    )

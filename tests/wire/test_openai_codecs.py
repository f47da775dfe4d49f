"""The codecs on their own (sans I/O): the Messages events of one model answer in, each
protocol's events out, at the same positions."""

from __future__ import annotations

from tests.helpers.openai_cases import CHAT, RESPONSES, expected, model_for, request
from toolturn.model.response import StreamResponse, Turn
from toolturn.wire.codecs import CODECS, MESSAGES
from toolturn.wire.openai_chat import DONE
from toolturn.wire.openai_errors import from_messages
from toolturn.wire.sse import encode_event


def _answer(case: str, path: str, **extra: object) -> tuple[StreamResponse, dict[str, object]]:
    model = model_for(case)
    body = {**request(path, model, stream=True), **extra}
    answer = expected(path, model, body, 3)
    assert isinstance(answer, StreamResponse)
    return answer, body


def test_the_messages_codec_sends_the_models_events_as_they_are() -> None:
    model = model_for("clean")
    body = {"model": model.name, "max_tokens": 4096, "stream": True,
            "messages": [{"role": "user", "content": "Read both files."}]}
    answer = model.answer(body, Turn(3, 0, 1))
    assert isinstance(answer, StreamResponse)
    frames = MESSAGES.frames(answer, body)
    assert [frames(event) for event in answer.events] == [encode_event(e) for e in answer.events]


def test_responses_events_are_numbered_from_zero_and_each_model_event_keeps_its_place() -> None:
    answer, body = _answer("clean", RESPONSES)
    encoder = CODECS[RESPONSES].encoder(answer, body)  # type: ignore[union-attr]
    per_event = [encoder.feed(event) for event in answer.events]
    events = [out for outs in per_event for out in outs]
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    assert per_event[0][0]["type"] == "response.created"
    assert per_event[-1] == [{**per_event[-1][0], "type": "response.completed"}]
    # A ping and the message_delta say nothing; each block stop ends its item.
    kinds = [event["type"] for event in answer.events]
    assert all(not outs for kind, outs in zip(kinds, per_event, strict=True)
               if kind in ("ping", "message_delta"))
    assert [outs[-1]["type"] for kind, outs in zip(kinds, per_event, strict=True)
            if kind == "content_block_stop"] == ["response.output_item.done"] * 4


def test_at_max_tokens_only_the_block_cut_short_is_incomplete() -> None:
    answer, body = _answer("max_tokens_mid_tool_use", RESPONSES)
    final = CODECS[RESPONSES].final(answer, body)
    statuses = [item.get("status") for item in final["output"]]
    assert final["status"] == "incomplete"
    assert final["incomplete_details"] == {"reason": "max_output_tokens"}
    assert statuses[-1] == "incomplete" and "incomplete" not in statuses[:-1]


def test_chat_without_include_usage_has_no_usage_chunk_and_ends_with_done() -> None:
    answer, body = _answer("clean", CHAT, stream_options=None)
    body.pop("stream_options")
    encoder = CODECS[CHAT].encoder(answer, body)  # type: ignore[union-attr]
    chunks = [out for event in answer.events for out in encoder.feed(event)]
    assert chunks[-1] == DONE
    assert all("usage" not in chunk for chunk in chunks[:-1])
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    calls = [call for chunk in chunks[:-1] for call in chunk["choices"][0]["delta"].get(
        "tool_calls", ())]
    assert [call["index"] for call in calls if "id" in call] == [0, 1]


def test_the_end_turn_with_tool_use_fault_is_a_stop_with_calls_in_chat() -> None:
    answer, body = _answer("end_turn_with_tool_use", CHAT)
    final = CODECS[CHAT].final(answer, body)
    choice = final["choices"][0]
    assert choice["finish_reason"] == "stop" and len(choice["message"]["tool_calls"]) == 2


def test_the_models_errors_get_openai_statuses_and_bodies() -> None:
    assert from_messages(529, "overloaded_error", "Overloaded")[0] == 503
    status, body = from_messages(429, "rate_limit_error", "x")
    assert status == 429 and body["error"]["code"] == "rate_limit_exceeded"
    status, body = from_messages(404, "not_found_error", "model: m")
    assert status == 404 and body["error"]["code"] == "model_not_found"
    assert body["error"]["message"] == ("The model `m` does not exist or you do not have access "
                                        "to it.")

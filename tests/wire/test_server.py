"""`toolturn serve`'s server against real clients: the official SDK (sync, over loopback) and raw
HTTP. Each test starts its own server on a free port and stops it."""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic
import httpx2
import pytest

from tests.helpers.server import (
    USER,
    mock_model,
    request,
    serving,
)
from toolturn.model.response import Turn
from toolturn.runtime.accumulator import StreamAccumulator, merge_block_messages
from toolturn.runtime.repair import check_pairing
from toolturn.wire.identity import SESSION_HEADER
from toolturn.wire.server import MAX_DELAY_NS, final_message
from toolturn.wire.sse import decode_stream


def without_nulls(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if value is not None}


def test_the_sdk_streams_what_the_model_says_and_accumulates_as_we_do() -> None:
    model = mock_model()
    expected = model.respond(request(model), Turn(11, 0, 1))
    with serving(model) as (_, client, _log):
        headers = {SESSION_HEADER: "11"}
        with client.messages.stream(**request(model), extra_headers=headers) as stream:
            sdk_events = [event.to_dict() for event in stream if event.type in _RAW_TYPES]
            final = stream.get_final_message().to_dict()
    ours = StreamAccumulator()
    for event in sdk_events:
        ours.feed(event)
    assert without_nulls(final) == without_nulls(ours.snapshot())
    merged = merge_block_messages(ours.completed)
    assert merged == [{"role": "assistant", "content": final["content"]}]
    assert final == {**final, **final_message(expected.events)}
    assert [block["type"] for block in final["content"]] == ["thinking", "text", "tool_use"]


_RAW_TYPES = {"message_start", "content_block_start", "content_block_delta", "content_block_stop",
              "message_delta", "message_stop"}


def test_raw_sse_bytes_decode_with_our_decoder_to_the_models_events() -> None:
    model = mock_model(latency={"ttft": {"kind": "fixed", "ms": 300}, "ping_interval_ms": 100})
    expected = model.respond(request(model), Turn(5, 0, 1))
    with serving(model) as (server, _, _log):
        response = httpx2.post(f"{server.base_url}/v1/messages", json=request(model, stream=True),
                               headers={SESSION_HEADER: "5"}, timeout=20)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["request-id"] == model.request_id(Turn(5, 0, 1))
    events, partial = decode_stream(response.content)
    assert partial is None
    assert events == expected.events
    assert any(event["type"] == "ping" for event in events)


def test_without_stream_the_answer_is_the_accumulated_message() -> None:
    model = mock_model()
    expected = model.respond(request(model), Turn(3, 0, 1))
    with serving(model) as (_, client, _log):
        message = client.messages.create(**request(model), extra_headers={SESSION_HEADER: "3"})
    assert message.to_dict() == {**message.to_dict(), **final_message(expected.events)}


def test_a_broken_transcript_is_refused_with_check_pairings_wording() -> None:
    model = mock_model()
    broken = [*USER, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]},
        {"role": "user", "content": "no result"}]
    with serving(model) as (_, client, log):
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(model=model.name, max_tokens=100, messages=broken)
    error = caught.value
    assert error.status_code == 400 and error.type == "invalid_request_error"
    assert error.api_message == check_pairing(broken)[0]
    assert error.request_id is not None and error.request_id.startswith("req_")
    assert log.lines and " 400 invalid_request_error " in log.lines[0]


def test_a_rate_limit_carries_retry_after_scaled_by_speed() -> None:
    model = mock_model(faults={"http_429": 1.0, "retry_after_ms": 3000})
    with serving(model, speed=10.0) as (_, client, log):
        with pytest.raises(anthropic.RateLimitError) as caught:
            client.messages.create(**request(model))
    headers = caught.value.response.headers
    # 300 ms cannot be said in whole seconds: no `retry-after` to contradict it (issue 30).
    assert headers["retry-after-ms"] == "300" and "retry-after" not in headers
    assert caught.value.type == "rate_limit_error"
    assert "faults=http_429" in log.lines[0]


def test_a_wait_of_whole_seconds_sends_both_headers_and_they_agree() -> None:
    model = mock_model(faults={"http_529": 1.0, "retry_after_ms": 20000})
    with serving(model, speed=10.0) as (_, client, _log):
        with pytest.raises(anthropic.APIStatusError) as caught:
            client.messages.create(**request(model))
    headers = caught.value.response.headers
    assert (headers["retry-after"], headers["retry-after-ms"]) == ("2", "2000")


@pytest.mark.parametrize(("fault", "status", "error_class"), [
    ("http_529", 529, anthropic.OverloadedError),
    ("http_500", 500, anthropic.InternalServerError),
])
def test_server_errors_are_shaped_as_the_api_shapes_them(
    fault: str, status: int, error_class: type[anthropic.APIStatusError]
) -> None:
    model = mock_model(faults={fault: 1.0})
    with serving(model) as (_, client, _log):
        with pytest.raises(error_class) as caught:
            client.messages.create(**request(model, stream=True))
    assert caught.value.status_code == status
    assert caught.value.body["type"] == "error" and caught.value.request_id


def test_a_cut_stream_raises_in_the_sdk_as_a_dropped_connection_does() -> None:
    model = mock_model(faults={"cut_mid_text": 1.0})
    with serving(model) as (_, client, log):
        seen: list[str] = []
        with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
            for event in client.messages.create(**request(model, stream=True)):
                seen.append(event.type)
        # Without streaming, the connection drops before any response: a connection error.
        with pytest.raises(anthropic.APIConnectionError):
            client.messages.create(**request(model))
    assert seen[0] == "message_start" and "message_stop" not in seen
    assert "200 stream cut" in log.lines[0] and "- message cut" in log.lines[1]


def test_an_error_event_raises_mid_stream_and_is_a_status_without_streaming() -> None:
    model = mock_model(faults={"error_overloaded": 1.0})
    with serving(model) as (_, client, _log):
        with pytest.raises(anthropic.APIStatusError) as mid_stream:
            for _event in client.messages.create(**request(model, stream=True)):
                pass
        with pytest.raises(anthropic.OverloadedError) as whole:
            client.messages.create(**request(model))
    assert mid_stream.value.status_code == 200 and mid_stream.value.type == "overloaded_error"
    assert whole.value.status_code == 529 and whole.value.type == "overloaded_error"


def test_speed_divides_the_delays() -> None:
    model = mock_model(latency={"ttft": {"kind": "fixed", "ms": 400}})
    with serving(model, speed=2.0) as (_, client, _log):
        started = time.monotonic_ns()
        client.messages.create(**request(model))
        elapsed_ns = time.monotonic_ns() - started
    assert elapsed_ns >= 200_000_000  # the first token alone is 400 ms / 2


def test_beyond_capacity_a_request_is_refused_with_retry_after() -> None:
    model = mock_model(latency={"ttft": {"kind": "fixed", "ms": 2000}},
                       endpoint={"capacity": 1, "overflow": "refuse", "refuse_status": 429,
                                 "retry_after_ms": 500})
    with serving(model, speed=1.0) as (server, client, log):
        with client.messages.create(**request(model, stream=True)) as holding:
            assert server.in_flight == 1
            with pytest.raises(anthropic.RateLimitError) as caught:
                client.messages.create(**request(model))
            holding.response.close()
    assert caught.value.response.headers["retry-after-ms"] == "500"
    assert any("faults=endpoint_refused" in line for line in log.lines)


def test_sessions_and_attempts_key_the_draws() -> None:
    model = mock_model(script={"kind": "generated", "tool_mix": {"Read": 1}})
    with serving(model) as (_, client, _log):
        def message_id(session: str | None) -> str:
            headers = {SESSION_HEADER: session} if session is not None else {}
            return client.messages.create(**request(model), extra_headers=headers).id

        first, retry, other = message_id("4"), message_id("4"), message_id("agent-b")
        unnamed = [message_id(None), message_id(None)]
    assert first == model.respond(request(model), Turn(4, 0, 1)).message_id
    assert retry == model.respond(request(model), Turn(4, 0, 2)).message_id
    assert len({first, retry, other, *unnamed}) == 5


@pytest.mark.parametrize(("method", "path", "content", "status", "wording"), [
    ("POST", "/v1/messages", b"{not json", 400, "request body is not valid JSON"),
    ("POST", "/v1/messages", b"[]", 400, "request body: Input should be a valid dictionary"),
    ("POST", "/v1/messages", json.dumps({"model": "m", "messages": []}).encode(), 400,
     "max_tokens: Field required"),
    ("POST", "/v1/messages", json.dumps({"model": "m", "max_tokens": 0, "messages": []}).encode(),
     400, "max_tokens: Input should be greater than or equal to 1"),
    ("GET", "/v1/messages", b"", 405, "GET /v1/messages: use POST"),
    ("POST", "/v1/complete", b"{}", 404, "POST /v1/complete: not found"),
    # json's RecursionError dropped the connection without an answer.
    ("POST", "/v1/messages", b"[" * 100_000, 400,
     "request body is not valid JSON: nesting too deep"),
    ("POST", "/v1/messages", b'{"model": "m", "max_tokens": NaN, "messages": []}', 400,
     "request body is not valid JSON: NaN is not valid JSON"),
    ("POST", "/v1/messages", b'{"model": "m\xff"}', 400, "request body is not valid JSON: 'utf-8'"),
])
def test_requests_the_model_never_sees_get_api_shaped_errors(
    method: str, path: str, content: bytes, status: int, wording: str
) -> None:
    with serving(mock_model()) as (server, _, log):
        response = httpx2.request(method, server.base_url + path, content=content, timeout=20)
    assert response.status_code == status
    body = response.json()
    assert body["type"] == "error" and body["error"]["message"].startswith(wording)
    assert response.headers["request-id"] == body["request_id"]
    assert log.lines == [f"{method} {path} {status} {body['error']['message']}"]


def test_with_strict_names_an_unknown_model_is_not_found() -> None:
    model = mock_model()
    with serving(model, strict_models=True) as (_, client, _log):
        with pytest.raises(anthropic.NotFoundError, match="model: claude-nothing"):
            client.messages.create(model="claude-nothing", max_tokens=10, messages=USER)
        with pytest.raises(anthropic.NotFoundError, match="model: claude-nothing"):
            client.models.retrieve("claude-nothing")


def test_any_model_name_plays_the_scenarios_model() -> None:
    # The SDK's own default names got a 404; Claude Code asks for names we cannot foresee.
    model = mock_model()
    expected = model.respond(request(model), Turn(9, 0, 1))
    with serving(model) as (_, client, _log):
        for name in ("claude-opus-5-5", "claude-sonnet-4-6"):
            message = client.messages.create(
                **{**request(model), "model": name}, extra_headers={SESSION_HEADER: "9"})
            assert message.model == model.name
            assert [block.type for block in message.content] == ["thinking", "text", "tool_use"]
        assert message.id != expected.message_id  # the second is the session's attempt 2
        listed = client.models.list()
        assert [m.id for m in listed.data] == [model.name]
        assert client.models.retrieve("claude-opus-5-5").id == "claude-opus-5-5"


def test_a_message_with_a_role_that_is_not_a_string_is_a_bad_request() -> None:
    # The checker's TypeError (an unhashable role) dropped the connection without an answer.
    model = mock_model()
    with serving(model) as (_, client, log):
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(model=model.name, max_tokens=10,
                                   messages=[{"role": [], "content": "hi"}])
    assert caught.value.api_message == "messages.0.role: Input should be 'user' or 'assistant'"
    assert log.lines[0].startswith("POST /v1/messages 400 messages.0.role: ")


def test_a_lone_surrogate_echoed_in_an_error_goes_out_as_its_json_escape() -> None:
    # Encoding the error body raised UnicodeEncodeError: the connection dropped unanswered.
    model = mock_model()
    with serving(model, strict_models=True) as (server, _, _log):
        response = httpx2.post(server.base_url + "/v1/messages", timeout=20, content=json.dumps(
            {"model": "claude-\ud800", "max_tokens": 10, "messages": USER}).encode())
    assert response.status_code == 404
    assert b'"model: claude-\\ud800"' in response.content
    assert response.json()["error"]["message"] == "model: claude-\ud800"


def test_at_a_speed_near_zero_a_request_waits_instead_of_failing() -> None:
    # delay / 1e-300 is inf: round() raised OverflowError and the connection dropped at once.
    with serving(mock_model(), speed=1e-300) as (server, _, log):
        with pytest.raises(httpx2.ReadTimeout):
            httpx2.post(server.base_url + "/v1/messages", timeout=0.5,
                        content=json.dumps(request(mock_model())).encode())
    assert server._scaled(1) == MAX_DELAY_NS
    assert log.lines and " aborted " in log.lines[0]


def test_a_failure_of_the_server_is_a_500_and_names_the_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = mock_model()

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(model, "answer", broken)
    with serving(model) as (_, client, log):
        with pytest.raises(anthropic.InternalServerError) as caught:
            client.messages.create(**request(model))
        # The server goes on serving.
        with pytest.raises(anthropic.InternalServerError):
            client.messages.create(**request(model))
    assert caught.value.type == "api_error" and caught.value.request_id
    assert " 500 api_error (RuntimeError: boom) " in log.lines[0]
    assert "faults=-" in log.lines[0]  # not the endpoint_refused it once claimed


def test_a_failure_mid_stream_cuts_the_response(monkeypatch: pytest.MonkeyPatch) -> None:
    model = mock_model()
    monkeypatch.setattr("toolturn.wire.codecs.encode_event", lambda event: 1 / 0)
    with serving(model) as (_, client, log):
        with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
            list(client.messages.create(**request(model, stream=True)))
    assert " 500 api_error (ZeroDivisionError: division by zero) " in log.lines[0]

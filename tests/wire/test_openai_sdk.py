"""The official `openai` SDK against `toolturn serve` on loopback, in both OpenAI protocols, for
every fault kind of the model: stream and create, sync and async. Each request's bytes are the
ones the codec makes from the model's own answer (compared byte for byte), the SDK decodes all of
them, and what it accumulates is the output the server scripted; faults surface in the SDK as
the real API's do (status errors, a failed or incomplete response, a dropped connection)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import httpx2
import openai
import pytest

from tests.helpers.openai_cases import (
    CASES,
    CHAT,
    RESPONSES,
    chat_view,
    covers,
    expected,
    expected_bytes,
    from_chat_chunks,
    from_responses_events,
    model_for,
    request,
    scripted,
)
from tests.helpers.server import FAST, serving
from toolturn.model.response import HttpError, StreamResponse
from toolturn.wire.codecs import CODECS
from toolturn.wire.identity import SESSION_HEADER
from toolturn.wire.openai_chat import DONE
from toolturn.wire.openai_errors import from_messages

DROPPED = (openai.APIConnectionError, httpx2.RemoteProtocolError, httpx2.ReadError)
MODES = ("sync-stream", "sync-create", "async-stream", "async-create")


def _without_stream(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key != "stream"}


# ----- one request each way; returns (events the SDK yielded, its final object) -----

def _sync(client: openai.OpenAI, path: str, body: dict[str, Any], stream: bool,
          headers: dict[str, str], seen: list[Any]) -> Any:
    if path == RESPONSES and stream:
        with client.responses.stream(**_without_stream(body), extra_headers=headers) as events:
            for event in events:
                seen.append(event.to_dict(warnings=False))
            return events.get_final_response().to_dict(warnings=False)
    if path == RESPONSES:
        return client.responses.create(**body, extra_headers=headers).to_dict(warnings=False)
    if stream:
        with client.chat.completions.stream(**_without_stream(body),
                                            extra_headers=headers) as chunks:
            for event in chunks:
                if event.type == "chunk":
                    seen.append(event.chunk.to_dict(warnings=False))
            return chunks.get_final_completion().to_dict(warnings=False)
    return client.chat.completions.create(**body, extra_headers=headers).to_dict(warnings=False)


async def _async(client: openai.AsyncOpenAI, path: str, body: dict[str, Any], stream: bool,
                 headers: dict[str, str], seen: list[Any]) -> Any:
    if path == RESPONSES and stream:
        async with client.responses.stream(**_without_stream(body),
                                           extra_headers=headers) as events:
            async for event in events:
                seen.append(event.to_dict(warnings=False))
            return (await events.get_final_response()).to_dict(warnings=False)
    if path == RESPONSES:
        made = await client.responses.create(**body, extra_headers=headers)
        return made.to_dict(warnings=False)
    if stream:
        async with client.chat.completions.stream(**_without_stream(body),
                                                  extra_headers=headers) as chunks:
            async for event in chunks:
                if event.type == "chunk":
                    seen.append(event.chunk.to_dict(warnings=False))
            return (await chunks.get_final_completion()).to_dict(warnings=False)
    completion = await client.chat.completions.create(**body, extra_headers=headers)
    return completion.to_dict(warnings=False)


def _run_async(base_url: str, *args: Any) -> Any:
    async def main() -> Any:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0,
                                      timeout=20) as client:
            return await _async(client, *args)
    return asyncio.run(main())


# ----- what each outcome must look like -----

def _expected_events(path: str, answer: StreamResponse, body: dict[str, Any]) -> list[Any]:
    encoder = CODECS[path].encoder(answer, body)  # type: ignore[union-attr]
    return [out for event in answer.events for out in encoder.feed(event) if out != DONE]


def _check_http_error(caught: pytest.ExceptionInfo[Any], answer: HttpError) -> None:
    error = answer.body["error"]
    status, body = from_messages(answer.status, error["type"], error["message"])
    assert isinstance(caught.value, openai.APIStatusError)
    assert caught.value.status_code == status and caught.value.body == body["error"]
    assert caught.value.response.headers["x-request-id"] == answer.body["request_id"]
    if answer.retry_after_ns is not None:
        wait_ms = math.ceil(answer.retry_after_ns / 1e6 / FAST)
        assert caught.value.response.headers["retry-after-ms"] == str(wait_ms)


def _check_stream(path: str, answer: StreamResponse, body: dict[str, Any], seen: list[Any],
                  outcome: Any, caught: BaseException | None) -> None:
    ours = _expected_events(path, answer, body)
    if path == CHAT:
        ours = [chunk for chunk in ours if "error" not in chunk]  # raised, not yielded
    elif answer.ending == "error_event":
        # The SDK raises at the `error` event: it and the `response.failed` after are not yielded.
        assert [event["type"] for event in ours[-2:]] == ["error", "response.failed"]
        error = ours[-2]["error"]
        ours = ours[:-2]
    # The SDK adds its snapshot fields to some events: every field of ours is there.
    covers(seen, ours[:len(seen)])
    # And what it decoded carries the model's own blocks, read from the model's events alone.
    blocks = scripted(answer.events)
    if path == RESPONSES and len(seen) == len(ours):
        assert from_responses_events(seen) == blocks
    elif path == CHAT:
        assert from_chat_chunks(seen) == chat_view(blocks)
    call_ids = [event["item"]["call_id"] for event in ours
                if event.get("type") == "response.output_item.added"
                and event["item"]["type"] == "function_call"]
    if len(set(call_ids)) < len(call_ids):
        # The SDK's stream state refuses a second function_call with the same call_id.
        assert isinstance(caught, RuntimeError) and "conflicting output" in str(caught)
        return
    assert len(seen) == len(ours)
    if answer.ending == "cut":
        assert isinstance(caught, DROPPED), caught
    elif answer.ending == "error_event" and path == CHAT:
        assert isinstance(caught, openai.APIError) and not isinstance(caught, DROPPED)
        assert caught.message == answer.events[-1]["error"]["message"]
    elif answer.ending == "error_event":
        assert isinstance(caught, openai.APIError) and not isinstance(caught, DROPPED)
        assert (caught.message, caught.code, caught.body) == (error["message"], error["code"],
                                                              error)
    elif path == CHAT and ours[-2]["choices"][0]["finish_reason"] == "length":
        # The SDK's stream helper raises at a length stop, after every chunk.
        assert isinstance(caught, openai.LengthFinishReasonError), caught
    elif path == RESPONSES and ours[-1]["type"] != "response.completed":
        # A failed or incomplete response: the SDK's final response is never made.
        assert isinstance(caught, RuntimeError) and "response.completed" in str(caught)
        assert seen[-1]["response"]["status"] in ("failed", "incomplete")
    else:
        assert caught is None, caught
        covers(outcome, CODECS[path].final(answer, body))
        _check_final(path, answer, outcome)


def _check_final(path: str, answer: StreamResponse, outcome: dict[str, Any]) -> None:
    """The final object carries the model's blocks (read without the codec)."""
    blocks = scripted(answer.events)
    if path == RESPONSES:
        texts = [item.get("arguments") or "".join(
            part["text"] for part in item.get("content") or item.get("summary") or [])
            for item in outcome["output"]]
        assert texts == [block["text"] for block in blocks]
        assert [item.get("call_id", "") for item in outcome["output"]] == [
            block["id"] for block in blocks]
        return
    stop = next(e["delta"]["stop_reason"] for e in answer.events if e["type"] == "message_delta")
    finish = {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length"}[stop]
    assert outcome["choices"][0]["finish_reason"] == finish
    message = outcome["choices"][0]["message"]
    calls = [{"id": call["id"], "name": call["function"]["name"],
              "text": call["function"]["arguments"]} for call in message.get("tool_calls") or ()]
    assert (message["content"] or "", calls) == chat_view(blocks)


def _check_create(path: str, answer: StreamResponse, body: dict[str, Any], outcome: Any,
                  caught: BaseException | None) -> None:
    if answer.ending == "cut":
        assert isinstance(caught, DROPPED), caught
    elif answer.ending == "error_event":
        error = answer.events[-1]["error"]
        status, _ = from_messages(500 if error["type"] == "api_error" else 529, error["type"],
                                  error["message"])
        assert isinstance(caught, openai.APIStatusError) and caught.status_code == status
    else:
        assert caught is None, caught
        covers(outcome, CODECS[path].final(answer, body))
        _check_final(path, answer, outcome)


def _attempt(call: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    try:
        return call(), None
    except (openai.OpenAIError, httpx2.HTTPError, RuntimeError) as error:
        return None, error


@pytest.mark.parametrize("path", [RESPONSES, CHAT])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_sdk_decodes_every_case_in_every_mode(case: str, path: str) -> None:
    model = model_for(case)
    with serving(model) as (server, _, _log):
        base_url = server.base_url + "/v1"
        client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=20)
        for number, mode in enumerate(MODES):
            stream = mode.endswith("stream")
            session = 1000 + number
            body = request(path, model, stream=stream)
            answer = expected(path, model, body, session)
            headers = {SESSION_HEADER: str(session)}
            seen: list[Any] = []
            args = (path, body, stream, headers, seen)
            if mode.startswith("sync"):
                outcome, caught = _attempt(lambda args=args: _sync(client, *args))
            else:
                outcome, caught = _attempt(lambda args=args: _run_async(base_url, *args))
            if isinstance(answer, HttpError):
                _check_http_error(pytest.ExceptionInfo.from_exc_info(
                    (type(caught), caught, caught.__traceback__)), answer)  # type: ignore[arg-type]
            elif stream:
                _check_stream(path, answer, body, seen, outcome, caught)
            else:
                _check_create(path, answer, body, outcome, caught)
        client.close()


@pytest.mark.parametrize("path", [RESPONSES, CHAT])
@pytest.mark.parametrize("case", ["clean", "malformed_tool_json", "error_api", "cut_mid_tool_json",
                                  "max_tokens_mid_tool_use"])
def test_the_streamed_bytes_are_the_codecs_of_the_models_answer(case: str, path: str) -> None:
    model = model_for(case)
    body = request(path, model, stream=True)
    answer = expected(path, model, body, 77)
    assert isinstance(answer, StreamResponse)
    with serving(model) as (server, _, _log):
        with httpx2.stream("POST", server.base_url + path, json=body, timeout=20,
                           headers={SESSION_HEADER: "77"}) as response:
            received = b""
            try:
                for piece in response.iter_raw():
                    received += piece
            except httpx2.HTTPError:
                assert answer.ending == "cut"
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert received == expected_bytes(path, answer, body)
    if path == CHAT and answer.ending == "complete":
        assert received.endswith(b"data: [DONE]\n\n")

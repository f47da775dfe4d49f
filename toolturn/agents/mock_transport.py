"""The mock model behind an `httpx2` transport: what `toolturn serve` answers, in memory and on the
virtual clock, so an `anthropic.AsyncAnthropic` or `openai.AsyncOpenAI` built on it runs its real
HTTP and SSE path with no socket.

    transport = MockTransport(model, sessions)
    http = httpx2.AsyncClient(transport=transport)
    client = anthropic.AsyncAnthropic(base_url=BASE_URL, api_key="virtual", http_client=http)
    openai = openai.AsyncOpenAI(base_url=BASE_URL + "/v1", api_key="virtual", http_client=http)

Each `POST /v1/messages`, `/v1/responses` and `/v1/chat/completions` is answered as
`toolturn.wire.server` answers it (rules 1-6 there), with the same pieces, its protocol's codec
(`toolturn.wire.codecs`) included: the body's shape (400), the turn's identity (`x-sim-session`,
then `x-sim-turn` or the transcript's assistant messages, of the Messages body the codec makes,
so a conversation gets the same draws in every protocol), the endpoint's admission (queue or
refusal), the pairing check on arrival (a broken transcript is the API's 400), the model's
answer, framed in the request's protocol. The model's delays are
virtual sleeps (`asyncio.sleep` on `toolturn.agents.virtual_loop`) from admission: an HTTP error
after its delay, or 200 at once and each event at its time; a cut stream raises the error httpx
raises for a body cut short. `count_tokens` and the models listing are answered too; any other
path is the API's 404.

What the mock sees of a session named in `sessions` (`toolturn.agents.seen_requests`: the model's
Messages events, whatever the protocol's framing) is noted as it goes; a
request of another session is answered and not noted.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from itertools import groupby
from operator import itemgetter
from typing import Any

import httpx2

from toolturn.agents.seen_requests import CANCELLED, SeenRequest, SeenSession
from toolturn.model.api_errors import INVALID_REQUEST, error_body
from toolturn.model.model import MockModel
from toolturn.model.response import HttpError, Response, StreamResponse, Turn
from toolturn.runtime.strict_json import parse_json
from toolturn.wire.admission import AsyncEndpoint
from toolturn.wire.client_tools import ClientToolModels
from toolturn.wire.codecs import CODECS, MESSAGES, Codec, Frames
from toolturn.wire.identity import TurnIdentities
from toolturn.wire.openai_errors import Problem
from toolturn.wire.request_shape import count_tokens_problem
from toolturn.wire.side_endpoints import (
    COUNT_TOKENS_PATH,
    MODELS_PATH,
    count_tokens,
    mapped_profile,
    model_body,
    model_list,
    model_shape,
)

BASE_URL = "http://mock-model.invalid"
NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000
REFUSED = "endpoint_refused"
_ERROR_STATUS = {"overloaded_error": 529}
_JSON = {"content-type": "application/json"}


def _now_ns() -> int:
    # On the virtual loop this is its clock (`toolturn.agents.virtual_loop` rule 6), exactly.
    return time.monotonic_ns()


def _json(status: int, body: Mapping[str, Any], headers: Mapping[str, str] | None = None
          ) -> httpx2.Response:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    return httpx2.Response(status, headers={**_JSON, **(headers or {})}, content=data)


class MockTransport(httpx2.AsyncBaseTransport):
    """See the module docstring."""

    def __init__(self, model: MockModel, sessions: Mapping[int, SeenSession]) -> None:
        self.model = model
        self.sessions = sessions
        self._models = ClientToolModels(model, None)
        self._endpoint = AsyncEndpoint(model.endpoint)
        self._identities = TurnIdentities()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        codec = CODECS.get(path)
        if request.method == "GET" and path == MODELS_PATH:
            shape = model_shape({name.lower(): value for name, value in request.headers.items()})
            return _json(200, model_list(self.model, shape))
        if request.method != "POST" or (codec is None and path != COUNT_TOKENS_PATH):
            return _json(404, error_body("not_found_error", f"{request.method} {path}: not found",
                                         "req_virtual"))
        data = await request.aread()
        if codec is None:
            return self._count_tokens(data)
        body, problem = codec.decoded(data)
        if problem is not None:
            status, error = codec.error(400, INVALID_REQUEST, problem.message, "req_virtual",
                                        problem)
            return _json(status, error)
        return await self._messages(request, body, codec)

    def _count_tokens(self, data: bytes) -> httpx2.Response:
        try:
            body = parse_json(data.decode("utf-8"))
        except ValueError as error:
            problem: str | None = f"request body is not valid JSON: {error}"
        else:
            problem = count_tokens_problem(body)
        if problem is not None:
            return _json(400, error_body(INVALID_REQUEST, problem, "req_virtual"))
        return _json(200, count_tokens(body))

    async def _messages(self, request: httpx2.Request, body: dict[str, Any], codec: Codec
                        ) -> httpx2.Response:
        headers = {name.lower(): value for name, value in request.headers.items()}
        # The model sees every protocol's request as the Messages body of the same conversation.
        shaped = codec.messages_body(body)
        turn = self._identities.turn_for(headers, shaped)
        matched, profile = mapped_profile(shaped["model"], self.model)
        model = self._models.for_request(shaped, profile)
        seen = model_body(shaped, model, False, matched=matched)
        problems = codec.pairing_problems(body, seen)
        violations = tuple(problem.message for problem in problems)
        session = self.sessions.get(turn.session_id)
        log = None if session is None else session.arrived(
            turn.turn_index, turn.attempt, str(seen["model"]), _now_ns(), violations)
        holds_slot = await self._endpoint.acquire()
        admitted_ns = _now_ns()
        try:
            response = self._respond(model, seen, turn, holds_slot, violations)
        except BaseException:
            self._release(holds_slot)
            raise
        if log is not None:
            log.fault = REFUSED if not holds_slot else ",".join(response.faults) or None
        if isinstance(response, HttpError):
            # A pairing refusal names the parameter the API names (the first violation's), as
            # the server's (`toolturn.wire.server`).
            problem = problems[0] if problems and response.status == 400 else None
            try:
                return await self._http_error(response, admitted_ns, log, codec, problem)
            finally:
                self._release(holds_slot)
        if session is not None and log is not None and session.on_stream is not None:
            session.on_stream(log, response.events, response.end_ns, admitted_ns)
        request_id = self.model.request_id(turn)
        if body.get("stream", False):
            stream = _TimedStream(response, admitted_ns, session, log,
                                  lambda: self._release(holds_slot), codec.frames(response, body))
            if log is not None:
                log.status = "200"
            return httpx2.Response(200, headers={"content-type": "text/event-stream",
                                                 codec.request_id_header: request_id},
                                   stream=stream)
        stream = _TimedStream(response, admitted_ns, session, log,
                              lambda: self._release(holds_slot), _unframed)
        return await self._message(stream, response, request_id, log, body, codec)

    def _release(self, holds_slot: bool) -> None:
        if holds_slot:
            self._endpoint.release()

    def _respond(self, model: MockModel, body: Mapping[str, Any], turn: Turn, holds_slot: bool,
                 violations: tuple[str, ...]) -> Response:
        if not holds_slot:
            return self.model.refuse(turn, self._endpoint.utilisation())
        utilisation = self._endpoint.utilisation_of_others()
        if violations:
            return model.reject(violations[0], turn, utilisation)
        return model.answer(body, turn, utilisation)

    async def _http_error(self, error: HttpError, admitted_ns: int, log: SeenRequest | None,
                          codec: Codec, problem: Problem | None = None) -> httpx2.Response:
        await _sleep_until(admitted_ns + error.at_ns)
        request_id = str(error.body.get("request_id", ""))
        headers = {codec.request_id_header: request_id}
        if error.retry_after_ns is not None:
            # The two headers agree, as the server's (`toolturn.wire.server._send_http_error`):
            # whole seconds cannot say 100 ms, so `retry-after` goes only when they can.
            wait_ms = -(-error.retry_after_ns // NS_PER_MS)
            headers["retry-after-ms"] = str(wait_ms)
            if wait_ms % 1000 == 0:
                headers["retry-after"] = str(wait_ms // 1000)
        if log is not None:
            log.ended(str(error.status), _now_ns())
        status, body = codec.error(error.status, error.body["error"]["type"],
                                   error.body["error"]["message"], request_id, problem)
        return _json(status, error.body if codec is MESSAGES else body, headers)

    async def _message(self, stream: _TimedStream, response: StreamResponse, request_id: str,
                       log: SeenRequest | None, body: Mapping[str, Any], codec: Codec
                       ) -> httpx2.Response:
        """`stream: false`: the whole stream's time, then the answer (or its error)."""
        async for _ in stream:
            pass
        headers = {codec.request_id_header: request_id}
        if response.ending == "error_event":
            error = response.events[-1]["error"]
            status, error_json = codec.error(_ERROR_STATUS.get(error["type"], 500),
                                             error["type"], error["message"], request_id)
            if log is not None:
                log.status = str(status)
            return _json(status, error_json, headers)
        if log is not None:
            log.status = "200"
        return _json(200, codec.final(response, body), headers)


def _unframed(event: dict[str, Any]) -> bytes:
    # A non-streaming answer's events are timed, not sent.
    return b""


class _TimedStream(httpx2.AsyncByteStream):
    """A response's events, each at its time from admission; a cut raises as a dropped connection
    does. The endpoint's slot is held until the stream is over or closed."""

    def __init__(self, response: StreamResponse, admitted_ns: int, session: SeenSession | None,
                 log: SeenRequest | None, release: Callable[[], None], frames: Frames) -> None:
        self._response = response
        self._frames = frames
        self._session = session
        self._admitted_ns = admitted_ns
        self._log = log
        self._release = release
        self._released = False
        self._read = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # Read once: a client that reads on after the end (the openai SDK drains the body after
        # `data: [DONE]`) gets nothing more, not the events again.
        if self._read:
            return
        self._read = True
        response, log = self._response, self._log
        session = self._session if log is not None else None
        try:
            # The events due at one instant go out as one chunk, as the server writes them
            # (`toolturn.wire.server`): one wait and one read per instant, not per event.
            for t_ns, events in groupby(zip(response.times, response.events, strict=True),
                                        key=itemgetter(0)):
                await _sleep_until(self._admitted_ns + t_ns)
                now_ns = _now_ns()
                chunk = []
                for _, event in events:
                    if session is not None and log is not None:
                        session.sent_event(log, event, now_ns)
                    chunk.append(self._frames(event))
                yield b"".join(chunk)
            await _sleep_until(self._admitted_ns + response.end_ns)
        finally:
            self._done()
        if response.ending == "cut":
            raise httpx2.RemoteProtocolError(
                "peer closed connection without sending complete message body (incomplete "
                "chunked read)"
            )

    def _done(self) -> None:
        if self._log is not None:
            over = self._log.end_ns is None and self._log.n_events == len(self._response.events)
            self._log.ended(None if over else CANCELLED, _now_ns())
        if not self._released:
            self._released = True
            self._release()

    async def aclose(self) -> None:
        self._done()


async def _sleep_until(time_ns: int) -> None:
    wait_ns = time_ns - _now_ns()
    if wait_ns > 0:
        await asyncio.sleep(wait_ns / NS_PER_S)

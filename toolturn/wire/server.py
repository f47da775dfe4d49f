"""`toolturn serve`'s server: the mock model behind an Anthropic-compatible `POST /v1/messages`,
and the same model behind the OpenAI Responses API (`POST /v1/responses`) and Chat Completions
(`POST /v1/chat/completions`), each in its own protocol (`toolturn.wire.codecs`).

    server = MockServer(model, speed=10.0)
    await server.start("127.0.0.1", 0)          # port 0: any free port; see server.base_url
    await server.serve_forever()                # or run clients, then: await server.close()

Behaviour, request by request:

1. The body must be a JSON object (strict JSON: no NaN, no Infinity, not nested too deep) of
   the Messages API's shape (`toolturn.wire.request_shape`); otherwise 400 `invalid_request_error`
   worded as the API words it. `POST /v1/messages/count_tokens` and `GET /v1/models` are
   answered too (`toolturn.wire.side_endpoints`); other paths answer 404, other methods 405, in the
   API's JSON error shape. A query string (`?beta=true`) is ignored. The OpenAI endpoints check
   their bodies as those APIs do and answer in their shapes and statuses (the codec's); the
   model sees each as the Messages-shaped body of the same conversation, so a conversation
   gets the same draws, faults and story whichever protocol carries it.
2. Identity (`toolturn.wire.identity`): session from the `x-sim-session` header or from the
   conversation itself, turn index from the `x-sim-turn` header or the assistant messages,
   attempt (from 1) from the session's earlier requests of that turn. The model sees the body
   with any model name mapped to the scenario's (unless `strict_models`) and system-role
   messages taken out.
3. Admission: the scenario's endpoint capacity counts requests in flight across every
   connection; beyond it a request waits in line or is refused (429/529 with retry-after), as
   `[model.endpoint]` says. A request holds its slot until its response is over; the model's
   delays count from admission, so time in the queue comes on top; or, for a request admitted
   at once whose `x-sim-sent-at` header says when its client (on this host) sent it, from then
   (`toolturn.wire.sent_at`: the transit costs no model time, as in the simulator).
4. The mock model answers (`MockModel.answer`, or `reject` with the first violation of the
   pairing check made on arrival): an HTTP error (400 with `check_pairing`'s
   wording for a broken transcript, 404 for an unknown model, 429 / 529 / 500 faults), sent
   after its delay with the API's JSON error body, a `request-id` header and, for 429 and 529,
   `retry-after-ms` (rounded up) and, when that is whole seconds, `retry-after` saying the
   same (never two waits that disagree); or a timed stream.
5. `stream: true`: 200 `text/event-stream` at once, then each event at its time from the
   request's admission (pings, `event: error` included). A stream the model cuts ends with the
   connection dropped mid-body, after any silence before the cut.
6. `stream: false`: after the whole stream's time, the accumulated Message JSON; a stream that
   would end with an `error` event answers that error's status (529 overloaded, 500 otherwise)
   instead, and a cut stream drops the connection without a response.
7. `speed` divides every delay, retry-after included: at 10 the model is ten times faster. A
   delay is at most `MAX_DELAY_NS` (a year) whatever the speed.
8. A failure of the server's own (a bug) answers 500 `api_error`, as the API answers its own, or
   cuts a response already begun; the log line names the exception.
9. With `client_tools`, the model calls the tools the request declares, with safe inputs
   (`toolturn.wire.client_tools`); without, the scenario's own tools, as the simulator does.
10. No client holds the server forever: idle, header, body and write timeouts
   (`toolturn.wire.connection.Timeouts`; 408 for a request begun but late), and at most
   `max_connections` open at once: one more is closed as soon as it is accepted.

One line per request goes to the log (stderr by default): method, path, status, how the answer
ended, the turn's identity, the faults that fired and the time taken. JSON goes out as UTF-8 with
non-ASCII text unescaped, except lone surrogates (a request's `\\ud800` escape, echoed in an
error message), which UTF-8 cannot carry: they stay escapes.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from toolturn.model.api_errors import INVALID_REQUEST, STATUS_ERRORS
from toolturn.model.model import MockModel
from toolturn.model.response import HttpError, Response, StreamResponse, Turn
from toolturn.runtime.strict_json import parse_json
from toolturn.wire.admission import AsyncEndpoint
from toolturn.wire.client_tools import ClientToolModels, ClientTools
from toolturn.wire.codecs import CODECS, MESSAGES, Codec, Frames, final_message
from toolturn.wire.connection import BadRequest, HttpConnection, HttpRequest, Timeouts
from toolturn.wire.identity import TurnIdentities, turn_number
from toolturn.wire.openai_errors import Problem
from toolturn.wire.recorder import Recorder
from toolturn.wire.request_shape import count_tokens_problem
from toolturn.wire.sent import SentCall, SentResponse, sent_parts
from toolturn.wire.sent_at import sent_at
from toolturn.wire.side_endpoints import (
    COUNT_TOKENS_PATH,
    MODELS_PATH,
    count_tokens,
    mapped_profile,
    model_body,
    model_info,
    model_list,
    model_shape,
    served_names,
)

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "MAX_DELAY_NS", "MockServer", "final_message"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000
# The longest delay served: no client waits longer. A speed near zero (1e-300) made delays
# infinite, which `round` cannot turn into nanoseconds.
MAX_DELAY_NS = 365 * 24 * 3600 * NS_PER_S
# Open connections at most; one more is closed at once (rule 10). nginx's worker default, more
# than any load test of ours opens, and far below the descriptors a process may hold.
MAX_CONNECTIONS = 1024

# The status an `error` event's type stands for when the answer is not streamed.
_ERROR_STATUS = {error_type: status for status, (error_type, _) in STATUS_ERRORS.items()}
_JSON = ("content-type", "application/json")
_EVENT_STREAM = ("content-type", "text/event-stream; charset=utf-8")
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def log_to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _count_tokens_body(data: bytes) -> tuple[Any, str | None]:
    """A count_tokens body and why it is refused (None: it is not), as the API words it."""
    try:
        body = parse_json(data.decode("utf-8"))
    except ValueError as error:  # UnicodeDecodeError included
        return None, f"request body is not valid JSON: {error}"
    return body, count_tokens_problem(body)


class MockServer:
    """The mock model over HTTP/1.1 (h11) on one asyncio event loop."""

    def __init__(
        self,
        model: MockModel,
        *,
        speed: float = 1.0,
        log: Callable[[str], None] = log_to_stderr,
        timeouts: Timeouts | None = None,
        max_connections: int = MAX_CONNECTIONS,
        strict_models: bool = False,
        client_tools: ClientTools | None = None,
        recorder: Recorder | None = None,
        rewrite: Callable[[Turn, Response], Response] | None = None,
    ) -> None:
        if not (math.isfinite(speed) and speed > 0):
            raise ValueError(f"speed must be a positive number, got {speed}")
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {max_connections}")
        self.model = model
        self.speed = speed
        self.timeouts = timeouts or Timeouts()
        self.max_connections = max_connections
        self.recorder = recorder
        # A probe's fault plan: the model's answer to a turn, changed before it is sent.
        self._rewrite = rewrite
        self._origin_ns = time.monotonic_ns()
        # None: the model calls the scenario's own tools, as in the simulator (its twin).
        self.strict_models = strict_models or model.config.serve.strict_model_names
        self._models = ClientToolModels(model, client_tools)
        self._log = log
        self._endpoint = AsyncEndpoint(model.endpoint)
        self._identities = TurnIdentities()
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[None], HttpConnection] = {}
        self._rejected = 0

    async def start(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
        """Listen on `host`:`port` (0: a free port). Raises OSError if it cannot."""
        self._server = await asyncio.start_server(self._serve_connection, host, port)

    @property
    def port(self) -> int:
        """The port listened on (the real one when started with port 0)."""
        if self._server is None:
            raise RuntimeError("the server has not been started")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        """What to give a client as `base_url`, e.g. `http://127.0.0.1:8765`."""
        port = self.port  # raises if not started
        assert self._server is not None
        host = self._server.sockets[0].getsockname()[0]
        return f"http://{host}:{port}"

    @property
    def in_flight(self) -> int:
        """Requests being answered now (holding an endpoint slot)."""
        return self._endpoint.in_flight

    async def serve_forever(self) -> None:
        """Serve until cancelled."""
        if self._server is None:
            raise RuntimeError("the server has not been started")
        await self._server.serve_forever()

    async def close(self) -> None:
        """Stop listening and drop every open connection (responses in progress are cut)."""
        if self._server is None:
            return
        self._server.close()
        connections = list(self._connections.items())
        for task, http in connections:
            http.cut()  # a reader then sees the end at once, whatever it awaits
            task.cancel()
        await asyncio.gather(*(task for task, _ in connections), return_exceptions=True)
        await self._server.wait_closed()

    # ----- one connection -----

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        if len(self._connections) >= self.max_connections:
            writer.transport.abort()  # refused before a byte is read: the client sees a reset
            self._log(f"- connection refused: {self.max_connections} connections open")
            return
        http = HttpConnection(reader, writer, self.timeouts)
        self._connections[task] = http
        try:
            while True:
                try:
                    request = await http.next_request()
                except BadRequest as error:
                    if http.can_respond:
                        await self._reject(http, "-", error.status, INVALID_REQUEST, str(error),
                                           [("connection", "close")])
                        await http.linger_and_close()
                    break
                if request is None or not await self._answer(http, request):
                    break
        except ConnectionError:
            pass  # The client went away; nothing is owed to it.
        except asyncio.CancelledError:
            # `close()` cancels connections. The task ends here, quietly: asyncio 3.11's stream
            # server asks a cancelled handler task for its exception and logs a traceback.
            pass
        finally:
            self._connections.pop(task, None)
            http.close()

    async def _answer(self, http: HttpConnection, request: HttpRequest) -> bool:
        """Answer one request; False if the connection is not to be used again (a cut)."""
        arrived_ns = time.monotonic_ns()
        path = request.target.partition("?")[0]  # Claude Code posts to /v1/messages?beta=true
        where = f"{request.method} {path}"
        method = "GET" if path == MODELS_PATH or path.startswith(MODELS_PATH + "/") else "POST"
        codec = CODECS.get(path)
        shape = codec or MESSAGES  # the shape of its errors: the protocol's, if it has one
        if codec is None and path != COUNT_TOKENS_PATH and method != "GET":
            # HEAD / as well: the API answers 404 there.
            await self._reject(http, where, 404, "not_found_error", f"{where}: not found",
                               codec=shape)
            return True
        # A HEAD (Bun's connection check before Claude Code's first request) is a GET without
        # its body.
        if request.method not in (method, "HEAD" if method == "GET" else method):
            await self._reject(http, where, 405, INVALID_REQUEST, f"{where}: use {method}",
                               codec=shape)
            return True
        if method == "GET":
            await self._answer_models(http, where, path, request.headers)
            return True
        if codec is None:  # count_tokens
            body, refusal = _count_tokens_body(request.body)
            if refusal is not None:
                await self._reject(http, where, 400, INVALID_REQUEST, refusal)
            else:
                await self._send_json(http, 200, count_tokens(body))
                self._log(f"{where} 200")
            return True
        body, problem = codec.decoded(request.body)
        if problem is not None:
            if self.recorder is not None:
                self.recorder.refused(arrived_ns - self._origin_ns, 400, problem.message,
                                      protocol=codec.name)
            await self._reject(http, where, 400, INVALID_REQUEST, problem.message, codec=codec,
                               problem=problem)
            return True
        return await self._answer_messages(http, request, body, where, arrived_ns, codec)

    async def _answer_models(self, http: HttpConnection, where: str, path: str,
                             headers: Mapping[str, str]) -> None:
        name = path[len(MODELS_PATH) + 1:]
        shape = model_shape(headers)
        if not name:
            await self._send_json(http, 200, model_list(self.model, shape))
        elif self.strict_models and name not in served_names(self.model):
            codec = MESSAGES if shape == "anthropic" else CODECS["/v1/responses"]
            await self._reject(http, where, 404, "not_found_error", f"model: {name}",
                               codec=codec)
            return
        else:
            await self._send_json(http, 200, model_info(name, shape))
        self._log(f"{where} 200")

    async def _answer_messages(
        self,
        http: HttpConnection,
        request: HttpRequest,
        body: dict[str, Any],
        where: str,
        arrived_ns: int,
        codec: Codec = MESSAGES,
    ) -> bool:
        # The model sees every protocol's request as the Messages body of the same conversation.
        shaped = codec.messages_body(body)
        turn = self._identities.turn_for(request.headers, shaped)
        matched, profile = mapped_profile(shaped["model"], self.model)
        model = self._models.for_request(shaped, profile)
        seen = model_body(shaped, model, self.strict_models, matched=matched)
        problems = codec.pairing_problems(body, seen)
        violations = [problem.message for problem in problems]
        index = None if self.recorder is None else self.recorder.arrived(
            arrived_ns - self._origin_ns, turn, seen["model"], shaped["messages"], request.body,
            violations, protocol=codec.name, streamed=bool(body.get("stream", False)))
        response: Response | None = None
        admitted_ns = self._admission_start(request.headers, arrived_ns)
        holds_slot = await self._endpoint.acquire()
        # The model's times count from admission: time spent in the queue comes on top.
        admitted_ns = time.monotonic_ns() if admitted_ns is None else admitted_ns
        outcome = "aborted"  # the client went away, or the server is closing
        sent = SentResponse()  # what went out, for the recording
        # A refusal is the endpoint's doing, not one of the model's faults: named here.
        faults: tuple[str, ...] = () if holds_slot else ("endpoint_refused",)
        try:
            response = self._respond(model, seen, turn, holds_slot, violations)
            if holds_slot:
                faults = response.faults
            if isinstance(response, HttpError):
                # A pairing refusal names the parameter the API names (the first violation's).
                problem = problems[0] if problems and response.status == 400 else None
                outcome = await self._send_http_error(http, response, admitted_ns, sent, codec,
                                                      problem)
                return True
            request_id = self.model.request_id(turn)
            if body.get("stream", False):
                outcome = await self._send_stream(http, response, request_id, admitted_ns, sent,
                                                  codec.frames(response, body), codec)
            else:
                outcome = await self._send_message(http, response, request_id, admitted_ns,
                                                   sent, body, codec)
            return response.ending != "cut"
        except ConnectionError:
            raise  # the client went away: nothing is owed to it
        except Exception as error:
            # A bug: answered as the API answers its own, rather than the connection dropped
            # without a word and asyncio's "Unhandled exception in client_connected_cb".
            outcome = f"500 api_error ({type(error).__name__}: {error})"
            sent.ending = "server_error"
            if not http.can_respond:
                http.cut()
                return False
            error_type, message = STATUS_ERRORS[500]
            request_id = self.model.request_id(turn)
            status, error_json = codec.error(500, error_type, message, request_id)
            await self._send_json(http, status, error_json,
                                  [(codec.request_id_header, request_id)], sent)
            return True
        finally:
            if holds_slot:
                self._endpoint.release()
            elapsed_ms = (time.monotonic_ns() - arrived_ns) // NS_PER_MS
            who = f"session={turn.session_id} turn={turn_number(turn)} attempt={turn.attempt}"
            self._log(f"{where} {outcome} {who} faults={','.join(faults) or '-'} {elapsed_ms}ms")
            if index is not None:
                self._record(index, sent, faults)

    def _admission_start(self, headers: Mapping[str, str], arrived_ns: int) -> int | None:
        """The time the model's delays count from when the client said when it sent the request
        (`toolturn.wire.sent_at`) and it is admitted at once: its transit then costs no model
        time, as in the simulator. None: from admission (no such header, or a wait in line,
        which starts when a slot frees whenever the request was sent)."""
        sent_ns = sent_at(headers, arrived_ns)
        if sent_ns is None or self._endpoint.would_wait():
            return None
        return sent_ns

    def _record(self, index: int, sent: SentResponse, faults: tuple[str, ...]) -> None:
        """Tell the recorder what the answer to request `index` put on the socket."""
        assert self.recorder is not None
        calls: list[SentCall] = []
        stop: int | None = None
        if sent.events:
            events, times = zip(*sent.events, strict=True)
            calls, stop = sent_parts(events, times)
        self.recorder.answered(index, status=sent.status, ending=sent.ending, faults=faults,
                               end_ns=self.clock_ns(), calls=calls,
                               message_stop_ns=stop, first_byte_ns=sent.first_byte_ns,
                               bytes_sent=sent.bytes_sent)

    def clock_ns(self) -> int:
        """The recording's clock: monotonic nanoseconds since the server was made."""
        return time.monotonic_ns() - self._origin_ns

    def _respond(self, model: MockModel, body: Mapping[str, Any], turn: Turn, holds_slot: bool,
                 pairing: list[str]) -> Response:
        """The model's answer; a request refused for capacity gets the endpoint's refusal."""
        if not holds_slot:
            return self.model.refuse(turn, self._endpoint.utilisation())
        # The body's shape was checked on arrival and its pairing just now: the model answers
        # without checking either again.
        utilisation = self._endpoint.utilisation_of_others()
        if pairing:
            response: Response = model.reject(pairing[0], turn, utilisation)
        else:
            response = model.answer(body, turn, utilisation)
        if self._rewrite is None or (isinstance(response, HttpError) and response.status == 400):
            return response  # a broken transcript is refused whatever the plan
        return self._rewrite(turn, response)

    async def _reject(
        self,
        http: HttpConnection,
        where: str,
        status: int,
        error_type: str,
        message: str,
        headers: list[tuple[str, str]] | None = None,
        *,
        codec: Codec = MESSAGES,
        problem: Problem | None = None,
    ) -> None:
        """Answer a request the mock model never sees (in `codec`'s shape), and log it."""
        self._rejected += 1
        request_id = f"req_serve_{self._rejected:08d}"
        sent_status, body = codec.error(status, error_type, message, request_id, problem)
        await self._send_json(http, sent_status, body,
                              [(codec.request_id_header, request_id), *(headers or [])])
        self._log(f"{where} {sent_status} {message}")

    # ----- answers -----

    async def _send_http_error(
        self, http: HttpConnection, error: HttpError, admitted_ns: int, sent: SentResponse,
        codec: Codec, problem: Problem | None = None,
    ) -> str:
        await self._sleep_until(admitted_ns, error.at_ns)
        request_id = str(error.body.get("request_id", ""))
        headers = [(codec.request_id_header, request_id)]
        if error.retry_after_ns is not None:
            # The two headers must agree: `retry-after: 1` beside `retry-after-ms: 100` made
            # the CLI (which reads seconds) wait 1.1 s and the SDK (milliseconds first) 0.1 s.
            # Whole seconds cannot say 100 ms, so `retry-after` goes only when they can.
            wait_ms = -(-self._scaled(error.retry_after_ns) // NS_PER_MS)
            headers.append(("retry-after-ms", str(wait_ms)))
            if wait_ms % 1000 == 0:
                headers.append(("retry-after", str(wait_ms // 1000)))
        status, body = codec.error(error.status, error.body["error"]["type"],
                                   error.body["error"]["message"], request_id, problem)
        await self._send_json(http, status, error.body if codec is MESSAGES else body, headers,
                              sent)
        sent.ending = "http_error"
        return f"{status} {error.body['error']['type']}"

    async def _send_stream(self, http: HttpConnection, response: StreamResponse,
                           request_id: str, admitted_ns: int, sent: SentResponse,
                           frames: Frames, codec: Codec) -> str:
        await http.start(200, [_EVENT_STREAM, ("cache-control", "no-cache"),
                               (codec.request_id_header, request_id)])
        sent.started(200)
        due: list[dict[str, Any]] = []  # events whose time has come, written together
        for t_ns, event in zip(response.times, response.events, strict=True):
            if admitted_ns + self._scaled(t_ns) > time.monotonic_ns():
                await self._send_events(http, due, sent, frames)
                due = []
                await self._sleep_until(admitted_ns, t_ns)
            due.append(event)
        await self._send_events(http, due, sent, frames)
        await self._sleep_until(admitted_ns, response.end_ns)
        if response.ending == "cut":
            # What the recording counts as written must have gone out before the drop.
            sent.unsent(await http.cut_after_flush())
            sent.ending = "cut"
            return "200 stream cut"
        await http.end()
        sent.ending = response.ending
        return f"200 stream {response.ending}"

    async def _send_events(
        self, http: HttpConnection, events: list[dict[str, Any]], sent: SentResponse,
        frames: Frames,
    ) -> None:
        """Write the model's `events`, each framed in the request's protocol."""
        data = b"".join(frames(event) for event in events)
        await http.send_data(data)
        sent.wrote(self.clock_ns(), len(data), events)  # noted once the socket took them

    async def _send_message(self, http: HttpConnection, response: StreamResponse,
                            request_id: str, admitted_ns: int, sent: SentResponse,
                            body: Mapping[str, Any], codec: Codec) -> str:
        await self._sleep_until(admitted_ns, response.end_ns)
        if response.ending == "cut":
            http.cut()
            sent.ending = "cut"
            return "- message cut"
        headers = [(codec.request_id_header, request_id)]
        if response.ending == "error_event":
            error = response.events[-1]["error"]
            status, error_json = codec.error(_ERROR_STATUS.get(error["type"], 500),
                                             error["type"], error["message"], request_id)
            await self._send_json(http, status, error_json, headers, sent)
            sent.ending = "error_event"
            return f"{status} message error_event"
        # A whole Message: its blocks went out together, with the body.
        await self._send_json(http, 200, codec.final(response, body), headers, sent,
                              response.events)
        sent.ending = response.ending
        return "200 message"

    async def _send_json(
        self,
        http: HttpConnection,
        status: int,
        body: Mapping[str, Any],
        headers: list[tuple[str, str]] | None = None,
        sent: SentResponse | None = None,
        events: list[dict[str, Any]] | None = None,
    ) -> None:
        """A whole JSON answer; with `sent`, noted there once written (with the stream `events`
        it amounts to, for a Message)."""
        # backslashreplace acts on lone surrogates only, which json leaves only inside strings:
        # `\\ud800` there is the JSON escape of the same character.
        data = _ENCODE(body).encode("utf-8", "backslashreplace")
        await http.send(status, [_JSON, *(headers or [])], data)
        if sent is not None:
            sent.started(status)
            sent.wrote(self.clock_ns(), len(data), events or ())

    # ----- time -----

    def _scaled(self, delay_ns: int) -> int:
        """A delay of the model's, at the server's speed (at most `MAX_DELAY_NS`)."""
        return round(min(delay_ns / self.speed, MAX_DELAY_NS))

    async def _sleep_until(self, admitted_ns: int, t_ns: int) -> None:
        """Sleep until `t_ns` (model time, from the request's admission) has come."""
        wait_ns = admitted_ns + self._scaled(t_ns) - time.monotonic_ns()
        if wait_ns > 0:
            await asyncio.sleep(wait_ns / NS_PER_S)

"""`toolturn serve` defends itself and refuses what the API refuses (issue 13, defects 2, 9, 10):
request shapes checked as the API checks them, session headers of any length, read, idle and
write timeouts, a connection limit; and a served response is the twin of its simulated one."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import anthropic
import httpx2
import pytest

from tests.helpers.server import USER, mock_model, request, serving
from toolturn.model.response import Turn
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.tooldef import ToolDefinition
from toolturn.wire.connection import Timeouts
from toolturn.wire.identity import SESSION_HEADER
from toolturn.wire.request_shape import BLOCKS, TOOLS, request_problem
from toolturn.wire.server import MockServer

GOOD: dict[str, Any] = {"model": "m", "max_tokens": 100, "messages": USER}

# What Claude Code 2.1 sends (seen on the wire), less its long texts: a system-role message at
# messages[1], cache_control on blocks, a list system, beta fields the mock does not model.
CLAUDE_CODE_LIKE: dict[str, Any] = {
    "model": "claude-opus-5-5",
    "max_tokens": 32000,
    "stream": True,
    "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "<system-reminder>context</system-reminder>"},
            {"type": "text", "text": "Read the file.", "cache_control": {"type": "ephemeral"}},
        ]},
        {"role": "system", "content": "The user's working directory is /tmp/x."},
    ],
    "system": [{"type": "text", "text": "You are Claude Code.",
                "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
    "tools": [{"name": "Read", "description": "Reads a file",
               "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}},
                                "required": ["file_path"]}}],
    "tool_choice": {"type": "auto"},
    "metadata": {"user_id": "user_abc_account__session_123"},
    "thinking": {"type": "enabled", "budget_tokens": 31999},
    "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
    "output_config": {"effort": "high"},
    "temperature": 1,
    "some_future_beta_field": {"anything": [1, 2, 3]},
}


@pytest.mark.parametrize(("change", "wording"), [
    ({"messages": []}, "messages: at least one message is required"),
    ({"tools": 5}, "tools: Input should be a valid list"),
    ({"system": 5}, "system: Input should be a valid string or a valid list"),
    ({"max_tokens": 10**30}, f"max_tokens: {10**30} > 128000, which is the maximum allowed"),
    ({"max_tokens": 0}, "max_tokens: Input should be greater than or equal to 1"),
    ({"messages": [5]}, "messages.0: Input should be a valid dictionary"),
    ({"messages": [{"role": "robot", "content": "x"}]},
     "messages.0.role: Input should be 'user' or 'assistant'"),
    ({"messages": [{"role": "user"}]}, "messages.0.content: Field required"),
    ({"messages": [{"role": "user", "content": 7}]},
     "messages.0.content: Input should be a valid string or a valid list"),
    ({"messages": [{"role": "user", "content": [{"type": "nope"}]}]},
     "messages.0.content.0: Input tag 'nope' found using 'type' does not match"),
    ({"messages": [{"role": "user", "content": [{"type": "text"}]}]},
     "messages.0.content.0.text: Field required"),
    ({"messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "Read", "input": []}]}]},
     "messages.0.content.0.input: Input should be a valid dictionary"),
    ({"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]}]},
     "messages.0.content.0.is_error: Input should be a valid boolean"),
    ({"system": [{"type": "image", "source": {}}]}, "system.0: Input tag 'image'"),
    ({"tools": [{"name": "Read"}]}, "tools.0.input_schema: Field required"),
    ({"tools": [{"name": "A", "input_schema": {}}, {"name": "A", "input_schema": {}}]},
     "tools: Tool names must be unique."),
    ({"tools": [{"type": "bash_19990101", "name": "bash"}]}, "tools.0: Input tag 'bash_19990101'"),
    ({"tool_choice": {"type": "tool"}}, "tool_choice.name: Field required"),
    ({"tool_choice": "auto"}, "tool_choice: Input should be a valid dictionary"),
    ({"thinking": {"type": "enabled"}}, "thinking.budget_tokens: Field required"),
    ({"thinking": {"type": "enabled", "budget_tokens": 100}},
     "thinking.budget_tokens: Input should be greater than or equal to 1024"),
    ({"thinking": {"type": "enabled", "budget_tokens": 2000}},
     "`max_tokens` must be greater than `thinking.budget_tokens`"),
    ({"metadata": {"user_id": 5}}, "metadata.user_id: Input should be a valid string"),
    ({"stop_sequences": ["a", 1]}, "stop_sequences.1: Input should be a valid string"),
    ({"temperature": 2}, "temperature: Input should be less than or equal to 1"),
    ({"temperature": True}, "temperature: Input should be a valid number"),
    ({"top_k": -1}, "top_k: Input should be greater than or equal to 0"),
])
def test_bodies_the_api_refuses_are_refused_in_its_words(
    change: dict[str, Any], wording: str
) -> None:
    problem = request_problem({**GOOD, **change})
    assert problem is not None and problem.startswith(wording)


@pytest.mark.parametrize("change", [
    {},
    {"messages": [{"role": "user", "content": "hi"}, {"role": "system", "content": "ctx"}]},
    {"system": "Be brief."},
    {"system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]},
    {"tools": [{"type": "web_search_20250305", "name": "web_search"},
               {"name": "Read", "input_schema": {"type": "object"}, "cache_control": {}}]},
    {"tool_choice": {"type": "tool", "name": "Read"}},
    {"thinking": {"type": "adaptive"}},
    {"metadata": {"user_id": None}},
    {"context_management": {"edits": []}, "output_config": {"effort": "low"}, "betas": ["x"]},
    {"messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}},
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "ok"}]},
    ]}]},
    {k: v for k, v in CLAUDE_CODE_LIKE.items() if k != "stream"},
])
def test_what_real_clients_send_and_the_api_takes_is_accepted(change: dict[str, Any]) -> None:
    assert request_problem({**GOOD, **change}) is None


def test_the_known_types_come_from_the_sdk() -> None:
    assert BLOCKS["tool_use"] == {"id", "name", "input"}
    assert BLOCKS["tool_result"] == {"tool_use_id"} and "search_result" in BLOCKS
    assert TOOLS["custom"] == {"name", "input_schema"} and "web_search_20250305" in TOOLS


def test_a_claude_code_shaped_request_gets_a_tool_turn_and_a_broken_one_a_400() -> None:
    model = mock_model()
    with serving(model) as (server, client, log):
        named = ("model", "max_tokens", "messages")
        rest = {k: v for k, v in CLAUDE_CODE_LIKE.items() if k not in (*named, "stream")}
        with client.messages.stream(**{k: CLAUDE_CODE_LIKE[k] for k in named},
                                    extra_body=rest) as stream:
            final = stream.get_final_message()
        assert final.stop_reason == "tool_use"
        with pytest.raises(anthropic.BadRequestError, match="system: Input should be"):
            client.messages.create(**request(model), system=5)  # type: ignore[arg-type]
        response = httpx2.post(server.base_url + "/v1/messages?beta=true", timeout=20,
                               json=CLAUDE_CODE_LIKE)
    assert response.status_code == 200 and b"event: message_stop" in response.content
    assert log.lines[1].startswith("POST /v1/messages 400 system: ")


def test_count_tokens_and_both_kinds_of_key_are_served() -> None:
    model = mock_model()
    with serving(model) as (server, _, _log):
        for key in ({"api_key": "sk-dummy"}, {"auth_token": "dummy-bearer"}):
            client = anthropic.Anthropic(base_url=server.base_url, max_retries=0, timeout=20,
                                         **key)
            counted = client.messages.count_tokens(model="any-name", messages=USER)
            assert counted.input_tokens > 0
            assert client.messages.create(**request(model)).stop_reason == "tool_use"
            client.close()
        refused = httpx2.post(server.base_url + "/v1/messages/count_tokens", timeout=20,
                              json={"model": "m", "messages": []})
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == "messages: at least one message is required"


def test_a_session_header_of_thousands_of_digits_is_answered() -> None:
    # int() refuses more than 4,300 digits: the connection dropped unanswered, with a traceback.
    model = mock_model()
    with serving(model) as (_, client, log):
        message = client.messages.create(**request(model),
                                         extra_headers={SESSION_HEADER: "7" * 5000})
    assert message.stop_reason == "tool_use"
    assert len(log.lines) == 1 and " 200 message " in log.lines[0]


def test_a_served_response_is_the_twin_of_the_simulated_one() -> None:
    # The engine asks the model for Turn(session, turn - 1, command.attempt), attempts from 1.
    model = mock_model()
    loop = ToolTurnLoop([ToolDefinition("Read")], model=model.name, max_tokens=4096)
    [send] = loop.start("Read the file.", 0)
    simulated = model.respond(send.request_body, Turn(12, 0, send.attempt))
    with serving(model) as (server, _, _log):
        served = httpx2.post(server.base_url + "/v1/messages", timeout=20,
                             json={**send.request_body, "stream": True},
                             headers={SESSION_HEADER: "12"})
    events = [json.loads(line[6:]) for line in served.text.splitlines()
              if line.startswith("data: ")]
    assert events == list(simulated.events)


# ----- timeouts and limits, on raw sockets -----

SHORT = Timeouts(idle_s=0.3, header_s=0.3, body_s=0.3, write_s=0.3)


async def _with_server(client: Any, **options: Any) -> tuple[Any, list[str]]:
    lines: list[str] = []
    server = MockServer(mock_model(), speed=100.0, log=lines.append, **options)
    await server.start("127.0.0.1", 0)
    try:
        return await asyncio.wait_for(client(server), timeout=20), lines
    finally:
        await server.close()


async def _send_then_read(server: MockServer, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    answer = b""
    try:
        writer.write(data)
        await writer.drain()
        answer = await reader.read()  # until the server closes
    except ConnectionError:
        pass  # reset: nothing (more) to read
    writer.close()
    return answer


def test_a_head_that_trickles_in_gets_a_408_and_the_connection_closes() -> None:
    async def client(server: MockServer) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        try:
            for byte in b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n":  # a byte each 50 ms
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.05)
        except ConnectionError:
            pass  # the server gave up on us, as it should
        answer = b""
        try:
            while chunk := await reader.read(65536):
                answer += chunk
        except ConnectionError:
            pass  # our late bytes made the closed socket reset: what came before is kept
        writer.close()
        return answer

    answer, lines = asyncio.run(_with_server(client, timeouts=SHORT))
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"connection: close" in answer.lower()
    assert lines == ["- 408 request headers not received within 0.3 s"]


def test_a_body_shorter_than_its_length_gets_a_408() -> None:
    head = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"

    answer, lines = asyncio.run(_with_server(
        lambda server: _send_then_read(server, head), timeouts=SHORT))
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert lines == ["- 408 request body not received within 0.3 s"]


def test_an_idle_connection_is_closed_without_a_word_after_its_last_answer() -> None:
    body = json.dumps(request(mock_model())).encode()
    one = (b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
           + body)

    answer, lines = asyncio.run(_with_server(
        lambda server: _send_then_read(server, one), timeouts=SHORT))
    assert answer.count(b"HTTP/1.1 ") == 1 and answer.startswith(b"HTTP/1.1 200 ")
    assert len(lines) == 1  # the answer; the idle close is not a request
    silent, lines = asyncio.run(_with_server(
        lambda server: _send_then_read(server, b""), timeouts=SHORT))
    assert silent == b"" and lines == []


def test_a_client_that_stops_reading_is_cut_off() -> None:
    model = mock_model(script={"kind": "explicit", "responses": [
        {"blocks": [{"type": "text", "text": "word " * 100_000}]}]})
    body = json.dumps({**request(model), "max_tokens": 128_000, "stream": True}).encode()
    data = (b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
            + body)

    async def client(server: MockServer) -> bool:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
        sock.connect(("127.0.0.1", server.port))
        sock.setblocking(False)
        _, writer = await asyncio.open_connection(sock=sock)
        writer.write(data)
        await writer.drain()
        for _ in range(200):  # never read; wait for the server to give up on us
            await asyncio.sleep(0.05)
            if server.in_flight == 0 and not server._connections:
                return True
        return False

    lines: list[str] = []

    async def run() -> bool:
        server = MockServer(model, speed=1e6, log=lines.append, timeouts=SHORT)
        await server.start("127.0.0.1", 0)
        try:
            return await client(server)
        finally:
            await server.close()

    assert asyncio.run(run())
    assert len(lines) == 1 and " aborted " in lines[0]


def test_beyond_the_connection_limit_a_new_connection_is_closed_at_once() -> None:
    async def client(server: MockServer) -> tuple[bytes, bytes]:
        held = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(2)]
        await asyncio.sleep(0.05)  # both accepted and counted
        refused = await _send_then_read(server, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
        held[0][1].close()
        await asyncio.sleep(0.05)
        served = await _send_then_read(
            server, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        for _, writer in held[1:]:
            writer.close()
        return refused, served

    (refused, served), lines = asyncio.run(_with_server(client, max_connections=2))
    assert refused == b"" and served.startswith(b"HTTP/1.1 200 ")
    assert lines[0] == "- connection refused: 2 connections open"


def test_timeouts_and_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="idle_s must be a positive number"):
        Timeouts(idle_s=0)
    with pytest.raises(ValueError, match="max_connections must be at least 1"):
        MockServer(mock_model(), max_connections=0)


def test_a_head_request_gets_headers_only_and_the_connection_goes_on() -> None:
    # Claude Code's runtime (Bun) sends HEAD / first: our 404 body broke h11's framing and the
    # connection dropped with a traceback in the log.
    async def client(server: MockServer) -> bytes:
        return await _send_then_read(server, b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"
                                     b"HEAD /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
                                     b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close"
                                     b"\r\n\r\n")

    answer, lines = asyncio.run(_with_server(client))
    assert answer.startswith(b"HTTP/1.1 404 ") and answer.count(b"HTTP/1.1 200 ") == 2
    assert answer.count(b'"data"') == 1  # only the GET has a body
    assert lines == ["HEAD / 404 HEAD /: not found", "HEAD /v1/models 200", "GET /v1/models 200"]


def test_closing_the_server_ends_kept_alive_connections_at_once() -> None:
    # close() only cancelled the connection tasks; 3.11's wait_for can swallow a cancellation
    # that comes as a read completes, and close() then waited out the idle timeout (60 s).
    async def scenario() -> int:
        server = MockServer(mock_model(), speed=100.0, log=lambda _: None)
        await server.start("127.0.0.1", 0)
        held = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(20)]
        await asyncio.sleep(0.05)
        open_before = len(server._connections)
        await asyncio.wait_for(server.close(), timeout=10)
        for _, writer in held:
            writer.close()
        return open_before - len(server._connections)

    assert asyncio.run(scenario()) == 20

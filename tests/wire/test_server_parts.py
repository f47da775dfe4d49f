"""The server's parts on their own: request identity and endpoint admission across
connections (a FIFO queue, refusals, waiters that give up)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import pytest

from tests.helpers.server import mock_model, request
from toolturn.model.config import EndpointConfig
from toolturn.model.endpoint import Endpoint
from toolturn.model.response import Turn
from toolturn.wire import connection
from toolturn.wire.admission import AsyncEndpoint
from toolturn.wire.identity import (
    CLIENT_SESSION_HEADER,
    SESSION_HEADER,
    TURN_HEADER,
    TurnIdentities,
    session_id_from_header,
    turn_number,
)
from toolturn.wire.request_shape import request_problem
from toolturn.wire.server import MockServer

ASSISTANT = {"role": "assistant", "content": "ok"}
USER = {"role": "user", "content": "go on"}


def test_a_numeric_header_is_the_session_id_and_text_hashes_stably() -> None:
    assert session_id_from_header("42") == 42 == session_id_from_header(" 42 ")
    hashed = session_id_from_header("agent-b")
    assert hashed == session_id_from_header("agent-b") >= 2**63
    assert hashed != session_id_from_header("agent-c")
    assert session_id_from_header("٣") >= 2**63  # a non-ASCII digit is text, not a number


def turn(identities: TurnIdentities, session: str | None, messages: list[Any]) -> Turn:
    headers = {} if session is None else {SESSION_HEADER: session}
    return identities.turn_for(headers, {"messages": messages})


def test_turns_count_assistant_messages_and_attempts_count_repeats_from_one() -> None:
    identities = TurnIdentities()
    first = [USER]
    second = [USER, ASSISTANT, USER]
    assert turn(identities, "7", first) == Turn(7, 0, 1)
    assert turn(identities, "7", first) == Turn(7, 0, 2)
    assert turn(identities, "7", second) == Turn(7, 1, 1)
    assert turn(identities, "8", second) == Turn(8, 1, 1)


def test_a_turn_header_names_the_turn_instead_of_the_assistant_messages() -> None:
    identities = TurnIdentities()
    first = {"messages": [USER]}

    def with_turn(value: str) -> dict[str, str]:
        return {SESSION_HEADER: "7", TURN_HEADER: value}

    # The header counts turns from 1; the Turn holds the model's key, from 0 (turn 3: key 2).
    assert identities.turn_for(with_turn("3"), first) == Turn(7, 2, 1)
    assert turn_number(identities.turn_for(with_turn(" 3 "), first)) == 3
    assert identities.turn_for(with_turn("4"), first) == Turn(7, 3, 1)
    assert identities.turn_for(with_turn("later"), first) == Turn(7, 0, 1)  # not a number
    assert identities.turn_for(with_turn("0"), first) == Turn(7, 0, 2)  # no turn 0: the count
    assert identities.turn_for(with_turn("0"), {"messages": [USER, ASSISTANT, USER]}) == Turn(
        7, 1, 1)


def test_attempt_counts_are_kept_for_recent_sessions_and_latest_turns_only() -> None:
    identities = TurnIdentities(tracked_sessions=2)
    first, second = [USER], [USER, ASSISTANT, USER]
    assert turn(identities, "1", first) == Turn(1, 0, 1)
    assert turn(identities, "1", first) == Turn(1, 0, 2)
    assert turn(identities, "1", second) == Turn(1, 1, 1)
    assert turn(identities, "1", second) == Turn(1, 1, 2)
    assert turn(identities, "1", first) == Turn(1, 0, 1)  # an earlier turn starts again
    assert turn(identities, "1", first) == Turn(1, 0, 2)
    assert turn(identities, "2", first) == Turn(2, 0, 1)
    assert turn(identities, "1", first) == Turn(1, 0, 3)  # still tracked: 2 sessions fit
    assert turn(identities, "3", first) == Turn(3, 0, 1)  # forgets session 2, the oldest
    assert turn(identities, "2", first) == Turn(2, 0, 1)
    assert turn(identities, "3", first) == Turn(3, 0, 2)
    assert len(identities._attempts) == 2


def test_a_header_number_too_long_for_int_is_hashed_not_a_crash() -> None:
    # Python refuses int() of more than 4,300 digits: the server dropped the connection.
    long_number = "9" * 5000
    hashed = session_id_from_header(long_number)
    assert hashed == session_id_from_header(long_number) >= 2**63
    assert session_id_from_header(str(2**63 - 1)) == 2**63 - 1
    assert session_id_from_header(str(2**63)) >= 2**63  # hashed, not a plain id
    assert session_id_from_header("0" * 30) >= 2**63


def test_without_our_header_the_conversation_names_the_session() -> None:
    identities = TurnIdentities()
    client = {CLIENT_SESSION_HEADER: "c0ffee"}
    marked = {"role": "user", "content": [
        {"type": "text", "text": "go on", "cache_control": {"type": "ephemeral"}}]}
    plain = {"role": "user", "content": [{"type": "text", "text": "go on"}]}
    first = identities.turn_for(client, {"messages": [marked]})
    # The same conversation one turn on: the cache marker has moved off the first message.
    later = identities.turn_for(client, {"messages": [plain, ASSISTANT, USER]})
    assert first.session_id == later.session_id >= 2**63
    assert (first.turn_index, first.attempt, later.turn_index, later.attempt) == (0, 1, 1, 1)
    # A sub-agent of the same client session starts with another message: a session of its own.
    sub_agent = identities.turn_for(client, {"messages": [USER]})
    assert sub_agent.session_id != first.session_id
    other_client = identities.turn_for({CLIENT_SESSION_HEADER: "beef"}, {"messages": [marked]})
    assert other_client.session_id != first.session_id
    retry = identities.turn_for(client, {"messages": [marked]})
    assert retry == Turn(first.session_id, 0, 1)  # turn 0 again after turn 1: counted anew
    user = identities.turn_for({}, {"messages": [USER], "metadata": {"user_id": "u1"}})
    assert user.session_id != identities.turn_for({}, {"messages": [USER]}).session_id


def test_request_problems_are_worded_as_the_api_words_them() -> None:
    good: dict[str, Any] = {"model": "m", "max_tokens": 5, "messages": [USER]}
    assert request_problem(good) is None
    not_an_integer = "max_tokens: Input should be a valid integer"
    assert request_problem({**good, "max_tokens": True}) == not_an_integer
    assert request_problem({**good, "model": 3}) == "model: Input should be a valid string"
    assert request_problem({**good, "stream": "yes"}) == "stream: Input should be a valid boolean"
    assert request_problem({"max_tokens": 5, "messages": [USER]}) == "model: Field required"


def endpoint(**config: Any) -> AsyncEndpoint:
    return AsyncEndpoint(Endpoint(EndpointConfig.model_validate(config)))


def test_an_unlimited_endpoint_admits_everyone() -> None:
    async def scenario() -> list[bool]:
        shared = endpoint()
        return [await shared.acquire() for _ in range(100)]

    assert all(asyncio.run(scenario()))


def test_a_refusing_endpoint_refuses_beyond_capacity() -> None:
    async def scenario() -> tuple[list[bool], float, float]:
        shared = endpoint(capacity=2, overflow="refuse")
        taken = [await shared.acquire() for _ in range(3)]
        busy = shared.utilisation()
        shared.release()
        return [*taken, await shared.acquire()], busy, shared.utilisation_of_others()

    assert asyncio.run(scenario()) == ([True, True, False, True], 1.0, 0.5)


def test_a_queueing_endpoint_serves_in_arrival_order_and_lets_waiters_leave() -> None:
    async def scenario() -> tuple[list[str], int]:
        shared = endpoint(capacity=1, overflow="queue")
        order: list[str] = []
        assert await shared.acquire()

        async def wait(name: str) -> None:
            await shared.acquire()
            order.append(name)

        waiters = {name: asyncio.create_task(wait(name)) for name in "abc"}
        await asyncio.sleep(0)
        waiters["b"].cancel()  # b gives up while in line
        for _ in range(3):
            await asyncio.sleep(0)
            shared.release()
            await asyncio.sleep(0)
        await asyncio.gather(*waiters.values(), return_exceptions=True)
        return order, shared.in_flight

    assert asyncio.run(scenario()) == (["a", "c"], 0)


def test_a_waiter_cancelled_after_its_grant_gives_the_slot_back() -> None:
    async def scenario() -> int:
        shared = endpoint(capacity=1, overflow="queue")
        await shared.acquire()
        waiter = asyncio.create_task(shared.acquire())
        await asyncio.sleep(0)
        shared.release()  # granted, but the waiter is cancelled before it runs
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        return shared.in_flight

    assert asyncio.run(scenario()) == 0


def test_over_the_wire_a_full_endpoint_queues_requests_one_at_a_time() -> None:
    model = mock_model(latency={"ttft": {"kind": "fixed", "ms": 300}},
                       endpoint={"capacity": 1, "overflow": "queue"})

    async def scenario() -> tuple[list[int], int]:
        server = MockServer(model, speed=10.0, log=lambda line: None)
        await server.start("127.0.0.1", 0)
        seen: list[int] = []
        client = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="x", max_retries=0)

        async def one(index: int) -> None:
            await client.messages.create(**request(model))
            seen.append(server.in_flight)

        try:
            loop = asyncio.get_running_loop()
            started = loop.time()
            await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(3))), timeout=20)
            elapsed_ms = int((loop.time() - started) * 1000)
        finally:
            await client.close()
            await server.close()
        return seen, elapsed_ms

    in_flight, elapsed_ms = asyncio.run(scenario())
    # Each answer left one request in flight at most (the next in line), and three first
    # tokens of 30 ms each were served one after another.
    assert all(count <= 1 for count in in_flight)
    assert elapsed_ms >= 90


async def raw_exchange(server: MockServer, data: bytes) -> bytes:
    """Send `data` on a fresh connection; everything the server writes until it closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(data)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), timeout=10)
    writer.close()
    return answer


def exchange(data: bytes) -> tuple[bytes, list[str]]:
    lines: list[str] = []

    async def scenario() -> bytes:
        server = MockServer(mock_model(), speed=100.0, log=lines.append)
        await server.start("127.0.0.1", 0)
        try:
            return await raw_exchange(server, data)
        finally:
            await server.close()

    return asyncio.run(scenario()), lines


def test_a_request_that_is_not_http_gets_a_400_and_the_connection_closes() -> None:
    answer, lines = exchange(b"HELLO THERE\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ") and b'"type":"invalid_request_error"' in answer
    assert len(lines) == 1 and lines[0].startswith("- 400 ")


def test_a_client_expecting_100_continue_is_told_to_go_on() -> None:
    model = mock_model()
    body = json.dumps(request(model)).encode()
    head = (f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n")
    answer, _ = exchange(head.encode() + body)
    assert answer.startswith(b"HTTP/1.1 100 ")
    assert b"HTTP/1.1 200 " in answer and b'"stop_reason":"tool_use"' in answer


def test_a_body_beyond_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "MAX_BODY_BYTES", 64)
    body = b"x" * 65
    head = f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    answer, lines = exchange(head.encode() + body)
    assert answer.startswith(b"HTTP/1.1 413 ") and b"larger than 64 bytes" in answer
    assert lines == ["- 413 request body larger than 64 bytes"]


def test_status_lines_carry_reason_phrases() -> None:
    assert connection.reason_phrase(200) == "OK" and connection.reason_phrase(529) == "Overloaded"
    assert connection.reason_phrase(599) == ""
    answer, _ = exchange(b"GET /v1/files HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 404 Not Found\r\n")

"""The live driver: `ToolTurnLoop` run with asyncio over the official SDK against `toolturn serve`'s
server on loopback, with simulated and hand-written async tools. Every test starts its own
server on a free port, bounds its run in time, and stops the server."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anthropic
import pytest

from tests.helpers.model_support import SPECS
from tests.helpers.server import mock_model
from toolturn.live import (
    LiveCall,
    LiveTool,
    SessionResult,
    ToolError,
    run_session,
    simulated_tools,
)
from toolturn.live.sdk_errors import error_event, retry_after_ns
from toolturn.live.session import NO_ASKER
from toolturn.model.model import MockModel
from toolturn.runtime.commands import CancelTool, Command, StartTool, ToolProgress
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.outcomes import SyntheticCause
from toolturn.runtime.permission import PermissionDecision
from toolturn.runtime.record import Retry
from toolturn.runtime.repair import check_pairing
from toolturn.runtime.results import ToolContent
from toolturn.runtime.retry import RetrySettings
from toolturn.runtime.tooldef import ToolDefinition
from toolturn.wire.identity import SESSION_HEADER
from toolturn.wire.server import MockServer

SPEED = 200.0
SEED = 7
QUICK_TOOLS = ("Read", "Grep", "Glob", "Bash")  # no hangs, short at SPEED
DEFINITIONS = [SPECS[name].definition() for name in QUICK_TOOLS]
FAST_RETRY = RetrySettings(max_retries=3, initial_delay_ns=1_000_000, max_delay_ns=4_000_000)
# A bound on any one test's run: far above what it needs, low enough to fail instead of hang.
TIMEOUT_S = 30

T = TypeVar("T")


def run(work: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(work(), timeout=TIMEOUT_S)

    return asyncio.run(bounded())


@asynccontextmanager
async def serving(model: MockModel, speed: float = SPEED) -> AsyncIterator[
        tuple[MockServer, anthropic.AsyncAnthropic]]:
    server = MockServer(model, speed=speed, log=lambda line: None)
    await server.start("127.0.0.1", 0)
    client = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="x", max_retries=0,
                                      timeout=TIMEOUT_S)
    try:
        yield server, client
    finally:
        await client.close()
        await server.close()


def generated(turns: int, **extra: Any) -> dict[str, Any]:
    """A generated script whose sessions call quick tools for `turns - 1` turns, then answer."""
    return {"kind": "generated", "end_probability": 0.0, "max_turns": turns,
            "tool_mix": dict.fromkeys(QUICK_TOOLS, 1.0),
            "tool_calls": {"kind": "uniform", "low": 1, "high": 3},
            "final_text_tokens": {"kind": "fixed", "n": 20}, **extra}


def explicit(*responses: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": "explicit", "responses": [{"blocks": blocks} for blocks in responses]}


def call(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": tool_input}


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def assert_legal(result: SessionResult) -> None:
    """The transcript pairs every call with one result and alternates roles."""
    assert check_pairing(result.messages) == []
    roles = [message["role"] for message in result.messages]
    assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2)


def results_of(result: SessionResult) -> list[dict[str, Any]]:
    return [block for message in result.messages if message["role"] == "user"
            for block in message["content"] if block.get("type") == "tool_result"]


def hanging_tool(cancelled: list[str]) -> LiveTool:
    """A tool that never finishes by itself; notes the id of each call cancelled."""

    async def hangs(live: LiveCall) -> ToolContent:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(live.tool_use_id)
            raise
        raise AssertionError("unreachable")

    return hangs


def test_a_multi_turn_session_with_simulated_tools_ends_legal() -> None:
    model = mock_model(script=generated(4))
    started: list[str] = []

    def observe(command: Command, now_ns: int) -> None:
        if isinstance(command, StartTool):
            started.append(command.tool_use_id)

    async def session() -> tuple[SessionResult, ToolTurnLoop]:
        async with serving(model) as (_, client):
            loop = ToolTurnLoop(DEFINITIONS, model=model.name, max_turns=10)
            tools = simulated_tools([SPECS[name] for name in QUICK_TOOLS], SEED, session=1,
                                    speed=SPEED)
            result = await run_session(client, loop, "Fix the failing test.", tools,
                                       headers={SESSION_HEADER: "1"}, observer=observe)
            return result, loop

    result, loop = run(session)
    assert result.reason == "end_turn"
    assert [turn.stop_reason for turn in result.turns] == ["tool_use"] * 3 + ["end_turn"]
    assert result.requests == 4 and result.failures == ()
    assert_legal(result)
    assert loop.repairs == []
    # Every started call has its result (a failing Bash may cancel siblings before they start).
    answered = [block["tool_use_id"] for block in results_of(result)]
    assert started and set(started) <= set(answered) and len(set(answered)) == len(answered)
    assert 0 < result.elapsed_ns


def test_twenty_concurrent_sessions_survive_faults_and_end_legal() -> None:
    model = mock_model(
        script=generated(3),
        endpoint={"capacity": 8, "overflow": "queue"},
        faults={"http_529": 0.1, "http_429": 0.1, "error_overloaded": 0.05,
                "cut_mid_tool_json": 0.05, "cut_after_tool_use_stop": 0.05,
                "malformed_tool_json": 0.05, "retry_after_ms": 100},
    )
    specs = [SPECS[name] for name in QUICK_TOOLS]

    async def load() -> tuple[list[SessionResult], int]:
        async with serving(model) as (server, client):
            async def one(session: int) -> SessionResult:
                loop = ToolTurnLoop(DEFINITIONS, model=model.name, retry=FAST_RETRY)
                return await run_session(
                    client, loop, "go", simulated_tools(specs, SEED, session=session, speed=SPEED),
                    headers={SESSION_HEADER: str(session)},
                )

            results = await asyncio.gather(*(one(session) for session in range(20)))
            return results, server.in_flight

    results, in_flight = run(load)
    assert in_flight == 0
    for result in results:
        assert_legal(result)
        assert result.reason in {"end_turn", "stream_error", "request_failed"}
    failures = [failure for result in results for failure in result.failures]
    assert any(failure.startswith("http ") for failure in failures)
    assert any(result.reason == "end_turn" for result in results)


def test_a_stream_cut_after_a_started_tool_cancels_its_task() -> None:
    model = mock_model(script=explicit([call("Bash", {"command": "make test"})]),
                       faults={"cut_after_tool_use_stop": 1.0})
    cancelled: list[str] = []
    commands: list[Command] = []

    hangs = hanging_tool(cancelled)

    async def session() -> SessionResult:
        async with serving(model) as (_, client):
            loop = ToolTurnLoop(DEFINITIONS, model=model.name)
            return await run_session(client, loop, "run the tests", {"Bash": hangs},
                                     observer=lambda command, now: commands.append(command))

    result = run(session)
    assert result.reason == "stream_error" and result.failures == ("stream cut",)
    [cancel] = [command for command in commands if isinstance(command, CancelTool)]
    assert cancel.reason is SyntheticCause.STREAM_ERROR and cancelled == [cancel.tool_use_id]
    [synthetic] = results_of(result)
    assert synthetic["is_error"] and "stream broke off" in synthetic["content"]
    assert_legal(result)


def test_returns_tool_errors_crashes_and_missing_tools_become_results() -> None:
    model = mock_model(script=explicit(
        [call("Read", {"file_path": "/a"}), call("Grep", {"pattern": "x"}),
         call("Glob", {"pattern": "*"}), call("Bash", {"command": "ls"})],
        [text("All done.")],
    ))
    progress: list[Any] = []

    async def read(live: LiveCall) -> ToolContent:
        live.progress("halfway")
        return f"contents of {live.input['file_path']}"

    async def grep(live: LiveCall) -> ToolContent:
        raise ToolError("grep: bad pattern")

    async def glob(live: LiveCall) -> ToolContent:
        raise ValueError("disk on fire")

    def observe(command: Command, now_ns: int) -> None:
        if isinstance(command, ToolProgress):
            progress.append(command.progress)

    async def session() -> SessionResult:
        async with serving(model) as (_, client):
            loop = ToolTurnLoop(DEFINITIONS, model=model.name)
            return await run_session(client, loop, "look around",
                                     {"Read": read, "Grep": grep, "Glob": glob}, observer=observe)

    result = run(session)
    assert result.reason == "end_turn" and progress == ["halfway"]
    read_result, grep_result, glob_result, bash_result = results_of(result)
    assert read_result["content"] == "contents of /a" and "is_error" not in read_result
    assert grep_result["content"] == "grep: bad pattern" and grep_result["is_error"]
    assert "ValueError: disk on fire" in glob_result["content"] and glob_result["is_error"]
    assert "no implementation of 'Bash'" in bash_result["content"] and bash_result["is_error"]
    assert_legal(result)


@pytest.mark.parametrize(("answer", "wording"), [
    (None, NO_ASKER),
    ((False, "not in this repo"), "not in this repo"),
    ((True, None), "edited"),
])
def test_permission_is_asked_of_the_given_asker(
    answer: tuple[bool, str | None] | None, wording: str
) -> None:
    model = mock_model(script=explicit([call("Read", {"file_path": "/a"})], [text("Ok.")]))
    asked: list[tuple[str, dict[str, Any]]] = []

    async def ask(name: str, tool_input: dict[str, Any]) -> tuple[bool, str | None]:
        asked.append((name, tool_input))
        assert answer is not None
        return answer

    async def read(live: LiveCall) -> ToolContent:
        return "edited"

    def always_ask(tool: ToolDefinition, tool_input: Mapping[str, Any]) -> PermissionDecision:
        return PermissionDecision.ASK

    async def session() -> SessionResult:
        async with serving(model) as (_, client):
            loop = ToolTurnLoop(DEFINITIONS, model=model.name, permission=always_ask)
            return await run_session(client, loop, "read a", {"Read": read},
                                     ask_permission=None if answer is None else ask)

    result = run(session)
    [only] = results_of(result)
    assert wording in only["content"]
    assert asked == ([] if answer is None else [("Read", {"file_path": "/a"})])


def test_rate_limits_are_retried_after_the_servers_retry_after() -> None:
    model = mock_model(faults={"http_429": 1.0, "retry_after_ms": 1000})

    async def session() -> tuple[SessionResult, ToolTurnLoop]:
        async with serving(model, speed=100.0) as (_, client):
            loop = ToolTurnLoop(DEFINITIONS, model=model.name, retry=FAST_RETRY)
            return await run_session(client, loop, "hi", {}), loop

    result, loop = run(session)
    assert result.reason == "request_failed" and result.requests == 4
    assert result.failures == ("http 429",) * 4
    assert [entry.delay_ns for entry in loop.record.of_kind(Retry)] == [10_000_000] * 3


def test_overloaded_error_events_lead_to_the_fallback_model() -> None:
    model = mock_model(name="sim-primary", profile="sonnet",
                       script=explicit([text("Hello there.")]),
                       faults={"error_overloaded": 1.0, "fallback": "haiku"})

    async def session() -> SessionResult:
        async with serving(model) as (_, client):
            loop = ToolTurnLoop(DEFINITIONS, model=model.name, retry=FAST_RETRY,
                                fallback_model=model.fallback_name, fallback_after=2)
            return await run_session(client, loop, "hi", {})

    result = run(session)
    assert result.reason == "end_turn" and result.requests == 3
    assert result.failures == ("error event overloaded_error",) * 2
    assert result.messages[-1]["content"] == [text("Hello there.")]


def test_a_server_that_is_not_there_is_a_connection_failure() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there

    async def session() -> SessionResult:
        client = anthropic.AsyncAnthropic(base_url=f"http://127.0.0.1:{port}", api_key="x",
                                          max_retries=0)
        try:
            loop = ToolTurnLoop(DEFINITIONS, model="m", retry=FAST_RETRY)
            return await run_session(client, loop, "hi", {})
        finally:
            await client.close()

    result = run(session)
    assert result.reason == "request_failed" and result.failures == ("connection error",) * 4


def test_a_client_that_retries_by_itself_is_refused() -> None:
    async def session() -> None:
        client = anthropic.AsyncAnthropic(base_url="http://127.0.0.1:1", api_key="x")
        try:
            await run_session(client, ToolTurnLoop(DEFINITIONS, model="m"), "hi", {})
        finally:
            await client.close()

    with pytest.raises(ValueError, match="max_retries=0"):
        run(session)


def test_retry_after_headers_in_ns() -> None:
    assert retry_after_ns({"retry-after-ms": "250", "retry-after": "1"}) == 250_000_000
    assert retry_after_ns({"retry-after": "2"}) == 2_000_000_000
    assert retry_after_ns({"retry-after": "1.5"}) == 1_500_000_000
    assert retry_after_ns({"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}) is None
    assert retry_after_ns({}) is None


def test_an_unreadable_error_event_becomes_an_api_error_event() -> None:
    import httpx2

    response = httpx2.Response(200, request=httpx2.Request("POST", "http://x/v1/messages"))
    readable = anthropic.APIStatusError(
        "x", response=response, body={"type": "error", "error": {"type": "overloaded_error"}})
    unreadable = anthropic.APIStatusError("garbage", response=response, body="garbage")
    assert error_event(readable) == {"type": "error", "error": {"type": "overloaded_error"}}
    assert error_event(unreadable) == {"type": "error",
                                       "error": {"type": "api_error", "message": "garbage"}}


def test_a_second_prompt_to_the_same_loop_keeps_one_clock() -> None:
    model = mock_model(script=explicit([text("First answer.")], [text("Second answer.")]))

    async def two_prompts() -> tuple[SessionResult, SessionResult, ToolTurnLoop]:
        async with serving(model) as (_, client):
            loop = ToolTurnLoop(DEFINITIONS, model=model.name)
            first = await run_session(client, loop, "one", {})
            second = await run_session(client, loop, "two", {}, origin_ns=first.origin_ns)
            return first, second, loop

    first, second, loop = run(two_prompts)
    assert (first.reason, second.reason) == ("end_turn", "end_turn")
    assert second.origin_ns == first.origin_ns and second.elapsed_ns > first.elapsed_ns
    times = [entry.time_ns for entry in loop.record.entries]
    assert times == sorted(times)
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user", "assistant"]


def test_a_tool_past_the_timeout_is_cancelled_and_ends_as_an_error() -> None:
    model = mock_model(script=explicit(
        [call("Read", {"file_path": "/a"}), call("Grep", {"pattern": "x"})],
        [text("Moving on.")],
    ))
    cancelled: list[str] = []

    hangs = hanging_tool(cancelled)

    async def times_out_by_itself(live: LiveCall) -> ToolContent:
        raise TimeoutError("upstream took too long")

    async def session() -> SessionResult:
        async with serving(model) as (_, client):
            loop = ToolTurnLoop(DEFINITIONS, model=model.name)
            return await run_session(client, loop, "run it",
                                     {"Read": hangs, "Grep": times_out_by_itself},
                                     tool_timeout_ns=50_000_000)

    result = run(session)
    assert result.reason == "end_turn"
    read, grep = results_of(result)
    assert read["is_error"] and read["content"] == "Error: tool 'Read' timed out after 0.05 s."
    assert cancelled == [read["tool_use_id"]]
    # A tool that raises TimeoutError itself crashed; the driver's timeout did not fire.
    assert grep["is_error"]
    assert grep["content"] == (
        "Error: tool 'Grep' raised an exception: TimeoutError: upstream took too long"
    )
    assert_legal(result)


def test_the_tool_timeout_must_be_positive() -> None:
    async def session() -> SessionResult:
        client = anthropic.AsyncAnthropic(base_url="http://127.0.0.1:9", api_key="x",
                                          max_retries=0)
        loop = ToolTurnLoop(DEFINITIONS, model="m")
        return await run_session(client, loop, "go", {}, tool_timeout_ns=0)

    with pytest.raises(ValueError, match="tool_timeout_ns must be positive"):
        run(session)

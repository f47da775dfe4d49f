"""How an agent's failures end its session and never the run (toolturn/agents/arm.py rule 2):
real I/O refused in virtual time, a CancelledError or SystemExit of its own, a multi-line
message; each an `agent_error` with its type and message in the sessions table, one line on
stderr, exit 0."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.agents.test_agents_run import sdk_agent
from tests.helpers.scenarios import TINY
from toolturn.agents import AgentSession
from toolturn.cli import main

HERE = "tests.agents.test_agent_failures"
# The loopback server the socket agent reaches (`server`), by port.
SERVER_PORT: list[int] = []


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


@pytest.fixture
def server() -> Iterator[int]:
    """A loopback server that answers after 50 ms of real time, as a slow API would."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)
    port = listener.getsockname()[1]

    def answer() -> None:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            time.sleep(0.05)
            connection.sendall(b"hello\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    SERVER_PORT[:] = [port]
    yield port
    listener.close()
    thread.join(5)


async def socket_agent(session: AgentSession) -> None:
    if session.session_id == 1:
        reader, _ = await asyncio.open_connection("127.0.0.1", SERVER_PORT[0])
        await asyncio.wait_for(reader.readline(), 10)
    await sdk_agent(session)


async def swallowing_socket_agent(session: AgentSession) -> None:
    """Catches the refusal and goes on: the session still ends `agent_error`."""
    if session.session_id == 1:
        try:
            await asyncio.open_connection("127.0.0.1", SERVER_PORT[0])
        except Exception:  # what a careless agent does
            pass
    await sdk_agent(session)


async def cancelling_agent(session: AgentSession) -> None:
    if session.session_id == 1:
        raise asyncio.CancelledError  # no interrupt asked for it
    await sdk_agent(session)


async def exiting_agent(session: AgentSession) -> None:
    if session.session_id == 1:
        raise SystemExit(3)
    await sdk_agent(session)


async def multi_line_agent(session: AgentSession) -> None:
    if session.session_id == 1:
        raise ValueError("first line\nsecond line\x1b[31m")
    await sdk_agent(session)


def _run(scenario: Path, out: Path, agent: str) -> int:
    return main(["run", str(scenario), "--agent", agent, "--out", str(out), "--no-report",
                 "--quiet"])


def _errors(out: Path, policy: str) -> list[tuple[str, str | None, str | None]]:
    rows = pq.read_table(out / "sessions.parquet", columns=[
        "policy", "outcome", "error_type", "error_message"]).to_pylist()
    return [(row["outcome"], row["error_type"], row["error_message"]) for row in rows
            if row["policy"] == policy]


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "session 1:" in line]


@pytest.mark.parametrize("agent", ["socket_agent", "swallowing_socket_agent"])
def test_real_network_io_is_refused_and_ends_the_session(
    tiny: Path, tmp_path: Path, server: int, capsys: pytest.CaptureFixture[str], agent: str
) -> None:
    assert _run(tiny, tmp_path / "run", f"{HERE}:{agent}") == 0
    (first, (outcome, kind, message), third) = _errors(tmp_path / "run", f"agent:{HERE}:{agent}")
    assert first[0] == third[0] == "completed"
    assert (outcome, kind) == ("agent_error", "RealIORefused")
    assert message is not None and message.startswith("loop.create_connection: real I/O is "
                                                      "refused in virtual time")
    (line,) = _error_lines(capsys.readouterr().err)
    assert line.startswith(f"toolturn run: agent:{HERE}:{agent}: session 1: RealIORefused: "
                           "loop.create_connection")


@pytest.mark.parametrize(("agent", "kind", "message"), [
    ("cancelling_agent", "CancelledError",
     "the agent raised CancelledError itself (no interrupt)"),
    ("exiting_agent", "SystemExit", "3"),
    ("multi_line_agent", "ValueError", "first line\nsecond line\x1b[31m"),
])
def test_an_agents_own_cancel_exit_or_long_message_is_its_sessions_error(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, kind: str,
    message: str,
) -> None:
    assert _run(tiny, tmp_path / "run", f"{HERE}:{agent}") == 0  # the run went on, folder and all
    assert _errors(tmp_path / "run", f"agent:{HERE}:{agent}") == [
        ("completed", None, None), ("agent_error", kind, message), ("completed", None, None)]
    (line,) = _error_lines(capsys.readouterr().err)  # one line, whatever the message held
    assert line.isprintable()
    assert line.endswith(f"session 1: {kind}: " + message.replace("\n", "\\n")
                         .replace("\x1b", "\\x1b"))


def test_the_refusal_is_said_by_the_loop_itself() -> None:
    from toolturn.agents.virtual_loop import RealIORefused, refused_io_hook, run_virtual

    told: list[str] = []

    async def main_() -> Any:
        refused_io_hook.set(told.append)
        loop = asyncio.get_running_loop()
        for call in (lambda: asyncio.open_connection("127.0.0.1", 9),
                     lambda: loop.getaddrinfo("localhost", 80),
                     lambda: asyncio.create_subprocess_exec("true")):
            with pytest.raises(RealIORefused):
                await call()
        return None

    run_virtual(main_())
    assert [text.split(":")[0] for text in told] == [
        "loop.create_connection", "loop.getaddrinfo", "loop.subprocess_exec"]

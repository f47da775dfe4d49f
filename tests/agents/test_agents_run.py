"""`toolturn run --agent MODULE:FUNCTION` (toolturn/agents/): a user's asyncio agent as an arm
beside the policies, deterministic by seed; an agent's exception ends its session, not the
run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.helpers.scenarios import TINY
from toolturn.agents import AgentSession
from toolturn.cli import main
from toolturn.metrics.schema import TABLES

HERE = "tests.agents.test_agents_run"


async def sdk_agent(session: AgentSession) -> None:
    """A plain agent on the official SDK: stream, run the calls concurrently, send the results."""
    await sdk_agent_on(session, session.prompts())


async def failing_agent(session: AgentSession) -> None:
    if session.session_id == 1:
        raise ValueError("the agent broke")
    await sdk_agent(session)


def not_async(session: AgentSession) -> None:
    """Not an agent: a plain function."""


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def _run(scenario: Path, out: Path, agent: str) -> int:
    return main(["run", str(scenario), "--agent", agent, "--out", str(out), "--no-report",
                 "--quiet"])


def test_the_agent_arm_sits_beside_the_policies_and_repeats_bit_for_bit(
    tiny: Path, tmp_path: Path
) -> None:
    for side in ("a", "b"):
        assert _run(tiny, tmp_path / side / "run", f"{HERE}:sdk_agent") == 0
    for spec in TABLES:
        name = f"{spec.name}.parquet"
        assert (tmp_path / "a" / "run" / name).read_bytes() == (
            tmp_path / "b" / "run" / name).read_bytes(), name
    sessions = pq.read_table(tmp_path / "a" / "run" / "sessions.parquet").to_pandas()
    arm = f"agent:{HERE}:sdk_agent"
    assert set(sessions["policy"]) == {"streaming", "serial", arm}
    mine = sessions[sessions["policy"] == arm]
    assert list(mine["outcome"]) == ["completed"] * 3
    assert sessions["error_type"].isna().all() and sessions["error_message"].isna().all()
    turns = pq.read_table(tmp_path / "a" / "run" / "turns.parquet").to_pandas()
    agent_turns = turns[turns["policy"] == arm]
    # The scripted model: two turns of tool calls then the answer, per prompt.
    assert (agent_turns["ttfts_ns"].notna()).sum() > 0
    assert set(agent_turns["outcome"]) == {"completed"}
    tools = pq.read_table(tmp_path / "a" / "run" / "tools.parquet").to_pandas()
    assert (tools[tools["policy"] == arm]["outcome"] == "success").sum() > 0


def test_an_exception_ends_its_session_and_the_run_goes_on(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(tiny, tmp_path / "run", f"{HERE}:failing_agent") == 0
    sessions = pq.read_table(tmp_path / "run" / "sessions.parquet").to_pandas()
    mine = sessions[sessions["policy"] == f"agent:{HERE}:failing_agent"]
    assert list(mine["outcome"]) == ["completed", "agent_error", "completed"]
    errors = [line for line in capsys.readouterr().err.splitlines() if "agent_error" in line
              or "ValueError" in line]
    assert errors == [f"toolturn run: agent:{HERE}:failing_agent: session 1: "
                      "ValueError: the agent broke"]
    # The exception's type and message, in the sessions table; null for every other session.
    errors_of = pq.read_table(tmp_path / "run" / "sessions.parquet",
                              columns=["policy", "error_type", "error_message"]).to_pylist()
    assert [(row["error_type"], row["error_message"]) for row in errors_of
            if row["policy"] == f"agent:{HERE}:failing_agent"] == [
        (None, None), ("ValueError", "the agent broke"), (None, None)]
    assert sessions[sessions["policy"] != f"agent:{HERE}:failing_agent"]["error_type"].isna().all()


@pytest.mark.parametrize(("agent", "message"), [
    ("no_colon", "expected MODULE:FUNCTION"),
    ("no_such_module_here:agent", "cannot import no_such_module_here"),
    (f"{HERE}:missing", "has no missing"),
    (f"{HERE}:not_async", "is not an async def"),
])
def test_a_bad_agent_is_refused_before_simulating(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, message: str
) -> None:
    assert _run(tiny, tmp_path / "run", agent) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


async def interruptible_agent(session: AgentSession) -> None:
    """`sdk_agent`'s turns, each prompt's work cancellable by the user's Esc: an interrupted
    prompt is dropped (with its transcript) and the next one goes on."""
    async for prompt in session.prompts():
        await session.interruptible(_one_prompt(session, prompt))


async def _one_prompt(session: AgentSession, prompt: str) -> None:
    async def prompts() -> Any:
        yield prompt

    await sdk_agent_on(session, prompts())


async def sdk_agent_on(session: AgentSession, prompts: Any) -> None:
    messages: list[dict[str, Any]] = []
    async for prompt in prompts:
        messages.append({"role": "user", "content": prompt})
        while True:
            async with session.client.messages.stream(
                model=session.model_name, max_tokens=4096, messages=messages, tools=session.tools,
            ) as stream:
                message = await stream.get_final_message()
            messages.append({"role": "assistant",
                             "content": [b.model_dump(exclude_none=True) for b in message.content]})
            if message.stop_reason != "tool_use":
                break
            calls = [block for block in message.content if block.type == "tool_use"]
            results = await asyncio.gather(*(
                session.call_tool(call.name, call.input, tool_use_id=call.id) for call in calls
            ))
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call.id, "content": result.content,
                 "is_error": result.is_error} for call, result in zip(calls, results, strict=True)
            ]})


async def stuck_agent(session: AgentSession) -> None:
    if session.session_id == 0:
        await asyncio.Event().wait()  # waits for nothing that will ever happen
    await sdk_agent(session)


def _sessions(out: Path, policy: str) -> Any:
    sessions = pq.read_table(out / "sessions.parquet").to_pandas()
    return sessions[sessions["policy"] == policy]


def test_interrupts_cancel_the_agents_task(tmp_path: Path) -> None:
    # interrupt_storm: half of the turns interrupted, while streaming or while tools run.
    naive, careful = f"{HERE}:sdk_agent", f"{HERE}:interruptible_agent"
    for agent, out in ((naive, tmp_path / "naive"), (careful, tmp_path / "careful")):
        assert main(["run", "interrupt_storm", "--sessions", "6", "--policy", "streaming",
                     "--agent", agent, "--out", str(out), "--no-report", "--quiet"]) == 0
    plain = _sessions(tmp_path / "naive", f"agent:{naive}")
    assert (plain["outcome"] == "interrupted").sum() > 0  # the CancelledError ended agent()
    assert (plain[plain["outcome"] == "interrupted"]["n_interrupts"] == 1).all()
    handled = _sessions(tmp_path / "careful", f"agent:{careful}")
    assert set(handled["outcome"]) <= {"completed", "agent_error"}
    assert handled["n_interrupts"].sum() > 0  # interrupted prompts, and the sessions went on


def test_a_session_waiting_for_nothing_ends_as_an_agent_error(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(tiny, tmp_path / "run", f"{HERE}:stuck_agent") == 0
    mine = _sessions(tmp_path / "run", f"agent:{HERE}:stuck_agent")
    assert list(mine["outcome"]) == ["agent_error", "completed", "completed"]
    assert "session 0: VirtualStall" in capsys.readouterr().err


async def slow_agent(session: AgentSession) -> None:
    if session.session_id % 2:
        await asyncio.sleep(10_000)  # far past the horizon
    await sdk_agent(session)


def test_sessions_running_at_the_horizon_are_cut_there(tmp_path: Path) -> None:
    scenario = tmp_path / "open.toml"
    scenario.write_text(TINY.replace('mode = "closed"', 'mode = "open"\narrival_rate_per_s = 1.0\n'
                                     'horizon_s = 600').replace("concurrency = 2\n", ""))
    out = tmp_path / "run"
    assert _run(scenario, out, f"{HERE}:slow_agent") == 0
    mine = _sessions(out, f"agent:{HERE}:slow_agent")
    assert list(mine["outcome"]) == ["completed", "horizon", "completed"]
    assert mine["end_ns"].isna().tolist() == [False, True, False]

"""Session crashes played on an agent (toolturn/agents/crashes.py, arm.py rule 5): under
`resume_storm` the agent's task is cancelled at the simulator's drawn point and `agent(session)`
runs again for the rest of the session after the restart delay; the tables count it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.agents.test_agents_run import sdk_agent_on
from toolturn.agents import AgentSession
from toolturn.agents.crashes import CONTINUE_TEXT
from toolturn.cli import main

HERE = "tests.agents.test_agent_crashes"
# What each session's agent was called with: (session, restarts, first prompt), in order.
CALLS: list[tuple[int, int, str]] = []


async def noting_agent(session: AgentSession) -> None:
    """`sdk_agent`, noting each call; it persists nothing, so a restart begins afresh."""
    prompts = session.prompts()
    first = await anext(prompts)
    CALLS.append((session.session_id, session.restarts, first))

    async def again() -> Any:
        yield first
        async for prompt in prompts:
            yield prompt

    await sdk_agent_on(session, again())


def _run(out: Path, agent: str) -> int:
    return main(["run", "resume_storm", "--sessions", "8", "--policy", "streaming", "--agent",
                 agent, "--out", str(out), "--no-report", "--quiet"])


def test_crashes_are_played_as_real_crashes_and_counted(tmp_path: Path) -> None:
    CALLS.clear()
    assert _run(tmp_path / "a" / "run", f"{HERE}:noting_agent") == 0
    policy = f"agent:{HERE}:noting_agent"
    turns = pq.read_table(tmp_path / "a" / "run" / "turns.parquet").to_pandas()
    mine = turns[turns["policy"] == policy]
    crashed = mine[mine["outcome"] == "crash"]
    assert len(crashed) > 0
    # Each crash restarted its session's agent, which began with the resume's text.
    restarts = [call for call in CALLS if call[1] > 0]
    assert len(restarts) == len(crashed)
    assert {first for _, _, first in restarts} == {CONTINUE_TEXT}
    # The turns go on past a crash: the turn after a crashed one is the next number, and its
    # first request comes after the restart delay (2 to 10 s).
    for row in crashed.itertuples():
        after = mine[(mine["session_id"] == row.session_id)
                     & (mine["turn_index"] == row.turn_index + 1)]
        assert len(after) == 1
        wait_ns = int(after["request_sent_ns"].iloc[0]) - row.turn_end_ns
        assert 2_000_000_000 <= wait_ns
    sessions = pq.read_table(tmp_path / "a" / "run" / "sessions.parquet").to_pandas()
    ours = sessions[sessions["policy"] == policy]
    counted = mine.groupby("session_id")["turn_index"].agg(["count", "max"])
    assert (counted["count"] == counted["max"]).all()  # turns 1..n, none merged across a crash
    assert ours.set_index("session_id")["n_turns"].to_dict() == counted["count"].to_dict()
    assert set(ours["outcome"]) <= {"completed", "agent_error"}
    # The same scenario, seed and agent: the same tables, bit for bit.
    assert _run(tmp_path / "b" / "run", f"{HERE}:noting_agent") == 0
    for name in ("turns", "sessions", "tools", "requests"):
        assert (tmp_path / "a" / "run" / f"{name}.parquet").read_bytes() == (
            tmp_path / "b" / "run" / f"{name}.parquet").read_bytes(), name


def test_an_agent_without_crashes_in_its_scenario_is_never_restarted(tmp_path: Path) -> None:
    assert main(["run", "default", "--sessions", "3", "--policy", "streaming", "--agent",
                 "tests.agents.test_agents_run:sdk_agent", "--out", str(tmp_path / "run"),
                 "--no-report", "--quiet"]) == 0
    turns = pq.read_table(tmp_path / "run" / "turns.parquet").to_pandas()
    assert "crash" not in set(turns["outcome"])

"""The simulated user in a live session: the same `SimulatedUser` as the simulator's, its
interrupts, attachments and permission answers carried out by the live driver in real time."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import anthropic

from tests.helpers.engine_runs import dict_rows
from toolturn.engine.draws import SessionDraws
from toolturn.engine.loop_factory import LoopFactory
from toolturn.engine.recorder import record_session
from toolturn.engine.simulation import simulate
from toolturn.live.simulated_tools import simulated_tools
from toolturn.live.user_session import LiveSession, run_user_session
from toolturn.metrics.row_columns import Rows, empty_rows
from toolturn.model.model import MockModel
from toolturn.model.tool_inputs import tool_inputs
from toolturn.runtime.commands import AskPermission
from toolturn.runtime.loop import INTERRUPT_TEXT
from toolturn.runtime.record import Interrupt
from toolturn.scenario.loader import load_scenario
from toolturn.user import PermissionAnswer, SimulatedUser, permission_answer
from toolturn.wire.server import MockServer

# Slow enough that a loaded machine's scheduling jitter (a few ms) is unlikely to move an
# interrupt or a refusal past a tool's end: at 50x, a 50 ms refusal was 1 ms of real time, and
# the twin test failed now and then under load.
SPEED = 10.0
# Every turn interrupted once its tools have run 300 ms; notifications every ~10 ms of tool
# time; Read asks the user, who refuses after 50 ms; Grep runs long enough to be interrupted.
USERFUL = """
name = "user"
seed = 11
[load]
mode = "closed"
sessions = 1
concurrency = 1
[session]
user_prompts = { kind = "fixed", n = 2 }
think_time = { kind = "fixed", ms = 200 }
[session.interrupts]
probability = 1.0
phase = { tools = 1 }
after = { kind = "fixed", ms = 300 }
[session.attachments]
notification = 100
[runtime]
policies = ["streaming"]
max_turns_per_prompt = 3
[model]
profile = "haiku"
[model.script]
kind = "generated"
end_probability = 0.0
tool_calls = { kind = "fixed", n = 2 }
tool_mix = { Read = 1, Grep = 1 }
final_text_tokens = { kind = "fixed", n = 10 }
[tools.override.Read]
permission = { mode = "ask", decision_delay = { kind = "fixed", ms = 50 }, deny_probability = 1.0 }
[tools.override.Grep]
duration = { kind = "fixed", ms = 2000 }
"""


def run_user(tmp_path: Path) -> tuple[LiveSession, SimulatedUser]:
    path = tmp_path / "user.toml"
    path.write_text(USERFUL)
    scenario = load_scenario(path)
    model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    draws = SessionDraws(scenario, scenario.seed, 0)

    def answer(ask: AskPermission) -> PermissionAnswer:
        return permission_answer(draws.tool_plan(ask.name, ask.tool_use_id))

    async def work() -> tuple[LiveSession, SimulatedUser]:
        server = MockServer(model, speed=SPEED, log=lambda line: None)
        await server.start("127.0.0.1", 0)
        client = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="x", max_retries=0)
        loops = LoopFactory(scenario, "streaming", model.name, model.fallback_name)
        session = LiveSession(0, 0, loops.new_loop(lambda retry: 0.0))
        user = SimulatedUser(scenario, scenario.seed, 0)
        tools = simulated_tools(scenario.tool_specs, scenario.seed, session=0, speed=SPEED)
        try:
            await asyncio.wait_for(run_user_session(
                client, session, user, tools, origin_ns=time.monotonic_ns(),
                speed=SPEED, permission_answers=answer,
            ), timeout=60)
        finally:
            await client.close()
            await server.close()
        return session, user

    return asyncio.run(work())


def texts(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages)


def test_the_users_prompts_interrupts_attachments_and_refusals_reach_the_transcript(
    tmp_path: Path,
) -> None:
    session, user = run_user(tmp_path)
    transcript = texts(session.loop.messages)
    # Two prompts, each the user's own text, each chain ended by the user's interrupt.
    assert user.prompt_text(0) in transcript and user.prompt_text(1) in transcript
    assert transcript.count(INTERRUPT_TEXT) == 2
    kinds = [type(entry) for entry in session.loop.record.entries]
    assert kinds.count(Interrupt) == 2
    # Attachments arrived while the tools ran, named as the simulator names them.
    assert re.search(r"\[notification 1 during turn \d+\]", transcript)
    # Read asked; the user refused after the drawn delay.
    assert "denied" in transcript.lower() or "permission" in transcript.lower()
    assert session.start_ns is not None and session.end_ns is not None
    assert all(log.status == "200" and log.n_events > 0 for log in session.requests)


def test_the_live_session_is_its_simulated_twin_turn_by_turn(tmp_path: Path) -> None:
    """Same turns, same requests, same calls and outcomes, the same turns interrupted."""
    session, _ = run_user(tmp_path)
    live_rows = empty_rows()
    record_session(session, live_rows, horizon_ns=None)
    simulated = simulate(load_scenario(tmp_path / "user.toml"), "streaming", 1.0).rows

    def story(rows: Rows) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        turns = [(r["turn_index"], r["n_attempts"], r["n_tool_calls"], r["outcome"])
                 for r in dict_rows(rows["turns"])]
        calls = [(r["turn_index"], r["tool_use_id"], r["outcome"], r["synthetic_cause"])
                 for r in dict_rows(rows["tools"])]
        return turns, calls

    assert story(live_rows) == story(simulated)
    assert any(turn[3] == "interrupted" for turn in story(simulated)[0])
    assert live_rows["sessions"]["n_interrupts"][0] == simulated["sessions"]["n_interrupts"][0]

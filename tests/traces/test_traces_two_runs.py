"""Issue 31, section 2: two client runs on one `toolturn serve --record` (two policies, each with
its sessions 0 to 3, as `toolturn live --base-url` runs them) stay eight sessions, and their
first attempts are no retries. A real loopback server, real SDK clients; the run is told apart
by `x-sim-run` (`toolturn.wire.identity`, rule 2a), which `toolturn live` sends per unit."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic
import pyarrow.parquet as pq

from toolturn.engine.runner import Unit
from toolturn.fidelity.live_run import run_unit
from toolturn.fidelity.settings import LiveSettings
from toolturn.model.config import ModelConfig
from toolturn.model.model import MockModel
from toolturn.scenario.loader import load_scenario
from toolturn.traces.sources import read_logs
from toolturn.traces.stats import trace_stats
from toolturn.wire.identity import RUN_HEADER, SESSION_HEADER
from toolturn.wire.record_files import open_recording, write_recording
from toolturn.wire.recorder import Recorder
from toolturn.wire.server import MockServer

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = {"kind": "explicit", "responses": [
    {"blocks": [{"type": "tool_use", "name": "Read", "input": {"file_path": "a.txt"}}]},
    {"blocks": [{"type": "text", "text": "Done."}]},
]}
TOOLS = [{"name": "Read", "input_schema": {"type": "object"}}]


async def _session(client: anthropic.AsyncAnthropic, headers: dict[str, str]) -> None:
    """One session of two turns: a Read, its result, the answer."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Read a.txt"}]
    first = await client.messages.create(model="claude-haiku-4-5", max_tokens=200,
                                         messages=messages, tools=TOOLS,  # type: ignore[arg-type]
                                         extra_headers=headers)
    use = next(block for block in first.content if block.type == "tool_use")
    messages += [{"role": "assistant", "content": [b.model_dump() for b in first.content]},
                 {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": use.id, "content": "a"}]}]
    await client.messages.create(model="claude-haiku-4-5", max_tokens=200, messages=messages,
                                 tools=TOOLS, extra_headers=headers)  # type: ignore[arg-type]


async def _two_runs(folder: Path, runs: list[str | None]) -> None:
    config = ModelConfig.model_validate({"profile": "haiku", "script": SCRIPT})
    recorder = Recorder()
    server = MockServer(MockModel(config, 1), speed=200, log=lambda line: None, recorder=recorder)
    await server.start("127.0.0.1", 0)
    client = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="dummy", max_retries=0)
    try:
        # The runs at once, as two `toolturn live` processes against one server.
        await asyncio.gather(*(
            _session(client, {SESSION_HEADER: str(session)}
                     | ({} if run is None else {RUN_HEADER: run}))
            for run in runs for session in range(4)))
    finally:
        await client.close()
        await server.close()
    write_recording(open_recording(folder), recorder.tables(), {"scenario": "two runs"})


def test_two_runs_with_the_same_session_ids_stay_apart(tmp_path: Path) -> None:
    folder = tmp_path / "rec"
    asyncio.run(_two_runs(folder, ["streaming", "serial"]))
    requests = pq.read_table(folder / "requests.parquet").to_pylist()
    assert len(requests) == 16
    assert len({row["session_id"] for row in requests}) == 8
    assert [row["attempt"] for row in requests] == [1] * 16
    assert not any(row["retry"] for row in requests)
    figures = trace_stats(read_logs([str(folder)]))
    assert figures["sessions"] == 8 and figures["requests"] == 16


def test_without_a_run_header_the_second_run_is_taken_for_second_attempts(tmp_path: Path) -> None:
    # What the server said before `toolturn live` named its runs: 4 sessions, half the
    # requests second attempts (other draws than their simulated twins'), some retries.
    folder = tmp_path / "rec"
    asyncio.run(_two_runs(folder, [None, None]))
    requests = pq.read_table(folder / "requests.parquet").to_pylist()
    assert len({row["session_id"] for row in requests}) == 4
    assert sorted(row["attempt"] for row in requests) == [1] * 8 + [2] * 8
    assert sum(row["retry"] for row in requests) == 4  # each session's identical first request


SCENARIO = """
name = "two runs"
seed = 5
[load]
mode = "closed"
sessions = 2
concurrency = 2
[session]
user_prompts = { kind = "fixed", n = 1 }
[model]
profile = "haiku"
[model.script]
kind = "explicit"
[[model.script.responses]]
blocks = [{ type = "tool_use", name = "Read", input = { file_path = "a.txt" } }]
[[model.script.responses]]
blocks = [{ type = "text", text = "Done." }]
[tools]
catalogue = "none"
[[tools.define]]
name = "Read"
input_schema = { type = "object" }
duration = { kind = "fixed", ms = 10 }
"""


def test_two_policies_of_toolturn_live_on_one_recording_server(tmp_path: Path) -> None:
    path = tmp_path / "two.toml"
    path.write_text(SCENARIO)
    scenario = load_scenario(path)
    recorder = Recorder()

    async def run() -> None:
        server = MockServer(MockModel(scenario.model, scenario.seed), speed=200,
                            log=lambda line: None, recorder=recorder)
        await server.start("127.0.0.1", 0)
        try:
            settings = LiveSettings(speed=200.0, base_url=server.base_url)
            for policy in ("streaming", "serial"):
                await run_unit(scenario, Unit(policy, 2.0), settings)
        finally:
            await server.close()

    asyncio.run(run())
    requests = recorder.tables()["requests"].to_pylist()
    assert len(requests) == 8
    assert len({row["session_id"] for row in requests}) == 4
    assert [row["attempt"] for row in requests] == [1] * 8
    assert not any(row["retry"] for row in requests)

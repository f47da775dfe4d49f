"""Runtime overheads: the executor per tool call and the loop per turn, each beside a reference.

    .venv/bin/pytest bench/bench_runtime.py --benchmark-only

- Executor: a batch of 50 concurrency-safe calls under `streaming`, each added, started,
  finished and handed over. Reference: `json.dumps` of the same 50 tool_use blocks, a yardstick
  of this machine's Python speed, so the ratio travels between machines better than a time does.
- Loop: one session of 10 turns, each a response with a 40-delta text block and two tool_use
  blocks whose JSON arrives in 8 chunks, the tools finishing at once, then a final answer.
  Reference: the bare `StreamAccumulator` fed exactly the same events, so the ratio is what the
  loop (executor, transcript, repair at the boundary, record) costs on top of accumulation.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest

from toolturn.runtime import (
    SendRequest,
    SessionEnded,
    StartTool,
    StreamAccumulator,
    ToolDefinition,
    ToolExecutor,
    ToolTurnLoop,
)
from toolturn.runtime.validation import InputValidation

CALLS = 50
TURNS = 10
READ = ToolDefinition(
    "Read",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    concurrency_safe=True,
)
# Built once, as a simulator builds it once for all its loops: the benchmarks measure a batch
# and a session, not compiling the schema.
VALIDATION = InputValidation([READ])
Event = dict[str, Any]
_measured: dict[str, tuple[float, int, str]] = {}


def tool_use(index: int, call_id: str) -> Event:
    return {"type": "tool_use", "id": call_id, "name": "Read",
            "input": {"path": f"/src/{index}.py"}}


def run_executor(blocks: list[Event]) -> int:
    executor = ToolExecutor({"Read": READ}, "streaming", validation=VALIDATION)
    for now, block in enumerate(blocks):
        executor.add_tool_use(block, now)
    executor.message_ended(len(blocks))
    handed = 0
    for now, block in enumerate(blocks, start=len(blocks)):
        handed += len(executor.tool_finished(block["id"], "success", "contents", now))
    return handed


def response(turn: int, final: bool) -> list[Event]:
    message_id = f"msg_{turn}"
    events: list[Event] = [{"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": "claude-bench",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 1}}}]
    events.append({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}})
    events += [{"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": " ok"}}
               for _ in range(40)]
    events.append({"type": "content_block_stop", "index": 0})
    if not final:
        for index in (1, 2):
            block = tool_use(index, f"toolu_{turn}_{index}")
            raw = json.dumps(block["input"])
            cuts = [len(raw) * n // 8 for n in range(9)]
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {**block, "input": {}}})
            # Consecutive cuts: the shifted copy is one shorter by design.
            events += [{"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": raw[a:b]}}
                       for a, b in itertools.pairwise(cuts)]
            events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "usage": {"output_tokens": 60},
                   "delta": {"stop_reason": "end_turn" if final else "tool_use",
                             "stop_sequence": None}})
    events.append({"type": "message_stop"})
    return events


SESSION = [response(turn, final=turn == TURNS) for turn in range(1, TURNS + 1)]


def run_loop(responses: list[list[Event]]) -> str:
    loop = ToolTurnLoop(
        [READ], model="claude-bench", max_turns=TURNS + 1, validation=VALIDATION
    )
    scripted = iter(responses)
    now = 0
    commands = loop.start("go", now)
    ended = ""
    while commands:
        command = commands.pop(0)
        now += 1
        if isinstance(command, SendRequest):
            for event in next(scripted):
                commands += loop.on_event(event, now, command.request_id)
        elif isinstance(command, StartTool):
            commands += loop.tool_finished(command.tool_use_id, "success", "contents", now)
        elif isinstance(command, SessionEnded):
            ended = command.reason
    return ended


def run_accumulators(responses: list[list[Event]]) -> int:
    blocks = 0
    for events in responses:
        accumulator = StreamAccumulator()
        for event in events:
            blocks += accumulator.feed(event) is not None
    return blocks


@pytest.fixture(scope="module", autouse=True)
def ratio_table(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if reporter is None or capture is None:
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line("")
        reporter.write_line("runtime overheads (minimum round time):")
        for pair, unit in (("executor", "call"), ("loop", "turn")):
            subject, reference = _measured.get(pair), _measured.get(f"{pair}_reference")
            if subject is None or reference is None:
                continue
            per_unit = subject[0] / subject[1] * 1e6
            reporter.write_line(
                f"  {pair:<9} {per_unit:8.2f} us/{unit}  "
                f"{subject[0] / reference[0]:6.2f}x its reference ({reference[2]})")


def _keep(name: str, benchmark: Any, units: int, reference: str = "") -> None:
    if benchmark.stats is None:  # --benchmark-disable: run once, nothing measured
        return
    _measured[name] = (benchmark.stats.stats.min, units, reference)


def test_executor_per_call(benchmark: Any) -> None:
    blocks = [tool_use(n, f"toolu_{n}") for n in range(CALLS)]
    assert benchmark(run_executor, blocks) == CALLS
    _keep("executor", benchmark, CALLS)


def test_executor_reference(benchmark: Any) -> None:
    blocks = [tool_use(n, f"toolu_{n}") for n in range(CALLS)]
    benchmark(lambda: [json.dumps(block) for block in blocks])
    _keep("executor_reference", benchmark, CALLS, "json.dumps of the blocks")


def test_loop_per_turn(benchmark: Any) -> None:
    assert benchmark(run_loop, SESSION) == "end_turn"
    _keep("loop", benchmark, TURNS)


def test_loop_reference(benchmark: Any) -> None:
    assert benchmark(run_accumulators, SESSION) == TURNS + 2 * (TURNS - 1)
    _keep("loop_reference", benchmark, TURNS, "bare accumulator, same events")

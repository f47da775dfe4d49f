"""Accumulator speed: events per second of ours and of the SDK's ``accumulate_event``, same run.

    .venv/bin/pytest bench/bench_accumulator.py --benchmark-only

Two workloads: (a) one text block of 2,000 ``text_delta`` events; (b) one tool_use block whose
~25 KB structured input arrives in ~1,000 ``input_json_delta`` events. Ours is fed the event dicts
(its native input); the SDK is fed typed events built beforehand (its native input, as its
``Stream`` yields them), so neither pays for a conversion the other skips. The table printed at the
end gives events per second from each side's minimum round time and the ratio. Targets (issue 2):
at least 2x the SDK on (a), at least 20x on (b); the SDK re-parses the whole JSON buffer on every
delta (quadratic), ours joins the parts and parses once at ``content_block_stop`` (linear).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from anthropic._models import construct_type
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import RawMessageStreamEvent

from toolturn.runtime.accumulator import StreamAccumulator

TEXT_DELTAS = 2_000
TOOL_INPUT_BYTES = 25_000
TOOL_DELTAS = 1_000
TARGETS = {"text": 2.0, "tool_json": 20.0}

Event = dict[str, Any]


def _envelope(block: Event, deltas: list[Event], stop_reason: str) -> list[Event]:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": "claude-bench",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1_000, "output_tokens": 1},
        },
    }
    return [
        start,
        {"type": "content_block_start", "index": 0, "content_block": block},
        *deltas,
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 900},
        },
        {"type": "message_stop"},
    ]


def text_stream() -> list[Event]:
    """(a) 2,000 text deltas of a few words each, as the API streams prose."""
    deltas = [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": f" word{n} and"},
        }
        for n in range(TEXT_DELTAS)
    ]
    return _envelope({"type": "text", "text": ""}, deltas, "end_turn")


def structured_tool_input() -> dict[str, Any]:
    """A multi-file edit: nested objects, arrays, numbers, escapes and non-ASCII, ~25 KB of JSON."""
    edits: list[dict[str, Any]] = []
    while len(json.dumps({"edits": edits})) < TOOL_INPUT_BYTES:
        n = len(edits)
        edits.append(
            {
                "path": f"src/pkg_{n % 7}/module_{n}.py",
                "range": {
                    "start": {"line": n * 3, "column": 4},
                    "end": {"line": n * 3 + 2, "column": 0},
                },
                "old": f'def f{n}(x):\n    return "caf\u00e9" + str(x)\n',
                "new": f'def f{n}(x: int) -> str:\n    return "caf\u00e9 \\"{n}\\"" + str(x)\n',
                "tags": ["refactor", "typing", n % 3 == 0],
                "weight": n / 7,
            }
        )
    return {"edits": edits, "dry_run": False}


def tool_stream() -> list[Event]:
    """(b) the ~25 KB input cut into 1,000 equal slices, wherever the cuts fall."""
    raw = json.dumps(structured_tool_input())
    bounds = [len(raw) * n // TOOL_DELTAS for n in range(TOOL_DELTAS + 1)]
    deltas = [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": raw[start:end]},
        }
        # Consecutive bounds: the shifted copy is one shorter by design.
        for start, end in itertools.pairwise(bounds)
    ]
    block = {"type": "tool_use", "id": "toolu_bench", "name": "apply_edits", "input": {}}
    return _envelope(block, deltas, "tool_use")


WORKLOADS: dict[str, Callable[[], list[Event]]] = {"text": text_stream, "tool_json": tool_stream}


def run_ours(events: list[Event]) -> dict[str, Any]:
    accumulator = StreamAccumulator()
    for event in events:
        accumulator.feed(event)
    return accumulator.snapshot()


def run_sdk(events: list[Any]) -> dict[str, Any]:
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    assert snapshot is not None
    message: dict[str, Any] = snapshot.to_dict()
    return message


_measured: dict[tuple[str, str], tuple[int, float]] = {}


@pytest.fixture(scope="module", autouse=True)
def ratio_table(request: pytest.FixtureRequest) -> Iterator[None]:
    """After the module, print events/s of each side and the ratio against its target."""
    yield
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if reporter is None or capture is None or not _measured:
        return
    with capture.global_and_fixture_disabled():  # teardown output is captured otherwise
        _write_table(reporter)


def _write_table(reporter: Any) -> None:
    reporter.write_line("")
    reporter.write_line(
        "accumulator events/s (minimum round time), ours vs the SDK's accumulate_event:"
    )
    for workload, target in TARGETS.items():
        ours, sdk = _measured.get((workload, "ours")), _measured.get((workload, "sdk"))
        if ours is None or sdk is None:
            continue
        ours_rate, sdk_rate = ours[0] / ours[1], sdk[0] / sdk[1]
        ratio = ours_rate / sdk_rate
        verdict = "met" if ratio >= target else "MISSED"
        reporter.write_line(
            f"  {workload:<10} {ours[0]:>5} events  ours {ours_rate:>12,.0f}/s"
            f"  sdk {sdk_rate:>12,.0f}/s"
            f"  ratio {ratio:7.1f}x  (target >= {target:g}x: {verdict})"
        )


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_ours(benchmark: Any, workload: str) -> None:
    events = WORKLOADS[workload]()
    benchmark.group = workload
    message = benchmark(run_ours, events)
    sdk_message = run_sdk(
        [construct_type(type_=RawMessageStreamEvent, value=event) for event in events]
    )
    if sdk_message.get("stop_details", "absent") is None:
        # The SDK sets it from message_delta; the wire did not carry it.
        del sdk_message["stop_details"]
    assert message == sdk_message  # both sides build the same message
    _record(workload, "ours", len(events), benchmark)


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_sdk(benchmark: Any, workload: str) -> None:
    events = [
        construct_type(type_=RawMessageStreamEvent, value=event) for event in WORKLOADS[workload]()
    ]
    benchmark.group = workload
    benchmark(run_sdk, events)
    _record(workload, "sdk", len(events), benchmark)


def _record(workload: str, side: str, event_count: int, benchmark: Any) -> None:
    if benchmark.stats is None:  # --benchmark-disable: run once, nothing measured
        return
    seconds = benchmark.stats.stats.min
    _measured[(workload, side)] = (event_count, seconds)
    benchmark.extra_info["events"] = event_count
    benchmark.extra_info["events_per_s"] = round(event_count / seconds)

"""The OpenAI accumulators' speed against the openai SDK's own stream accumulation, same run.

    .venv/bin/pytest bench/bench_accumulator_openai.py --benchmark-only

Per protocol, two workloads like bench_accumulator.py's: (a) text, one message of 2,000 text
deltas; (b) long argument JSON, one call whose ~25 KB of structured arguments arrive in ~1,000
pieces. Ours is fed the event dicts (its native input); the SDK is fed typed events built
beforehand (its native input, as its ``Stream`` yields them): ``ResponseStreamState.handle_event``
for the Responses API, ``ChatCompletionStreamState.handle_chunk`` for Chat Completions, which is
what ``client.*.stream()`` runs per event. For Chat Completions' arguments the SDK is given the
tool as ``strict`` (then it parses the partial arguments at every chunk: its way of knowing them
early) and ours runs speculative (``at_parsed_json``: it finds the moment they parse, in one pass).

The table at the end gives each side's median round time and the ratio of medians against the
target (issue 34: at least 2x the SDK on text, at least 20x on long argument JSON). Linear in the
input: ours also runs each workload at four times the size, and the table gives the time per event
at 4x over that at 1x (about 1 when linear, 4 when quadratic as the SDK's Chat Completions is).
That one compares minimum round times: on a machine shared with other work a round's time
varies by a factor of two or three with the load of the moment, and the minimum is the round
least disturbed; a ratio of medians would measure the load as much as the code.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from bench_accumulator import structured_tool_input
from openai._models import construct_type
from openai._types import omit
from openai.lib.streaming.chat._completions import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

from toolturn.runtime.openai.chat import DONE, ChatAccumulator
from toolturn.runtime.openai.responses import ResponsesAccumulator

TEXT_DELTAS = 2_000
ARGUMENT_PIECES = 1_000
TARGETS = {"text": 2.0, "arguments": 20.0}
LINEAR_SCALE = 4
LINEAR_LIMIT = 1.5  # per-event time at 4x over 1x; quadratic would be about 4

Event = dict[str, Any]
TOOL = {"type": "function", "function": {"name": "apply_edits", "strict": True,
                                         "parameters": {"type": "object"}}}


def _pieces(text: str, count: int) -> list[str]:
    bounds = [len(text) * n // count for n in range(count + 1)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


def _words(count: int) -> list[str]:
    return [f" word{n} caf\u00e9 and" for n in range(count)]


def _arguments(scale: int) -> str:
    edits = structured_tool_input()["edits"] * scale
    return json.dumps({"edits": edits, "dry_run": False})


# ----- the Responses API -----


def _response(status: str, output: list[Event]) -> Event:
    return {"id": "resp_bench", "object": "response", "created_at": 1_700_000_000,
            "status": status, "model": "gpt-bench", "output": output, "tools": [],
            "tool_choice": "auto", "parallel_tool_calls": True, "error": None,
            "incomplete_details": None, "usage": None}


def _responses_stream(added: Event, deltas: list[Event], done: Event) -> list[Event]:
    events = [
        {"type": "response.created", "response": _response("in_progress", [])},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
    ]
    if added["type"] == "message":
        events.append({"type": "response.content_part.added", "output_index": 0,
                       "item_id": added["id"], "content_index": 0,
                       "part": {"type": "output_text", "text": "", "annotations": []}})
    events += deltas
    events.append({"type": "response.output_item.done", "output_index": 0, "item": done})
    events.append({"type": "response.completed", "response": _response("completed", [done])})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def responses_text(scale: int) -> list[Event]:
    words = _words(TEXT_DELTAS * scale)
    added = {"id": "msg_b", "type": "message", "status": "in_progress", "role": "assistant",
             "content": []}
    deltas = [{"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_b",
               "content_index": 0, "delta": word, "logprobs": []} for word in words]
    part = {"type": "output_text", "text": "".join(words), "annotations": []}
    return _responses_stream(added, deltas, {**added, "status": "completed", "content": [part]})


def responses_arguments(scale: int) -> list[Event]:
    raw = _arguments(scale)
    added = {"id": "fc_b", "type": "function_call", "status": "in_progress",
             "call_id": "call_b", "name": "apply_edits", "arguments": ""}
    deltas = [{"type": "response.function_call_arguments.delta", "output_index": 0,
               "item_id": "fc_b", "delta": piece}
              for piece in _pieces(raw, ARGUMENT_PIECES * scale)]
    return _responses_stream(added, deltas, {**added, "status": "completed", "arguments": raw})


def ours_responses(events: list[Event]) -> dict[str, Any]:
    accumulator = ResponsesAccumulator()
    for event in events:
        accumulator.feed(event)
    return accumulator.response()


def sdk_responses(events: list[Any]) -> dict[str, Any]:
    state = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in events:
        state.handle_event(event)
    assert state._completed_response is not None
    return state._completed_response.to_dict()


# ----- Chat Completions -----

_HEAD = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1_700_000_000,
         "model": "gpt-bench", "system_fingerprint": None}


def _chunk(delta: Event, finish: str | None = None) -> Event:
    return {**_HEAD, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                  "finish_reason": finish}]}


def chat_text(scale: int) -> list[Event | str]:
    chunks: list[Event | str] = [_chunk({"role": "assistant", "content": "", "refusal": None})]
    chunks += [_chunk({"content": word}) for word in _words(TEXT_DELTAS * scale)]
    return [*chunks, _chunk({}, "stop"), DONE]


def chat_arguments(scale: int) -> list[Event | str]:
    start = {"index": 0, "id": "call_b", "type": "function",
             "function": {"name": "apply_edits", "arguments": ""}}
    chunks: list[Event | str] = [_chunk({"role": "assistant", "content": None}),
                                 _chunk({"tool_calls": [start]})]
    chunks += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
               for piece in _pieces(_arguments(scale), ARGUMENT_PIECES * scale)]
    return [*chunks, _chunk({}, "tool_calls"), DONE]


def ours_chat(chunks: list[Event | str], speculative: bool) -> dict[str, Any]:
    accumulator = ChatAccumulator(speculative=speculative)
    parsed = 0
    for chunk in chunks:
        parsed += sum(notice.kind == "parsed" for notice in accumulator.feed(chunk))
    assert parsed == speculative  # the one moment the arguments parse, found
    return accumulator.completion()


def sdk_chat(chunks: list[Any], tools: list[Any]) -> dict[str, Any]:
    state = ChatCompletionStreamState(input_tools=tools)
    for chunk in chunks:
        state.handle_chunk(chunk)
    return state.get_final_completion().to_dict()


# ----- the workloads -----


class Workload:
    """One stream of one protocol, and how each side consumes it."""

    def __init__(self, protocol: str, kind: str, build: Callable[[int], list[Any]]) -> None:
        self.protocol, self.kind, self.build = protocol, kind, build
        self.name = f"{protocol}_{kind}"

    def ours(self, events: list[Any]) -> dict[str, Any]:
        if self.protocol == "responses":
            return ours_responses(events)
        return ours_chat(events, speculative=self.kind == "arguments")

    def sdk_input(self, events: list[Any]) -> list[Any]:
        if self.protocol == "responses":
            return [construct_type(type_=ResponseStreamEvent, value=event) for event in events]
        # The SDK's Stream stops at [DONE]: it never reaches the state.
        return [construct_type(type_=ChatCompletionChunk, value=chunk) for chunk in events
                if chunk != DONE]

    def sdk(self, events: list[Any]) -> dict[str, Any]:
        if self.protocol == "responses":
            return sdk_responses(events)
        return sdk_chat(events, [TOOL] if self.kind == "arguments" else [])


WORKLOADS = {
    workload.name: workload
    for workload in (
        Workload("responses", "text", responses_text),
        Workload("responses", "arguments", responses_arguments),
        Workload("chat", "text", chat_text),
        Workload("chat", "arguments", chat_arguments),
    )
}


def _essence(output: dict[str, Any]) -> list[Any]:
    """What both sides must have built alike: each item's texts and arguments (Responses), each
    message's content and its calls' arguments (Chat Completions)."""
    if "output" in output:
        return [(item.get("arguments"), [part.get("text") for part in item.get("content") or ()])
                for item in output["output"]]
    return [(choice["message"].get("content"),
             [call["function"]["arguments"] for call in choice["message"].get("tool_calls") or ()])
            for choice in output["choices"]]


_measured: dict[tuple[str, str], tuple[float, float]] = {}  # (median, minimum) seconds


@pytest.fixture(scope="module", autouse=True)
def ratio_table(request: pytest.FixtureRequest) -> Iterator[None]:
    """After the module, print each side's median, the ratios and the linearity."""
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
        "OpenAI accumulators, median round time, ours vs the SDK's (same run); per-event time"
        " at 4x over 1x from minimum round times:"
    )
    for name, workload in WORKLOADS.items():
        ours, sdk = _measured.get((name, "ours")), _measured.get((name, "sdk"))
        big = _measured.get((name, "ours_x4"))
        line = f"  {name:<20}"
        if ours is not None and sdk is not None:
            ratio, target = sdk[0] / ours[0], TARGETS[workload.kind]
            verdict = "met" if ratio >= target else "MISSED"
            line += (f" ours {ours[0] * 1e3:8.2f} ms  sdk {sdk[0] * 1e3:9.2f} ms"
                     f"  ratio {ratio:7.1f}x (target >= {target:g}x: {verdict})")
        if ours is not None and big is not None:
            growth = big[1] / ours[1] / LINEAR_SCALE
            verdict = "linear" if growth <= LINEAR_LIMIT else "NOT LINEAR"
            line += f"  per event x{LINEAR_SCALE}/x1 {growth:4.2f} ({verdict})"
        reporter.write_line(line)


def _record(name: str, side: str, benchmark: Any) -> None:
    if benchmark.stats is None:  # --benchmark-disable: run once, nothing measured
        return
    stats = benchmark.stats.stats
    _measured[(name, side)] = (stats.median, stats.min)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_ours(benchmark: Any, name: str) -> None:
    workload = WORKLOADS[name]
    events = workload.build(1)
    benchmark.group = name
    output = benchmark(workload.ours, events)
    assert _essence(output) == _essence(workload.sdk(workload.sdk_input(events)))
    _record(name, "ours", benchmark)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_ours_at_four_times_the_size(benchmark: Any, name: str) -> None:
    workload = WORKLOADS[name]
    benchmark.group = name
    benchmark(workload.ours, workload.build(LINEAR_SCALE))
    _record(name, "ours_x4", benchmark)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_sdk(benchmark: Any, name: str) -> None:
    workload = WORKLOADS[name]
    events = workload.sdk_input(workload.build(1))
    benchmark.group = name
    benchmark(workload.sdk, events)
    _record(name, "sdk", benchmark)

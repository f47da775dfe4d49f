"""The OpenAI accumulators on the streams the mock model makes (issue 34, section 1): every fault
case (`tests.helpers.openai_cases.CASES`) and the shipped scenarios' responses, through the wire
codecs as `toolturn serve` sends them on /v1/responses and /v1/chat/completions, into our
accumulators and the official openai SDK's (`ResponseStreamState`, `ChatCompletionStreamState`):
the same final output, and our calls complete where the SDK's are done.

One difference is deliberate: a response with two calls of one id (`duplicate_tool_id`) on the
Responses API. The SDK refuses it ("conflicting output identities"); ours keeps both items, as
Codex CLI does (it runs both and answers both with the one id: `toolturn.runtime.recovery.CODEX`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai._models import construct_type
from openai._types import omit
from openai.lib.streaming.chat._completions import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

from tests.helpers.openai_cases import CASES, CHAT, RESPONSES, expected, expected_bytes, model_for
from tests.helpers.openai_cases import request as case_request
from tests.runtime.test_accumulator_openai_differential import (
    decoded,
    without_nulls,
    without_parse_fields,
)
from toolturn.model.model import MockModel
from toolturn.model.response import StreamResponse, Turn
from toolturn.model.tool_inputs import tool_inputs
from toolturn.runtime.openai.chat import DONE, ChatAccumulator
from toolturn.runtime.openai.responses import ResponsesAccumulator
from toolturn.scenario.loader import load_scenario
from toolturn.wire.codecs import CODECS
from toolturn.wire.side_endpoints import model_body

SHIPPED = sorted((Path(__file__).resolve().parents[2] / "toolturn" / "scenarios").glob("*.toml"))
# Sessions per fault case (each draws its own faults and timings), and per shipped scenario the
# sessions and turns asked: enough that every fault of the storms fires in some stream.
CASE_SESSIONS = range(1, 9)
SCENARIO_SESSIONS = range(1, 7)
SCENARIO_TURNS = range(3)
DUPLICATE = "duplicate_tool_id"
CONFLICT = "conflicting output identities"


def scenario_request(path: str, model: MockModel, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A first request in the protocol of `path` declaring the scenario's tools."""
    if path == RESPONSES:
        return {"model": model.name, "input": "Go on.", "stream": True,
                "tools": [{"type": "function", "name": t["name"], "parameters": t["schema"]}
                          for t in tools]}
    return {"model": model.name, "messages": [{"role": "user", "content": "Go on."}],
            "tools": [{"type": "function",
                       "function": {"name": t["name"], "parameters": t["schema"]}}
                      for t in tools],
            "stream": True, "stream_options": {"include_usage": True}}


def wire_data(path: str, model: MockModel, body: dict[str, Any], turn: Turn) -> list[Any] | None:
    """What a client's SSE decoder reads of the model's answer in the protocol of `path`; None
    when the answer is not a stream (an HTTP error)."""
    seen = model_body(CODECS[path].messages_body(body), model, False)
    answer = model.answer(seen, turn)
    if not isinstance(answer, StreamResponse):
        return None
    return decoded(expected_bytes(path, answer, body))


def case_streams(case: str) -> Iterator[tuple[str, list[Any]]]:
    model = model_for(case)
    for path in (RESPONSES, CHAT):
        body = case_request(path, model, stream=True)
        for session in CASE_SESSIONS:
            answer = expected(path, model, body, session)
            if isinstance(answer, StreamResponse):
                yield path, decoded(expected_bytes(path, answer, body))


def scenario_streams() -> Iterator[tuple[str, str, list[Any]]]:
    for file in SHIPPED:
        scenario = load_scenario(file)
        model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
        tools = [{"name": spec.name, "schema": spec.input_schema} for spec in scenario.tool_specs]
        for path in (RESPONSES, CHAT):
            body = scenario_request(path, model, tools)
            for session in SCENARIO_SESSIONS:
                for turn in SCENARIO_TURNS:
                    data = wire_data(path, model, body, Turn(session, turn, 1))
                    if data is not None:
                        yield file.stem, path, data


def responses_check(data: list[Any]) -> ResponsesAccumulator:
    """Feed both accumulators; assert each call done where the SDK's is and the same final
    response. Returns ours."""
    ours = ResponsesAccumulator()
    sdk = ResponseStreamState(input_tools=omit, text_format=omit)
    end: Any = None  # the SDK's failed or incomplete event, its output filled in
    for event in data:
        done = ours.feed(event)
        sdk_events = sdk.handle_event(construct_type(type_=ResponseStreamEvent, value=event))
        if event["type"] in ("response.failed", "response.incomplete"):
            end = sdk_events[-1]
        if done is not None:
            assert done.item == sdk._completed_output[done.output_index].to_dict()
    if ours.status == "completed":
        assert ours.response() == without_parse_fields(sdk._completed_response.to_dict())
    elif ours.finished:
        assert ours.response() == without_parse_fields(end.response.to_dict())
    return ours


def chat_check(data: list[Any], speculative: bool) -> None:
    """Feed both accumulators; assert each call complete where the SDK's arguments are done
    (speculative starts aside: those may come sooner and are not what this compares) and the same
    final completion."""
    ours = ChatAccumulator(speculative=speculative)
    sdk = ChatCompletionStreamState()
    for chunk in data:
        notices = ours.feed(chunk)
        if chunk == DONE or "error" in chunk:
            break  # the SDK's Stream ends at [DONE] and raises at an error chunk
        sdk_events = sdk.handle_chunk(construct_type(type_=ChatCompletionChunk, value=chunk))
        complete = [(n.call.index, n.call.name, n.call.call["function"]["arguments"])
                    for n in notices if n.kind == "complete"]
        done = [(e.index, e.name, e.arguments) for e in sdk_events
                if e.type == "tool_calls.function.arguments.done"]
        assert complete == done
    snapshot = sdk.current_completion_snapshot.to_dict()
    for choice in snapshot["choices"]:
        for call in choice["message"].get("tool_calls") or ():
            call.pop("index")
    assert without_nulls(ours.completion()) == without_nulls(without_parse_fields(snapshot))


def check(source: str, path: str, data: list[Any]) -> None:
    if path == CHAT:
        for speculative in (False, True):
            chat_check(data, speculative)
    elif source == DUPLICATE:
        duplicate_check(data)
    else:
        responses_check(data)


def duplicate_check(data: list[Any]) -> None:
    """The deliberate difference: the SDK refuses two items of one call id, ours keeps both."""
    with pytest.raises(RuntimeError, match=CONFLICT):
        responses_check(data)
    ours = ResponsesAccumulator()
    for event in data:
        ours.feed(event)
    calls = [item for item in ours.response()["output"] if item["type"] == "function_call"]
    assert len(calls) == 2 and calls[0]["call_id"] == calls[1]["call_id"]
    assert calls[0]["id"] != calls[1]["id"]  # two items, one call id


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_fault_case_equals_the_sdk(case: str) -> None:
    streams = list(case_streams(case))
    # An HTTP fault at probability 1 fails every first attempt before any stream.
    paths = set() if case.startswith("http_") else {RESPONSES, CHAT}
    assert {path for path, _ in streams} == paths
    for path, data in streams:
        check(case, path, data)


def test_the_shipped_scenarios_streams_equal_the_sdk() -> None:
    seen: set[tuple[str, str]] = set()
    for name, path, data in scenario_streams():
        check(name, path, data)
        seen.add((name, path))
    assert {name for name, _ in seen} == {file.stem for file in SHIPPED}

"""`session.openai` (toolturn/agents/): the openai SDK against the mock model over the in-memory
transport, Responses and Chat Completions, streamed and not; the same turn whichever protocol
asks; `call_tool` by an OpenAI call's ids; examples/openai_agent.py under `toolturn run --agent`,
deterministic by seed."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import openai
import pyarrow.parquet as pq
import pytest

from tests.helpers.scenarios import TINY
from toolturn.agents import AgentSession
from toolturn.agents.mock_transport import MockTransport
from toolturn.agents.seen_requests import SeenSession
from toolturn.agents.virtual_loop import run_virtual
from toolturn.cli import main
from toolturn.metrics.schema import TABLES
from toolturn.model.model import MockModel
from toolturn.model.tool_inputs import tool_inputs
from toolturn.scenario.loader import load_scenario
from toolturn.scenario.schema import Scenario
from toolturn.wire import openai_chat_request

PROMPT = "Fix the failing test."
# (name, input) of each tool call, and the answer's text: what a turn's story is.
Story = tuple[list[tuple[str, dict[str, Any], str]], str]


@pytest.fixture
def scenario(tmp_path: Path) -> Scenario:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return load_scenario(path)


async def _anthropic(session: AgentSession, stream: bool) -> Story:
    args: dict[str, Any] = dict(model=session.model_name, max_tokens=4096, tools=session.tools,
                                messages=[{"role": "user", "content": PROMPT}])
    if stream:
        async with session.client.messages.stream(**args) as events:
            message = await events.get_final_message()
    else:
        message = await session.client.messages.create(**args)
    calls = [(b.name, dict(b.input), b.id) for b in message.content if b.type == "tool_use"]
    return calls, "".join(b.text for b in message.content if b.type == "text")


async def _responses(session: AgentSession, stream: bool) -> Story:
    args: dict[str, Any] = dict(model=session.model_name, input=PROMPT, store=False,
                                tools=session.openai_tools("responses"), max_output_tokens=4096)
    if stream:
        async with session.openai.responses.stream(**args) as events:
            response = await events.get_final_response()
    else:
        response = await session.openai.responses.create(**args)
    calls = [(item.name, json.loads(item.arguments), item.call_id) for item in response.output
             if item.type == "function_call"]
    return calls, response.output_text


async def _chat(session: AgentSession, stream: bool) -> Story:
    args: dict[str, Any] = dict(model=session.model_name, max_tokens=4096,
                                tools=session.openai_tools("chat"),
                                messages=[{"role": "user", "content": PROMPT}])
    if stream:
        async with session.openai.chat.completions.stream(**args) as events:
            completion = await events.get_final_completion()
    else:
        completion = await session.openai.chat.completions.create(**args)
    message = completion.choices[0].message
    calls = [(call.function.name, json.loads(call.function.arguments), call.id)
             for call in message.tool_calls or () if call.type == "function"]
    return calls, message.content or ""


def _first_turn(scenario: Scenario, ask: Any, stream: bool) -> tuple[Story, SeenSession]:
    """Turn 1 of session 0 asked through `ask`, with a fresh mock model as each run has."""
    model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    seen = SeenSession(0)

    async def run() -> Story:
        transport = MockTransport(model, {0: seen})
        async with httpx2.AsyncClient(transport=transport) as http:
            session = AgentSession(scenario, 0, http, seen, (model.name, None))
            story: Story = await ask(session, stream)
            return story

    story, _ = run_virtual(run())
    return story, seen


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "create"])
def test_a_turn_is_the_same_story_in_every_protocol(scenario: Scenario, stream: bool) -> None:
    stories = {}
    for ask in (_anthropic, _responses, _chat):
        (calls, text), seen = _first_turn(scenario, ask, stream)
        (request,) = seen.requests
        assert (request.status, request.turn_index, request.violations) == ("200", 1, ())
        assert request.n_events > 3 and request.message_stop_ns is not None  # read once, whole
        stories[ask.__name__] = (calls, text)
    calls, text = stories["_anthropic"]
    assert calls, "the tiny scenario's first turn asks for tools"
    assert stories["_responses"] == stories["_chat"] == (calls, text)


def test_call_tool_finds_the_call_by_its_openai_ids(scenario: Scenario) -> None:
    async def ask(session: AgentSession, stream: bool) -> Story:
        async with session.openai.responses.stream(
            model=session.model_name, input=PROMPT, store=False,
            tools=session.openai_tools("responses"),
        ) as events:
            response = await events.get_final_response()
        calls = [item for item in response.output if item.type == "function_call"]
        first, *others = calls
        # The first by its item id (`fc_...`), the others by their call_id; none by name alone.
        named = [(first, first.id)] + [(call, call.call_id) for call in others]
        for call, name in named:
            await session.call_tool(call.name, {}, tool_use_id=name)
        return [(call.name, {}, name) for call, name in named], ""

    (named, _), seen = _first_turn(scenario, ask, True)
    (request,) = seen.requests
    assert named[0][2].startswith("fc_")
    assert [call.claimed for call in request.calls] == [True] * len(request.calls)
    assert [call.name for call in request.calls] == [name for name, _, _ in named]


def test_openai_tools_names_its_api() -> None:
    with pytest.raises(ValueError, match="'responses' or 'chat'"):
        AgentSession.openai_tools(SimpleNamespace(tools=[]), "completions")  # type: ignore[arg-type]


@pytest.mark.parametrize("function", ["agent", "chat_agent"])
def test_the_openai_example_runs_under_agent_bit_for_bit(
    tmp_path: Path, function: str
) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    policy = f"examples.openai_agent:{function}"
    for side in ("a", "b"):
        assert main(["run", str(path), "--agent", policy, "--out", str(tmp_path / side / "run"),
                     "--no-report", "--quiet"]) == 0
    for spec in TABLES:
        name = f"{spec.name}.parquet"
        assert (tmp_path / "a" / "run" / name).read_bytes() == (
            tmp_path / "b" / "run" / name).read_bytes(), name
    mine = f"agent:{policy}"
    sessions = pq.read_table(tmp_path / "a" / "run" / "sessions.parquet").to_pandas()
    assert list(sessions[sessions["policy"] == mine]["outcome"]) == ["completed"] * 3
    tools = pq.read_table(tmp_path / "a" / "run" / "tools.parquet").to_pandas()
    ran = tools[tools["policy"] == mine]
    assert (ran["outcome"] == "success").sum() == 6  # exact for the seed
    assert "not_run" not in set(ran["outcome"])  # every call the model asked for was run
    requests = pq.read_table(tmp_path / "a" / "run" / "requests.parquet").to_pandas()
    assert set(requests[requests["policy"] == mine]["status"]) <= {"200", "529", "500"}


def test_a_pairing_refusal_names_the_parameter_as_the_server_does(scenario: Scenario) -> None:
    # An orphan tool message: the API's 400 names the message (`messages.[1].role`), and so
    # does `toolturn serve`; the agent arm's transport must too, or an agent that reads
    # `param` behaves otherwise under the simulator than against the server.
    messages = [{"role": "user", "content": PROMPT},
                {"role": "tool", "tool_call_id": "call_nowhere", "content": "ok"}]

    async def ask(session: AgentSession, stream: bool) -> Story:
        with pytest.raises(openai.BadRequestError) as refused:
            await session.openai.chat.completions.create(
                model=session.model_name, max_tokens=64, messages=messages)  # type: ignore[arg-type]
        error = refused.value
        (problem,) = openai_chat_request.pairing({"messages": messages})
        assert error.param == problem.param == "messages.[1].role"
        assert isinstance(error.body, dict) and error.body["message"] == problem.message
        return [], ""

    _, seen = _first_turn(scenario, ask, False)
    (request,) = seen.requests
    assert request.status == "400" and request.violations

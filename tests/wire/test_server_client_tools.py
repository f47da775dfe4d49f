"""Over the wire the scripted model calls the tools the client declared, with safe inputs by
default (issue 17, section 1): a real agent executes what we send."""

from __future__ import annotations

from typing import Any

import anthropic
import numpy as np
import pytest

from tests.helpers.model_support import TOOLS
from tests.helpers.server import SEED, USER, serving
from toolturn.model.config import ModelConfig
from toolturn.model.model import MockModel
from toolturn.scenario.loader import load_scenario
from toolturn.wire.client_tools import SAFE_INPUTS, ClientTools, callable_tools
from toolturn.wire.identity import SESSION_HEADER

BASH = {"name": "Bash", "input_schema": {
    "type": "object", "properties": {"command": {"type": "string"},
                                     "description": {"type": "string"},
                                     "timeout": {"type": "number"}},
    "required": ["command"], "additionalProperties": False}}
READ = {"name": "Read", "input_schema": {
    "type": "object", "properties": {"file_path": {"type": "string"}},
    "required": ["file_path"], "additionalProperties": False}}
WRITE = {"name": "Write", "input_schema": {
    "type": "object", "properties": {"file_path": {"type": "string"},
                                     "content": {"type": "string"}},
    "required": ["file_path", "content"]}}
# A Bash whose schema takes none of our commands (the key is named otherwise).
ODD_BASH = {"name": "Bash", "input_schema": {
    "type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"],
    "additionalProperties": False}}


def generated_model(**script: Any) -> MockModel:
    config = {"profile": "haiku", "script": {
        "kind": "generated", "end_probability": 0, "tool_calls": {"kind": "fixed", "n": 3},
        "tool_mix": {"Read": 3, "Bash": 2, "Write": 1}, **script}}
    return MockModel(ModelConfig.model_validate(config), SEED, TOOLS)


def called(client: Any, model: MockModel, tools: list[dict[str, Any]], session: str) -> list[Any]:
    message = client.messages.create(model="claude-opus-5-5", max_tokens=4096, messages=USER,
                                     tools=tools, extra_headers={SESSION_HEADER: session})
    return [(block.name, block.input) for block in message.content if block.type == "tool_use"]


def test_only_declared_tools_with_safe_inputs_are_called() -> None:
    model = generated_model()
    safe = ClientTools({}, client_dir="/work/dir")
    with serving(model, client_tools=safe) as (_, client, _log):
        calls = [call for session in range(20)
                 for call in called(client, model, [BASH, READ, WRITE], str(session))]
        bash_only = called(client, model, [BASH, WRITE], "99")
        nothing = called(client, model, [WRITE, ODD_BASH], "100")
    names = {name for name, _ in calls}
    assert names == {"Bash", "Read"}  # Write is declared and weighted, but writes: never called
    for name, tool_input in calls:
        if name == "Bash":
            assert tool_input in SAFE_INPUTS["Bash"]
        else:
            assert tool_input["file_path"] in ("/work/dir/README.md", "/work/dir/src/app.py")
    assert bash_only and {name for name, _ in bash_only} == {"Bash"}
    assert nothing == []  # no callable tool: a final answer


def test_without_the_clients_directory_read_is_not_called() -> None:
    tools = callable_tools([READ, BASH], ClientTools({}))
    assert sorted(tools) == ["Bash"]


def test_with_schema_inputs_other_tools_get_scenario_or_schema_inputs() -> None:
    scenario = load_scenario("scenarios/default.toml")
    specs = {spec.name: spec for spec in scenario.tool_specs}
    lint = {"name": "Lint", "input_schema": {
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
    server_tool = {"type": "web_search_20250305", "name": "web_search"}
    tools = callable_tools([BASH, WRITE, lint, server_tool],
                           ClientTools(specs, schema_inputs=True))
    assert sorted(tools) == ["Bash", "Lint", "Write"]
    assert tools["Write"].spec is specs["Write"]  # the scenario's own tool
    rng = np.random.default_rng(1)
    assert isinstance(tools["Lint"].sample_input(rng)["path"], str)
    invalid = tools["Bash"].sample_invalid_input(rng)
    assert invalid is not None and tools["Bash"].spec.input_problem(invalid) is not None


def test_the_invalid_input_fault_breaks_the_clients_schema() -> None:
    model = generated_model()
    config = model.config.model_copy(update={"faults": model.config.faults.model_copy(
        update={"invalid_tool_input": 1.0})})
    faulty = MockModel(config, SEED, TOOLS)
    with serving(faulty, client_tools=ClientTools({})) as (_, client, log):
        calls = called(client, faulty, [BASH], "1")
    schema = callable_tools([BASH], ClientTools({}))["Bash"].spec
    assert calls and all(schema.input_problem(tool_input) is not None for _, tool_input in calls)
    assert "invalid_tool_input" in log.lines[0]


def test_a_scenario_maps_name_patterns_to_presets_and_may_be_strict() -> None:
    config = {"profile": "sonnet", "name": "mock-sonnet", "script": {
        "kind": "explicit", "responses": [{"blocks": [{"type": "text", "text": "hello"}]}]},
        "latency": {"ttft": {"kind": "fixed", "ms": 1}},
        "serve": {"model_names": {"claude-haiku-*": "haiku", "claude-sonnet-*": "sonnet"},
                  "strict_model_names": True}}
    model = MockModel(ModelConfig.model_validate(config), SEED, TOOLS)
    with serving(model) as (server, client, _log):
        assert server.strict_models
        def ask(name: str) -> Any:
            return client.messages.create(model=name, max_tokens=100, messages=USER)
        assert ask("claude-haiku-4-9").model == "claude-haiku-4-5"  # the haiku preset plays it
        assert ask("claude-sonnet-9").model == model.name  # the scenario's own profile: itself
        assert ask(model.name).model == model.name
        with pytest.raises(anthropic.NotFoundError, match="model: gpt-5"):
            ask("gpt-5")

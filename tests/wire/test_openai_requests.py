"""The OpenAI endpoints' request side: the checks and their wording (pairing above all), what the
model sees of a request (one conversation, the same draws in every protocol), what Codex CLI
sends, the model listing by headers, and the fault table that maps every fault kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from tests.helpers.model_support import TOOLS
from tests.helpers.openai_cases import CHAT, READ, RESPONSES, model_for
from tests.helpers.server import serving
from toolturn.model.config import ModelConfig
from toolturn.model.faults import ALL_FAULTS
from toolturn.model.model import MockModel
from toolturn.wire import openai_chat_request, openai_responses_request
from toolturn.wire.client_tools import ClientTools, _weights, callable_tools
from toolturn.wire.identity import SESSION_HEADER
from toolturn.wire.protocols import FAULTS, INEXPRESSIBLE, PROTOCOLS, markdown_table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocols.md"
GOOD_RESPONSES = {"model": "m", "input": "hi"}
GOOD_CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
CALL = {"type": "function_call", "call_id": "call_1", "name": "Read",
        "arguments": '{"file_path": "/a"}'}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "text"}
CUSTOM_CALL = {"type": "custom_tool_call", "call_id": "call_p", "name": "apply_patch",
               "input": "*** Begin Patch\n*** End Patch\n"}
CUSTOM_OUTPUT = {"type": "custom_tool_call_output", "call_id": "call_p", "output": "Done!"}
ASSISTANT_CALLS = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{}"}},
    {"id": "call_2", "type": "function", "function": {"name": "Read", "arguments": "{}"}}]}


def tool_message(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


@pytest.mark.parametrize(("change", "message", "param"), [
    ({"model": None}, "Missing required parameter: 'model'.", "model"),
    ({"input": {"a": 1}}, "Invalid type for 'input': expected a string or array of input items, "
                          "but got an object instead.", "input"),
    ({"input": [{"role": "robot", "content": "x"}]},
     "Invalid value: 'robot'. Supported values are: 'assistant', 'system', 'developer', and "
     "'user'.", "input[0].role"),
    ({"input": [{"type": "function_call", "call_id": "c", "name": "x"}]},
     "Missing required parameter: 'input[0].arguments'.", "input[0].arguments"),
    ({"max_output_tokens": 4}, "Invalid 'max_output_tokens': integer below minimum value. "
                               "Expected a value >= 16, but got 4 instead.", "max_output_tokens"),
    ({"tools": [{"type": "function"}]}, "Missing required parameter: 'tools[0].name'.",
     "tools[0].name"),
    ({"input": [{"type": "telepathy"}]}, "Invalid value: 'telepathy'. Supported values are: "
                                         "'additional_tools', ", "input[0].type"),
    ({"previous_response_id": "resp_1"}, "Previous response with id 'resp_1' not found.",
     "previous_response_id"),
])
def test_responses_bodies_the_api_refuses_are_refused_in_its_words(
        change: dict[str, Any], message: str, param: str) -> None:
    body = {key: value for key, value in {**GOOD_RESPONSES, **change}.items() if value is not None}
    problem = openai_responses_request.request_problem(body)
    assert problem is not None and problem.message.startswith(message)
    assert problem.param == param


@pytest.mark.parametrize(("change", "message"), [
    ({"messages": []}, "[] is too short - 'messages'"),
    ({"messages": [{"role": "tool", "content": "x"}]},
     "Missing required parameter: 'messages[0].tool_call_id'."),
    ({"messages": [{"role": "robot", "content": "x"}]},
     "Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', "
     "'tool', and 'developer'."),
    ({"stream_options": {"include_usage": True}},
     "The 'stream_options' parameter is only allowed when 'stream' is enabled."),
    ({"max_tokens": 0}, "Invalid 'max_tokens': integer below minimum value. Expected a value >= "
                        "1, but got 0 instead."),
])
def test_chat_bodies_the_api_refuses_are_refused_in_its_words(
        change: dict[str, Any], message: str) -> None:
    problem = openai_chat_request.request_problem({**GOOD_CHAT, **change})
    assert problem is not None and problem.message == message


def test_pairing_in_responses_finds_both_orphans_in_the_apis_words() -> None:
    def violations(*items: dict[str, Any]) -> list[tuple[str, str | None]]:
        body = {"input": [{"role": "user", "content": "x"}, *items]}
        return [(p.message, p.param) for p in openai_responses_request.pairing(body)]
    assert violations(CALL, OUTPUT) == []
    assert violations(CALL) == [("No tool output found for function call call_1.", "input")]
    assert violations(OUTPUT) == [
        ("No tool call found for function call output with call_id call_1.", "input"),
    ]
    # A duplicate call id or a second output: our runtime repairs them, the API takes them.
    assert violations(CALL, OUTPUT, OUTPUT) == []
    assert violations(CALL, CALL, OUTPUT) == []


def test_pairing_in_responses_pairs_custom_tool_calls_by_their_own_type() -> None:
    def violations(*items: dict[str, Any]) -> list[str]:
        body = {"input": [{"role": "user", "content": "x"}, *items]}
        return [problem.message for problem in openai_responses_request.pairing(body)]
    assert violations(CUSTOM_CALL, CUSTOM_OUTPUT) == []
    assert violations(CUSTOM_CALL) == ["No tool output found for custom tool call call_p."]
    # A function call's output does not answer a custom tool call.
    assert violations(CUSTOM_CALL, {**OUTPUT, "call_id": "call_p"}) == [
        "No tool call found for function call output with call_id call_p.",
        "No tool output found for custom tool call call_p.",
    ]
    problem = openai_responses_request.request_problem(
        {**GOOD_RESPONSES, "input": [{"type": "custom_tool_call", "call_id": "c", "name": "x"}]})
    assert problem is not None and problem.param == "input[0].input"


def test_pairing_in_chat_finds_both_orphans_in_the_apis_words() -> None:
    def violations(*messages: dict[str, Any]) -> list[tuple[str, str | None]]:
        body = {"messages": [{"role": "user", "content": "x"}, *messages]}
        return [(p.message, p.param) for p in openai_chat_request.pairing(body)]
    assert violations(ASSISTANT_CALLS, tool_message("call_2"), tool_message("call_1")) == []
    # Unanswered at the end: the API names the messages; before another message: that one.
    assert violations(ASSISTANT_CALLS, tool_message("call_1")) == [
        (openai_chat_request.MISSING_RESPONSES + "call_2", "messages")]
    assert violations(ASSISTANT_CALLS, {"role": "user", "content": "y"}) == [
        (openai_chat_request.MISSING_RESPONSES + "call_1, call_2", "messages.[2].role")]
    assert violations(tool_message("call_9")) == [(openai_chat_request.NO_CALL,
                                                   "messages.[1].role")]
    # A tool message after a user message no longer answers the assistant's calls.
    assert violations(ASSISTANT_CALLS, tool_message("call_1"), tool_message("call_2"),
                      {"role": "user", "content": "y"}, tool_message("call_1")) == [
        (openai_chat_request.NO_CALL, "messages.[5].role")]


@pytest.mark.parametrize(("text", "seen"), [
    ('{"file_path": "/a"}', {"file_path": "/a"}),
    ("[1, 2]", {}),  # strict JSON, but not an object
    ('"/a"', {}),
    ('{"x": NaN}', {}),  # not strict JSON
    ('{"file_path": ', {}),  # cut short
])
def test_a_calls_arguments_reach_the_model_only_as_a_json_object(
    text: str, seen: dict[str, Any]
) -> None:
    assert openai_responses_request.arguments(text) == seen


def test_chat_takes_custom_tools_and_never_calls_them() -> None:
    custom = {"type": "custom", "custom": {"name": "apply_patch", "description": "a patch"}}
    function = {"type": "function", "function": {"name": "Read", "parameters": READ}}
    body = {**GOOD_CHAT, "tools": [custom, function]}
    assert openai_chat_request.request_problem(body) is None
    assert [tool["name"] for tool in openai_chat_request.messages_body(body)["tools"]] == ["Read"]
    problem = openai_chat_request.request_problem({**GOOD_CHAT, "tools": [{"type": "custom"}]})
    assert problem is not None and problem.message == (
        "Missing required parameter: 'tools[0].custom'.")
    problem = openai_chat_request.request_problem({**GOOD_CHAT, "tools": [{"type": "x"}]})
    assert problem is not None and problem.param == "tools[0].type"


def test_an_orphan_is_a_400_through_the_sdk_in_both_protocols() -> None:
    model = model_for("clean")
    with serving(model) as (server, _, log):
        client = openai.OpenAI(base_url=server.base_url + "/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.BadRequestError) as responses:
            client.responses.create(model=model.name, input=[
                {"role": "user", "content": "x"}, CALL])  # type: ignore[list-item]
        with pytest.raises(openai.BadRequestError) as chat:
            client.chat.completions.create(model=model.name, messages=[
                {"role": "user", "content": "x"}, ASSISTANT_CALLS])  # type: ignore[list-item]
        with pytest.raises(openai.BadRequestError) as custom:
            client.responses.create(model=model.name, input=[
                {"role": "user", "content": "x"}, CUSTOM_CALL])  # type: ignore[list-item]
        client.close()
    assert responses.value.message.endswith("No tool output found for function call call_1.")
    assert responses.value.body["type"] == "invalid_request_error"  # type: ignore[index]
    assert responses.value.param == "input"
    assert responses.value.response.headers["x-request-id"].startswith("req_")
    assert "did not have response messages: call_1, call_2" in chat.value.message
    assert chat.value.param == "messages"
    assert custom.value.message.endswith("No tool output found for custom tool call call_p.")
    assert custom.value.param == "input"
    assert all(" 400 " in line for line in log.lines)


def _turn_two(path: str, model_name: str, call_id: str, arguments: str) -> dict[str, Any]:
    """The second turn of a conversation: the first answer's call and its result."""
    if path == RESPONSES:
        return {"model": model_name, "stream": False, "input": [
            {"role": "user", "content": "Read both files."},
            {"type": "function_call", "call_id": call_id, "name": "Read", "arguments": arguments},
            {"type": "function_call_output", "call_id": call_id, "output": "contents"}],
            "tools": [{"type": "function", "name": "Read", "parameters": READ}]}
    if path == CHAT:
        return {"model": model_name, "messages": [
            {"role": "user", "content": "Read both files."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "Read", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "contents"}],
            "tools": [{"type": "function", "function": {"name": "Read", "parameters": READ}}]}
    return {"model": model_name, "max_tokens": 4096, "messages": [
        {"role": "user", "content": "Read both files."},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": call_id, "name": "Read", "input": {"file_path": "/a"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": "contents"}]}],
        "tools": [{"name": "Read", "input_schema": READ}]}


def _calls(path: str, answer: dict[str, Any]) -> list[tuple[str, str]]:
    if path == RESPONSES:
        return [(item["call_id"], item["name"]) for item in answer["output"]
                if item["type"] == "function_call"]
    if path == CHAT:
        return [(call["id"], call["function"]["name"])
                for call in answer["choices"][0]["message"].get("tool_calls") or ()]
    return [(block["id"], block["name"]) for block in answer["content"]
            if block["type"] == "tool_use"]


def test_the_same_session_and_turn_get_the_same_ids_in_every_protocol() -> None:
    model = model_for("clean")
    seen = []
    for path in ("/v1/messages", RESPONSES, CHAT):
        with serving(model) as (server, _, _log):  # a fresh server: attempt 1 each time
            body = _turn_two(path, model.name, "toolu_1", '{"file_path": "/a"}')
            response = httpx2.post(server.base_url + path, json=body, timeout=20,
                                   headers={SESSION_HEADER: "42"})
            seen.append(_calls(path, response.json()))
    assert seen[0] == seen[1] == seen[2] and len(seen[0]) == 2


CODEX_FIRST_BODY = {
    "model": "gpt-5", "stream": True, "store": False, "parallel_tool_calls": True,
    "tool_choice": "auto", "reasoning": {"summary": "auto"},
    "include": ["reasoning.encrypted_content"], "prompt_cache_key": "0199",
    "instructions": "You are Codex.",
    "input": [
        {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "<permissions instructions>"}]},
        {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "<collaboration mode>"}]},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>"}]},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Look at this project."}]}],
    "tools": [
        {"type": "function", "name": "exec_command", "description": "Runs a command.",
         "strict": False, "parameters": {"type": "object", "properties": {
             "cmd": {"type": "string"}, "workdir": {"type": "string"},
             "yield_time_ms": {"type": "number"}}, "required": ["cmd"]}},
        {"type": "function", "name": "view_image", "parameters": {"type": "object",
                                                                  "properties": {}}},
        {"type": "namespace", "name": "multi_agent_v1", "tools": []},
        {"type": "web_search"}],
}


def test_codex_clis_first_body_is_taken_and_its_shell_is_called(tmp_path: Path) -> None:
    assert openai_responses_request.request_problem(CODEX_FIRST_BODY) is None
    seen = openai_responses_request.messages_body(CODEX_FIRST_BODY)
    # Two developer messages taken out, two user messages one turn.
    assert [m["role"] for m in seen["messages"]] == ["user"]
    assert [tool["name"] for tool in seen["tools"]] == ["exec_command", "view_image"]
    config = {"profile": "haiku", "script": {"kind": "generated", "tool_mix": {"Bash": 1},
                                             "end_probability": 0.0}}
    model = MockModel(ModelConfig.model_validate(config), 7, TOOLS)
    with serving(model, client_tools=ClientTools({}, client_dir=str(tmp_path))) as (
            server, _, _log):
        response = httpx2.post(server.base_url + RESPONSES, json=CODEX_FIRST_BODY, timeout=20)
    assert response.status_code == 200
    calls = [line for line in response.text.splitlines()
             if line.startswith("data: ") and '"response.output_item.done"' in line
             and '"function_call"' in line]
    assert calls and all('"name":"exec_command"' in line and '\\"cmd\\"' in line
                         for line in calls)


def test_the_model_listing_is_shaped_by_the_headers() -> None:
    model = model_for("clean")
    with serving(model) as (server, _, _log):
        anthropic_list = httpx2.get(server.base_url + "/v1/models", timeout=20,
                                    headers={"anthropic-version": "2023-06-01"}).json()
        client = openai.OpenAI(base_url=server.base_url + "/v1", api_key="x", max_retries=0)
        openai_list = client.models.list()
        one = client.models.retrieve("gpt-5")
        client.close()
    assert anthropic_list["data"][0]["type"] == "model" and "has_more" in anthropic_list
    assert [m.id for m in openai_list.data] == [model.name]
    assert openai_list.data[0].object == "model" and one.id == "gpt-5"


def test_every_fault_kind_is_mapped_or_declared_inexpressible_in_every_protocol() -> None:
    assert set(FAULTS) == set(ALL_FAULTS)
    assert all(set(row) == set(PROTOCOLS) for row in FAULTS.values())
    unsaid = {(kind, protocol) for kind, row in FAULTS.items()
              for protocol, said in row.items() if said is None}
    assert unsaid == set(INEXPRESSIBLE)


def test_the_docs_show_the_table_in_the_code() -> None:
    assert markdown_table() in DOCS.read_text(encoding="utf-8")


def test_responses_reasoning_carries_the_models_thinking() -> None:
    model = model_for("clean")
    with serving(model) as (server, _, _log):
        client = openai.OpenAI(base_url=server.base_url + "/v1", api_key="x", max_retries=0)
        response = client.responses.create(model=model.name, input="Read both files.")
        client.close()
    reasoning = response.output[0]
    assert reasoning.type == "reasoning"
    assert reasoning.summary[0].text == "Two files to read."  # the script's thinking
    assert reasoning.encrypted_content == "c2lnbmF0dXJl"


def test_the_clients_own_tools_play_the_scenarios_with_its_weights(tmp_path: Path) -> None:
    weights = _weights({"Bash": 20, "Read": 30}, ["exec_command", "read_file", "view_image"])
    assert weights == {"exec_command": 20, "read_file": 30, "view_image": 25}
    shell = {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}
    qwen_read = {"type": "object", "properties": {"file_path": {"type": "string"}},
                 "required": ["file_path"]}
    tools = callable_tools([{"name": "exec_command", "input_schema": shell},
                            {"name": "read_file", "input_schema": qwen_read}],
                           ClientTools({}, client_dir=str(tmp_path)))
    assert sorted(tools) == ["exec_command", "read_file"]
    assert tools["exec_command"].spec.examples[0] == {"cmd": "ls"}
    assert tools["read_file"].spec.examples[0] == {"file_path": f"{tmp_path}/README.md"}


def test_a_scripted_call_goes_to_the_twin_the_client_declares(tmp_path: Path) -> None:
    script = {"kind": "explicit", "responses": [{"blocks": [
        {"type": "tool_use", "name": "Read", "input": {"file_path": "{dir}/README.md"}},
        {"type": "tool_use", "name": "Bash", "input": {"command": "ls", "description": "x"}},
        {"type": "tool_use", "name": "Grep", "input": {"pattern": "TODO"}}]}]}
    model = MockModel(ModelConfig.model_validate({"profile": "haiku", "script": script}), 7,
                      TOOLS)
    settings = ClientTools({}, client_dir=str(tmp_path))
    with serving(model, client_tools=settings) as (server, _, _log):
        client = openai.OpenAI(base_url=server.base_url + "/v1", api_key="x", max_retries=0)
        codex = client.responses.create(model="gpt-5", input="Look.", tools=CODEX_FIRST_BODY[
            "tools"])  # type: ignore[arg-type]
        client.close()
        claude = httpx2.post(server.base_url + "/v1/messages", timeout=20, json={
            "model": "m", "max_tokens": 1000, "messages": [{"role": "user", "content": "Look."}],
            "tools": [{"name": name, "input_schema": {"type": "object"}}
                      for name in ("Read", "Bash")]}).json()
    calls = [(item.name, item.arguments) for item in codex.output if item.type == "function_call"]
    assert calls == [
        ("exec_command", '{"cmd": "cat ' + str(tmp_path) + '/README.md"}'),
        ("exec_command", '{"cmd": "ls"}'),
        ("Grep", '{"pattern": "TODO"}'),  # no twin declared: as scripted, unknown to Codex
    ]
    assert [(b["name"], b["input"]) for b in claude["content"] if b["type"] == "tool_use"] == [
        ("Read", {"file_path": f"{tmp_path}/README.md"}),
        ("Bash", {"command": "ls", "description": "x"}),
        ("Grep", {"pattern": "TODO"})]

"""Whether a decoded body is an OpenAI Responses API request (`POST /v1/responses`), checked as
the API checks it and worded as it words its 400s; and the Messages-shaped body the mock model
sees for it (one model for every protocol: the same conversation gets the same draws).

Rules:

1. The body is an object with `model` (a string) and `input`: a string (one user message) or
   a list of items. `previous_response_id` is refused: the server stores no response (clients
   such as Codex CLI send `store: false` and the whole input every time).
2. An item is an object. A `message` (`type: "message"`, or no type with a `role`) has a role
   `user`, `assistant`, `system` or `developer` and a `content`: a string or a list of parts
   (`input_text`, `output_text` ... with a string `text`). A `function_call` has string
   `call_id`, `name` and `arguments`; a `function_call_output` a string `call_id` and an
   `output` (a string or a list of parts); a `custom_tool_call` (a freeform tool's call, as
   Codex's `apply_patch`) string `call_id`, `name` and `input`, and its
   `custom_tool_call_output` a `call_id` and an `output`. The other item types the official
   SDK knows (`reasoning`, `web_search_call`, `item_reference`, ...: `ITEM_TYPES`, read from
   `openai.types.responses`, so they follow the SDK as it grows) are accepted and not shown to
   the model; a type it does not know is refused.
3. `tools` is a list of objects with a `type`; a `function` tool has a string `name`. Tool types
   the server does not play (`namespace`, `web_search`, `custom`, ...) are accepted and never
   called. `max_output_tokens` is an integer of at least 16, `temperature` a number from 0 to
   2, `top_p` from 0 to 1, `stream` and `parallel_tool_calls` booleans; anything else is
   accepted and ignored.
4. Pairing (`pairing`): a `function_call_output` answers a `function_call` with its `call_id`
   earlier in the input, and every `function_call` is answered: otherwise the API's
   "No tool call found for function call output with call_id CALL." and
   "No tool output found for function call CALL.". A `custom_tool_call` likewise, by a
   `custom_tool_call_output` ("No tool output found for custom tool call CALL."). These are
   the API's two rules of `toolturn.runtime.openai.responses_pairing` (one walk for the
   runtime's check and the server's); its two rules of our own (duplicate ids, a second
   output) the API does not refuse, nor does the server. Each 400 names `param: "input"`, as
   the API's do.
5. The model sees (`messages_body`): `system` and `developer` messages taken out (they are
   instructions, not turns), a `function_call` as an assistant `tool_use` block (its id the
   `call_id`, its input the parsed arguments, `{}` if they do not parse as an object), a
   `function_call_output` as a user `tool_result`, consecutive turns of one role combined;
   `function` tools as custom tools, `max_output_tokens` as `max_tokens`.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from openai.types.responses import ResponseInputItemParam

from toolturn.runtime.openai.responses_pairing import (
    NO_CALL,
    NO_OUTPUT,
    Finding,
    FindingKind,
    classify_responses,
)
from toolturn.runtime.strict_json import parse_json_object
from toolturn.wire.openai_errors import (
    Problem,
    Refused,
    below_minimum,
    check_model_request,
    field,
    invalid_type,
    invalid_value,
    number_in,
    problem_of,
)
from toolturn.wire.request_shape import MAX_OUTPUT_TOKENS, literals, members, merged_turns

ROLES = ("assistant", "system", "developer", "user")
MIN_OUTPUT_TOKENS = 16
_ITEMS = "a string or array of input items"
# The `type` of every input item the SDK's request types know.
# The pairing findings the API refuses (the others are rules of our own runtime's), and what its
# messages call each call type.
_REFUSED = {FindingKind.MISSING_OUTPUT, FindingKind.ORPHAN_OUTPUT, FindingKind.EARLY_OUTPUT,
            FindingKind.EARLY_DUPLICATE}
_CALL_NAME = {"function_call": "function call", "custom_tool_call": "custom tool call"}
ITEM_TYPES = tuple(sorted({
    tag for member in members(ResponseInputItemParam) if hasattr(member, "__required_keys__")
    for tag in literals(typing.get_type_hints(member, include_extras=True).get("type", str))}))


def request_problem(body: Any) -> Problem | None:
    """Why `body` is not a Responses request (rules 1 to 3); None if it is one."""
    return problem_of(_check, body)


def _check(body: Any) -> None:
    check_model_request(body)
    items = field(body, "input", (str, list), _ITEMS, "", required=True)
    if body.get("previous_response_id") is not None:
        raise Refused(Problem(f"Previous response with id '{body['previous_response_id']}' not "
                              "found.", "previous_response_id", "previous_response_not_found"))
    for index, item in enumerate(items if isinstance(items, list) else ()):
        _check_item(item, f"input[{index}]")
    tools = field(body, "tools", list, "an array", "")
    for index, tool in enumerate(tools or ()):
        where = f"tools[{index}]"
        if not isinstance(tool, dict):
            raise invalid_type(where, "an object", tool)
        kind = field(tool, "type", str, "a string", where, required=True)
        if kind == "function":
            field(tool, "name", str, "a string", where, required=True)
    limit = field(body, "max_output_tokens", int, "an integer", "")
    if limit is not None and limit < MIN_OUTPUT_TOKENS:
        raise below_minimum("max_output_tokens", MIN_OUTPUT_TOKENS, limit)
    number_in(body, "temperature", 0, 2)
    number_in(body, "top_p", 0, 1)
    for key in ("stream", "parallel_tool_calls"):
        field(body, key, bool, "a boolean", "")


def _check_item(item: Any, where: str) -> None:
    if not isinstance(item, dict):
        raise invalid_type(where, "an object", item)
    kind = item.get("type", "message" if "role" in item else None)
    if kind is None:
        raise Refused(Problem(f"Missing required parameter: '{where}.type'.", f"{where}.type",
                              "missing_required_parameter"))
    if kind not in ITEM_TYPES:
        raise invalid_value(f"{where}.type", kind, ITEM_TYPES)
    if kind == "message":
        role = field(item, "role", str, "a string", where, required=True)
        if role not in ROLES:
            raise invalid_value(f"{where}.role", role, ROLES)
        content = field(item, "content", (str, list), "a string or array of content parts",
                        where, required=True)
        for index, part in enumerate(content if isinstance(content, list) else ()):
            if not isinstance(part, dict):
                raise invalid_type(f"{where}.content[{index}]", "an object", part)
    elif kind == "function_call":
        for key in ("call_id", "name", "arguments"):
            field(item, key, str, "a string", where, required=True)
    elif kind == "custom_tool_call":
        for key in ("call_id", "name", "input"):
            field(item, key, str, "a string", where, required=True)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        field(item, "call_id", str, "a string", where, required=True)
        field(item, "output", (str, list), "a string or array of content parts", where,
              required=True)


def _items(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    items = body["input"]
    return [{"role": "user", "content": items}] if isinstance(items, str) else list(items)


def _kind(item: Mapping[str, Any]) -> str:
    return str(item.get("type", "message"))


def pairing(body: Mapping[str, Any]) -> list[Problem]:
    """Every pairing violation of a checked body's input the API refuses, worded as it words
    them, in the runtime check's order (rule 4)."""
    return [Problem(_wording(finding), "input")
            for finding in classify_responses(_items(body)) if finding.kind in _REFUSED]


def _wording(finding: Finding) -> str:
    name = _CALL_NAME[finding.call_type]
    if finding.kind is FindingKind.MISSING_OUTPUT:
        return NO_OUTPUT.format(name=name, call_id=finding.call_id)
    return NO_CALL.format(name=name, call_id=finding.call_id)


def text_of(content: Any) -> str:
    """The text of a content string or list of parts (parts without text add nothing)."""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content
                   if isinstance(part, dict) and isinstance(part.get("text"), str))


def arguments(text: str) -> dict[str, Any]:
    """A call's arguments as the model's tool_use input: `{}` unless they are a JSON object."""
    try:
        return parse_json_object(text)
    except ValueError:  # not strict JSON, or another value (NotAnObject)
        return {}


def _message(item: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = _kind(item)
    if kind == "message" and item["role"] in ("user", "assistant"):
        text = text_of(item["content"])
        return {"role": item["role"], "content": [{"type": "text", "text": text}]}
    if kind == "function_call":
        return {"role": "assistant", "content": [{
            "type": "tool_use", "id": item["call_id"], "name": item["name"],
            "input": arguments(item["arguments"])}]}
    if kind == "function_call_output":
        return {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": item["call_id"],
            "content": text_of(item["output"])}]}
    return None  # instructions (system, developer), reasoning and the rest: not turns


def function_tool(name: str, description: Any, parameters: Any) -> dict[str, Any]:
    """A function tool as the Messages API's custom tool."""
    schema = parameters if isinstance(parameters, dict) else {"type": "object", "properties": {}}
    return {"name": name, "description": description if isinstance(description, str) else "",
            "input_schema": schema}


def messages_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Messages-shaped body the model sees for a checked Responses request (rule 5)."""
    messages = [m for m in (_message(item) for item in _items(body)) if m is not None]
    tools = [function_tool(tool["name"], tool.get("description"), tool.get("parameters"))
             for tool in body.get("tools") or () if tool["type"] == "function"]
    limit = body.get("max_output_tokens") or MAX_OUTPUT_TOKENS
    return {"model": body["model"], "max_tokens": limit,
            "messages": merged_turns(messages), "tools": tools,
            "stream": bool(body.get("stream", False))}

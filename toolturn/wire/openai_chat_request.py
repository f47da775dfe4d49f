"""Whether a decoded body is an OpenAI Chat Completions request (`POST /v1/chat/completions`),
checked as the API checks it and worded as it words its 400s; and the Messages-shaped body the
mock model sees for it.

Rules:

1. The body is an object with `model` (a string) and `messages`, a non-empty list.
2. A message is an object with a `role`: `system`, `developer`, `user`, `assistant`, `tool` or
   `function`. Its `content` is a string or a list of parts (null allowed for an assistant
   message with `tool_calls`); an assistant's `tool_calls` is a list of objects with a string
   `id` and a `function` with string `name` and `arguments`; a tool message has a string
   `tool_call_id`.
3. `tools` is a list of objects: `{"type": "function", "function": {"name": ...}}` (no
   `type` is a function), or a custom tool (`{"type": "custom", "custom": {"name": ...}}`),
   accepted and never called, as the API accepts it; `max_tokens` and
   `max_completion_tokens` integers of at least 1; `temperature` a number from 0 to 2, `top_p`
   from 0 to 1; `stream` a boolean; `stream_options` (an object) only with `stream` on.
   Anything else is accepted and ignored.
4. Pairing (`pairing`): the tool messages right after an assistant message with `tool_calls`
   answer each of its ids, and a tool message answers an id of that assistant message:
   otherwise the API's 400s "An assistant message with 'tool_calls' must be followed by tool
   messages responding to each 'tool_call_id'. The following tool_call_ids did not have
   response messages: IDS" and "Invalid parameter: messages with role 'tool' must be a response
   to a preceeding message with 'tool_calls'." (the API's spelling). Their `param` is the
   place, as the API names it: `messages.[I].role` of the tool message that answers nothing,
   and of the first message after an assistant's calls that is not their answer (`messages`
   when the list ends there). (Seen in the API's 400s: `messages.[3].role` on both, and
   `messages` for calls left unanswered at the end.)
5. The model sees (`messages_body`): system and developer messages taken out, an assistant's
   text and tool calls as text and `tool_use` blocks, a tool message as a user `tool_result`,
   consecutive turns of one role combined; tools as custom tools; `max_completion_tokens` (else
   `max_tokens`) as `max_tokens`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
from toolturn.wire.openai_responses_request import arguments, function_tool, text_of
from toolturn.wire.request_shape import MAX_OUTPUT_TOKENS, merged_turns

ROLES = ("system", "assistant", "user", "function", "tool", "developer")
TOOL_TYPES = ("function", "custom")
_CONTENT = "a string or array of content parts"
MISSING_RESPONSES = ("An assistant message with 'tool_calls' must be followed by tool messages "
                     "responding to each 'tool_call_id'. The following tool_call_ids did not "
                     "have response messages: ")
NO_CALL = ("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
           "message with 'tool_calls'.")


def request_problem(body: Any) -> Problem | None:
    """Why `body` is not a Chat Completions request (rules 1 to 3); None if it is one."""
    return problem_of(_check, body)


def _check(body: Any) -> None:
    check_model_request(body)
    messages = field(body, "messages", list, "an array", "", required=True)
    if not messages:
        raise Refused(Problem("[] is too short - 'messages'", "messages", "empty_array"))
    for index, message in enumerate(messages):
        _check_message(message, f"messages[{index}]")
    for index, tool in enumerate(field(body, "tools", list, "an array", "") or ()):
        where = f"tools[{index}]"
        if not isinstance(tool, dict):
            raise invalid_type(where, "an object", tool)
        kind = field(tool, "type", str, "a string", where) or "function"
        if kind not in TOOL_TYPES:
            raise invalid_value(f"{where}.type", kind, TOOL_TYPES)
        function = field(tool, kind, dict, "an object", where, required=True)
        field(function, "name", str, "a string", f"{where}.{kind}", required=True)
    for key in ("max_tokens", "max_completion_tokens"):
        limit = field(body, key, int, "an integer", "")
        if limit is not None and limit < 1:
            raise below_minimum(key, 1, limit)
    number_in(body, "temperature", 0, 2)
    number_in(body, "top_p", 0, 1)
    stream = field(body, "stream", bool, "a boolean", "")
    if field(body, "stream_options", dict, "an object", "") is not None and not stream:
        raise Refused(Problem("The 'stream_options' parameter is only allowed when 'stream' is "
                              "enabled.", "stream_options"))


def _check_message(message: Any, where: str) -> None:
    if not isinstance(message, dict):
        raise invalid_type(where, "an object", message)
    role = field(message, "role", str, "a string", where, required=True)
    if role not in ROLES:
        raise invalid_value(f"{where}.role", role, ROLES)
    calls = field(message, "tool_calls", list, "an array", where) if role == "assistant" else None
    field(message, "content", (str, list), _CONTENT, where,
          required=role in ("user", "system", "developer", "tool")
          or (role == "assistant" and not calls))
    for index, call in enumerate(calls or ()):
        here = f"{where}.tool_calls[{index}]"
        if not isinstance(call, dict):
            raise invalid_type(here, "an object", call)
        field(call, "id", str, "a string", here, required=True)
        function = field(call, "function", dict, "an object", here, required=True)
        field(function, "name", str, "a string", f"{here}.function", required=True)
        field(function, "arguments", str, "a string", f"{here}.function", required=True)
    if role == "tool":
        field(message, "tool_call_id", str, "a string", where, required=True)


def pairing(body: Mapping[str, Any]) -> list[Problem]:
    """Every pairing violation of a checked body's messages, worded as the API, with the
    place it names (rule 4)."""
    violations: list[Problem] = []
    open_ids: list[str] = []  # the last assistant's calls not answered yet
    answerable: set[str] = set()  # its ids, while its tool messages follow
    messages = body["messages"]
    for index, message in enumerate([*messages, None]):
        role = None if message is None else message["role"]
        where = "messages" if message is None else f"messages.[{index}].role"
        if role == "tool":
            if message is not None and message["tool_call_id"] not in answerable:
                violations.append(Problem(NO_CALL, where))
            elif message is not None and message["tool_call_id"] in open_ids:
                open_ids.remove(message["tool_call_id"])
            continue
        if open_ids:
            violations.append(Problem(MISSING_RESPONSES + ", ".join(open_ids), where))
        calls = (message or {}).get("tool_calls") or [] if role == "assistant" else []
        open_ids = list(dict.fromkeys(call["id"] for call in calls))
        answerable = set(open_ids)
    return violations


def _blocks(message: Mapping[str, Any]) -> dict[str, Any] | None:
    role = message["role"]
    if role == "user":
        return {"role": "user", "content": [{"type": "text", "text": text_of(message["content"])}]}
    if role == "assistant":
        content = message.get("content")
        blocks: list[dict[str, Any]] = []
        if content:
            blocks.append({"type": "text", "text": text_of(content)})
        for call in message.get("tool_calls") or ():
            blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                           "input": arguments(call["function"]["arguments"])})
        return {"role": "assistant", "content": blocks}
    if role == "tool":
        return {"role": "user", "content": [{"type": "tool_result",
                                             "tool_use_id": message["tool_call_id"],
                                             "content": text_of(message["content"])}]}
    return None  # system and developer: instructions; function: the legacy form, not played


def messages_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Messages-shaped body the model sees for a checked Chat Completions request (rule 5)."""
    messages = [m for m in (_blocks(message) for message in body["messages"]) if m is not None]
    tools = [function_tool(tool["function"]["name"], tool["function"].get("description"),
                           tool["function"].get("parameters"))
             for tool in body.get("tools") or () if tool.get("type", "function") == "function"]
    limit = body.get("max_completion_tokens") or body.get("max_tokens") or MAX_OUTPUT_TOKENS
    return {"model": body["model"], "max_tokens": limit, "messages": merged_turns(messages),
            "tools": tools, "stream": bool(body.get("stream", False))}

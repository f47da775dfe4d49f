"""Whether a decoded body is a Messages API request, checked as the API checks it.

The known block, tool, tool_choice and thinking types and their required fields are read from
the official SDK's request types (`anthropic.types.beta`, the widest set: a beta client's
blocks are the API's too), so they follow the SDK as it grows. The answer is the API's 400
wording, `path: reason`, with the path dotted as the API dots it (`messages.0.content.1.id`).

Rules, as the API applies them:

1. The body is an object with `model` (a string), `max_tokens` (an integer, 1 to
   `MAX_OUTPUT_TOKENS`) and `messages` (a non-empty list).
2. A message is an object with a `role` (`user`, `assistant`, or `system`: Claude Code sends a
   system-role message inside `messages` and the API takes it) and a `content`: a string or a
   list of blocks. A block is an object whose `type` is one the SDK knows, with that type's
   required fields; text is a string, a tool_use's `id` and `name` are strings and its `input`
   an object, a tool_result's `tool_use_id` a string and its `content` a string or a list of
   blocks, `is_error` a boolean.
3. `system` is a string or a list of text blocks; `tools` a list of tools with unique names,
   each a custom tool (`name`, `input_schema` an object) or a typed one the SDK knows;
   `tool_choice`, `thinking` objects of a known type with their required fields (thinking's
   `budget_tokens` at least 1,024 and below `max_tokens`); `metadata` an object whose
   `user_id` is a string or null; `stop_sequences` a list of strings; `temperature` and
   `top_p` numbers from 0 to 1, `top_k` a non-negative integer; `stream` a boolean.
4. Anything else (beta fields such as `context_management`, `output_config`, `cache_control`
   on blocks, fields not modelled at all) is accepted and ignored: a real client's request
   the API takes is never refused here.
5. Consecutive messages of the same role are one turn, as the Messages API documents
   ("consecutive user or assistant turns in your request will be combined into a single
   turn"): `merged_turns` combines them (after system-role messages are taken out) before the
   pairing check, so a `user`, `system`, `user` body is not refused for roles that do not
   alternate.
"""

from __future__ import annotations

import itertools
import typing
from collections.abc import Mapping
from typing import Any

from anthropic.types.beta import (
    BetaContentBlockParam,
    BetaThinkingConfigParam,
    BetaToolChoiceParam,
    BetaToolUnionParam,
)

# The largest `max_tokens` any model takes (with the 128k output beta).
MAX_OUTPUT_TOKENS = 128_000
MIN_THINKING_BUDGET = 1024
ROLES = ("user", "assistant", "system")


def members(union: Any) -> list[Any]:
    origin = typing.get_origin(union)
    if origin is typing.Annotated:
        return members(typing.get_args(union)[0])
    if origin is typing.Union:
        return [member for arg in typing.get_args(union) for member in members(arg)]
    return [union]


def literals(hint: Any) -> list[str]:
    if typing.get_origin(hint) is typing.Literal:
        return [value for value in typing.get_args(hint) if isinstance(value, str)]
    return [value for arg in typing.get_args(hint) for value in literals(arg)]


def _required_by_type(union: Any) -> dict[str, frozenset[str]]:
    """Each `type` tag of the SDK's request TypedDicts in `union` -> its required fields."""
    tags: dict[str, frozenset[str]] = {}
    for member in members(union):
        if not hasattr(member, "__required_keys__"):
            continue  # a response model the union also accepts: its request twin is listed
        hints = typing.get_type_hints(member, include_extras=True)
        required = frozenset(
            key for key, hint in hints.items() if typing.get_origin(hint) is typing.Required
        )
        for tag in literals(hints["type"]):
            tags.setdefault(tag, required - {"type"})
    return tags


BLOCKS = _required_by_type(BetaContentBlockParam)
TOOLS = _required_by_type(BetaToolUnionParam)
TOOL_CHOICES = _required_by_type(BetaToolChoiceParam)
THINKING = _required_by_type(BetaThinkingConfigParam)


class Refusal(Exception):
    """The body is not a request the API takes; the message is the API's 400 wording."""


def request_problem(body: Any) -> str | None:
    """Why `body` is not a Messages API request, in the API's words; None if it is one."""
    try:
        _check_request(body, counting=False)
    except Refusal as refusal:
        return str(refusal)
    return None


def count_tokens_problem(body: Any) -> str | None:
    """The same for `POST /v1/messages/count_tokens`, whose requests have no `max_tokens`."""
    try:
        _check_request(body, counting=True)
    except Refusal as refusal:
        return str(refusal)
    return None


def _blocks(content: Any) -> list[Any]:
    """A message's content as a list of blocks (a string is one text block)."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def merged_turns(messages: list[Any]) -> list[Any]:
    """`messages` with each run of consecutive same-role messages combined into one, their
    blocks in order (rule 5); the list itself when no two neighbours share a role. Only called
    on messages `request_problem` accepted (dicts with a role and a content)."""
    if all(a["role"] != b["role"] for a, b in itertools.pairwise(messages)):
        return messages
    merged: list[Any] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            previous = merged[-1]
            merged[-1] = {**previous, "content": [*_blocks(previous["content"]),
                                                  *_blocks(message["content"])]}
        else:
            merged.append(message)
    return merged


def _type_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "string", int: "integer", list: "list", dict: "dictionary", bool: "boolean"}
    return names.get(kind, "number") if isinstance(kind, type) else "number"


def _field(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str,
           required: bool = True) -> Any:
    """`obj[key]` if it is of `kind` (a bool is never an integer or a number)."""
    path = f"{where}.{key}" if where else key
    if key not in obj:
        if required:
            raise Refusal(f"{path}: Field required")
        return None
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise Refusal(f"{path}: Input should be a valid {_type_name(kind)}")
    return value


def _check_request(body: Any, *, counting: bool) -> None:
    if not isinstance(body, dict):
        raise Refusal("request body: Input should be a valid dictionary")
    model = _field(body, "model", str, "")
    max_tokens = _field(body, "max_tokens", int, "", required=not counting)
    messages = _field(body, "messages", list, "")
    if max_tokens is None:
        max_tokens = MAX_OUTPUT_TOKENS  # count_tokens: only thinking's budget is bounded by it
    elif max_tokens < 1:
        raise Refusal("max_tokens: Input should be greater than or equal to 1")
    if max_tokens > MAX_OUTPUT_TOKENS:
        raise Refusal(f"max_tokens: {max_tokens} > {MAX_OUTPUT_TOKENS}, which is the maximum "
                      f"allowed number of output tokens for {model}")
    if not messages:
        raise Refusal("messages: at least one message is required")
    for index, message in enumerate(messages):
        _check_message(message, f"messages.{index}")
    _check_options(body, max_tokens)


def _check_message(message: Any, where: str) -> None:
    if not isinstance(message, dict):
        raise Refusal(f"{where}: Input should be a valid dictionary")
    if "role" not in message:
        raise Refusal(f"{where}.role: Field required")
    if message["role"] not in ROLES or not isinstance(message["role"], str):
        raise Refusal(f"{where}.role: Input should be 'user' or 'assistant'")
    if "content" not in message:
        raise Refusal(f"{where}.content: Field required")
    _check_content(message["content"], f"{where}.content")


def _check_content(content: Any, where: str) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise Refusal(f"{where}: Input should be a valid string or a valid list")
    for index, block in enumerate(content):
        _check_block(block, f"{where}.{index}")


def _check_typed(obj: Any, where: str, known: Mapping[str, frozenset[str]],
                 default: str | None = None) -> tuple[dict[str, Any], str]:
    """An object of a known `type` with that type's required fields; its type."""
    if not isinstance(obj, dict):
        raise Refusal(f"{where}: Input should be a valid dictionary")
    tag = obj.get("type", default)
    if tag is None:
        raise Refusal(f"{where}.type: Field required")
    if not isinstance(tag, str) or tag not in known:
        expected = ", ".join(f"'{name}'" for name in sorted(known))
        raise Refusal(f"{where}: Input tag {tag!r} found using 'type' does not match any of "
                      f"the expected tags: {expected}")
    for key in sorted(known[tag]):
        if key not in obj:
            raise Refusal(f"{where}.{key}: Field required")
    return obj, tag


def _check_block(block: Any, where: str) -> None:
    block, tag = _check_typed(block, where, BLOCKS)
    if tag == "text":
        _field(block, "text", str, where)
    elif tag in ("tool_use", "server_tool_use"):
        _field(block, "id", str, where)
        _field(block, "name", str, where)
        _field(block, "input", dict, where)
    elif tag == "tool_result":
        _field(block, "tool_use_id", str, where)
        _field(block, "is_error", bool, where, required=False)
        if "content" in block:
            _check_content(block["content"], f"{where}.content")
    elif tag == "thinking":
        _field(block, "thinking", str, where)
        _field(block, "signature", str, where)


def _check_options(body: dict[str, Any], max_tokens: int) -> None:
    system = body.get("system")
    if "system" in body and not isinstance(system, str):
        if not isinstance(system, list):
            raise Refusal("system: Input should be a valid string or a valid list")
        for index, block in enumerate(system):
            _check_typed(block, f"system.{index}", {"text": frozenset({"text"})})
            _field(block, "text", str, f"system.{index}")
    _check_tools(body)
    if "tool_choice" in body:
        choice, tag = _check_typed(body["tool_choice"], "tool_choice", TOOL_CHOICES)
        if tag == "tool":
            _field(choice, "name", str, "tool_choice")
    if "thinking" in body:
        _check_thinking(body["thinking"], max_tokens)
    metadata = _field(body, "metadata", dict, "", required=False)
    if metadata is not None and metadata.get("user_id") is not None:
        _field(metadata, "user_id", str, "metadata")
    stops = _field(body, "stop_sequences", list, "", required=False)
    for index, stop in enumerate(stops or ()):
        if not isinstance(stop, str):
            raise Refusal(f"stop_sequences.{index}: Input should be a valid string")
    for key in ("temperature", "top_p"):
        value = _field(body, key, (int, float), "", required=False)
        if value is not None and not 0 <= value <= 1:
            raise Refusal(f"{key}: Input should be less than or equal to 1"
                          if value > 1 else f"{key}: Input should be greater than or equal to 0")
    top_k = _field(body, "top_k", int, "", required=False)
    if top_k is not None and top_k < 0:
        raise Refusal("top_k: Input should be greater than or equal to 0")
    _field(body, "stream", bool, "", required=False)


def _check_tools(body: dict[str, Any]) -> None:
    tools = _field(body, "tools", list, "", required=False)
    names: set[str] = set()
    for index, tool in enumerate(tools or ()):
        where = f"tools.{index}"
        tool, tag = _check_typed(tool, where, TOOLS, default="custom")
        name = _field(tool, "name", str, where, required="name" in TOOLS[tag])
        if tag == "custom":
            _field(tool, "input_schema", dict, where)
        if name is not None:
            if name in names:
                raise Refusal("tools: Tool names must be unique.")
            names.add(name)


def _check_thinking(thinking: Any, max_tokens: int) -> None:
    thinking, tag = _check_typed(thinking, "thinking", THINKING)
    if tag != "enabled":
        return
    budget = _field(thinking, "budget_tokens", int, "thinking")
    if budget < MIN_THINKING_BUDGET:
        raise Refusal(f"thinking.budget_tokens: Input should be greater than or equal to "
                      f"{MIN_THINKING_BUDGET}")
    if budget >= max_tokens:
        raise Refusal("`max_tokens` must be greater than `thinking.budget_tokens`. Please "
                      "consult our documentation at https://docs.claude.com/en/docs/build-with-"
                      "claude/extended-thinking#max-tokens-and-context-window-size")

"""The wording of tool_result blocks: real results wrapped, failures explained.

Every failure becomes an `is_error` tool_result carrying the call's original id, and its text
says what happened, so a model reading the transcript can tell an unknown tool from a refused
permission from a crashed tool from a cancellation.
"""

from __future__ import annotations

from typing import Any

from sim.runtime.outcomes import SyntheticCause

ToolContent = str | list[dict[str, Any]]


def tool_result(
    tool_use_id: str, content: ToolContent, *, is_error: bool = False
) -> dict[str, Any]:
    """A `tool_result` content block in API shape; `is_error` is spelled only when true."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def unknown_tool_text(name: str) -> str:
    return f"Error: no such tool: {name!r}."


def invalid_input_text(name: str, why: str) -> str:
    return f"Error: input for tool {name!r} is invalid: {why}"


def invalid_json_text(name: str, why: str) -> str:
    return f"Error: input for tool {name!r} is not valid JSON: {why}"


def permission_denied_text(name: str, message: str | None) -> str:
    text = f"Error: permission to use tool {name!r} was denied."
    return f"{text} {message}" if message else text


def exception_text(name: str, detail: str) -> str:
    return f"Error: tool {name!r} raised an exception: {detail}"


def cancelled_text(name: str) -> str:
    return f"Error: tool {name!r} was cancelled."


def synthetic_text(cause: SyntheticCause, name: str, *, failed_call: str | None = None) -> str:
    """The text of a result the runtime made up because the call could not finish normally."""
    if cause is SyntheticCause.SIBLING_ERROR:
        return f"Error: tool {name!r} was cancelled because sibling call {failed_call} failed."
    if cause is SyntheticCause.USER_INTERRUPT:
        return f"Error: tool {name!r} was cancelled: the user interrupted the turn."
    if cause is SyntheticCause.STREAM_ERROR:
        return f"Error: tool {name!r} did not run: the model's response stream broke off."
    if cause is SyntheticCause.FALLBACK:
        return f"Error: tool {name!r} did not run: the response was discarded for a fallback model."
    return f"Error: tool {name!r} did not run: the response was discarded."

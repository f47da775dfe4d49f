"""The wording of tool_result blocks: real results wrapped, failures explained.

Every failure becomes an `is_error` tool_result carrying the call's original id, and its text
says what happened, so a model reading the transcript can tell an unknown tool from a refused
permission from a crashed tool from a cancellation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolturn.runtime.outcomes import SyntheticCause

ToolContent = str | list[dict[str, Any]]


def tool_result(
    tool_use_id: str, content: ToolContent, *, is_error: bool = False
) -> dict[str, Any]:
    """A `tool_result` content block in API shape; `is_error` is spelled only when true."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


@dataclass(frozen=True, slots=True)
class ErrorTexts:
    """The wording of the runtime's own error results, one per recovery profile
    (`toolturn.runtime.recovery`): format strings over `name` (the tool's name) and `why` (the
    parser's or the schema's reason)."""

    unknown_tool: str = "Error: no such tool: {name!r}."
    invalid_json: str = "Error: input for tool {name!r} is not valid JSON: {why}"
    invalid_input: str = "Error: input for tool {name!r} is invalid: {why}"
    cancelled: str = "Error: tool {name!r} was cancelled."

    def unknown_tool_text(self, name: str) -> str:
        """The result for a call of a tool the loop does not have."""
        return self.unknown_tool.format(name=name)

    def invalid_json_text(self, name: str, why: str) -> str:
        """The result for a call whose input text is not a JSON object, and why."""
        return self.invalid_json.format(name=name, why=why)

    def invalid_input_text(self, name: str, why: str) -> str:
        """The result for a call whose input fails the tool's schema, and why."""
        return self.invalid_input.format(name=name, why=why)

    def cancelled_text(self, name: str) -> str:
        """The result for a call its tool reported cancelled."""
        return self.cancelled.format(name=name)


def permission_denied_text(name: str, message: str | None) -> str:
    """The result for a call refused permission, with the decider's message if any."""
    text = f"Error: permission to use tool {name!r} was denied."
    return f"{text} {message}" if message else text


def exception_text(name: str, detail: str) -> str:
    """The result for a call whose tool raised, with the exception's message."""
    return f"Error: tool {name!r} raised an exception: {detail}"


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

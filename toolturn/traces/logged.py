"""What every reader turns a log into: logged sessions of model steps and tool calls.

A reader (`toolturn.traces.claude_code`, `toolturn.traces.request_log`,
`toolturn.traces.serve_recording`) gives the same shape whatever the log's format, so stats,
calibration and replay read one thing:

- a `LoggedSession` is one agent conversation: its user prompts, in order, and its model steps;
- a `Step` is one model request and its response: the request's messages as the log implies them
  (what the agent had to send), the response's content blocks, stop reason and usage, the tool
  calls it made, and what the log's clock says of it;
- a `ToolCall` is one `tool_use` of a response and, when the log has it, its `tool_result`.

Times are milliseconds since the Unix epoch as the log wrote them (floats), or None where the log
has no clock. `where` is `file:line` of the log line the thing came from, so that a figure in a
report can be traced back to the line behind it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Shells: an error of theirs makes Claude Code cancel the rest of the batch, and they are safe
# to run beside other calls per command (the claude-code profile's read-only rule).
SHELL_TOOLS = frozenset({"Bash"})
# The key Claude Code writes a tool input under when the streamed JSON did not parse.
UNPARSED_INPUT_KEY = "__unparsedToolInput"


@dataclass(slots=True)
class ToolCall:
    tool_use_id: str
    name: str
    input: dict[str, Any]
    where: str
    # When the tool_use block was complete (Claude Code writes each block as it stops), and when
    # its tool_result was written; their difference is the tool's duration as the log saw it.
    use_ms: float | None = None
    result_ms: float | None = None
    # The tool's own run time, where the client logged it with the result (Claude Code's
    # `toolUseResult.durationMs`, a sub-agent's `totalDurationMs`): it dates the call's start.
    run_ms: float | None = None
    # None: no result was logged for this call.
    result_text: str | None = None
    is_error: bool = False
    # False when the log keeps no tool inputs (a `toolturn serve --record` folder): `input` is then
    # `{}` and no example of the tool's inputs.
    input_logged: bool = True
    # The client could not parse the streamed input as JSON (Claude Code keeps the raw text as
    # `{"__unparsedToolInput": ...}`): `input` is then no input the tool was ever called with.
    input_unparsed: bool = False
    # The result is the client's own, not the tool's: the call was cancelled because a sibling
    # of its batch failed (Claude Code cancels the batch when a shell call errs). Such a result
    # is an error, but no error of this tool's.
    sibling_cancelled: bool = False

    @property
    def latest_start_ms(self) -> float | None:
        """The latest the call can have started: its result's time less its logged run time
        (the result is written after the run ends), or without one its result's time."""
        if self.result_ms is None:
            return None
        return self.result_ms - (self.run_ms or 0.0)

    @property
    def duration_ms(self) -> float | None:
        """tool_use timestamp to tool_result timestamp, never negative (a clock that steps back
        between two lines gives 0), or None when either is missing."""
        if self.use_ms is None or self.result_ms is None:
            return None
        return max(0.0, self.result_ms - self.use_ms)


@dataclass(slots=True)
class Step:
    """One model request and its response."""

    where: str
    # The request's messages as the log's history implies them (Messages API shape).
    messages: list[dict[str, Any]]
    # The response's content blocks, merged (one assistant message), and its stop reason.
    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    model: str | None = None
    output_tokens: int | None = None
    input_tokens: int | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    # Which user prompt of the session this step answers (from 0).
    prompt_index: int = 0
    # When the request was sent (the last line before it: the prompt or the last tool result),
    # when the first and last content blocks of the response were logged.
    sent_ms: float | None = None
    first_block_ms: float | None = None
    last_block_ms: float | None = None
    # Whether `sent_ms` is the log's own record of the request being sent (Claude Code's
    # `api-request` line), not the last line before it.
    sent_logged: bool = False
    # The API error this request met instead of a response, if the log says so.
    api_error: str | None = None
    # The API error that cut this request's response off after some of it was logged (Claude
    # Code's synthetic error line after the blocks it had: "Connection lost mid-response"); the
    # request is this step, not another one.
    stream_error: str | None = None
    # When the log says the cut happened (the synthetic error line's time), if it has a clock.
    stream_error_ms: float | None = None
    # Set by a reader whose log says outright whether a response came (a `toolturn serve --record`
    # folder, which keeps no response text): then `has_response` is this, not guessed from blocks.
    response_logged: bool | None = None
    # The pairing violations the server found in this request (our 400s), when the log keeps
    # that count but not the request's messages (a recording: `messages` is then empty).
    server_violations: int | None = None

    @property
    def has_response(self) -> bool:
        """Whether the log holds this request's response (a request log's last request may have
        none; a failed request has none)."""
        if self.response_logged is not None:
            return self.api_error is None and self.response_logged
        return self.api_error is None and (bool(self.blocks) or self.stop_reason is not None)

    @property
    def text_chars(self) -> int:
        return sum(len(b.get("text", "")) for b in self.blocks if b.get("type") == "text")

    @property
    def first_block_delay_ms(self) -> float | None:
        """Request sent to first content block logged: time to first token plus the first
        block's own streaming (Claude Code logs a block when it stops), an upper bound on TTFT."""
        if self.sent_ms is None or self.first_block_ms is None:
            return None
        return max(0.0, self.first_block_ms - self.sent_ms)


@dataclass(slots=True)
class LoggedSession:
    source: str  # the file it was read from
    session_id: str
    # Sub-agent (sidechain) conversations are sessions of their own, marked here.
    sidechain: bool = False
    # False when the log keeps no request bodies, tool inputs or results (a `toolturn serve
    # --record` folder): such a session has no history to repair and cannot be replayed.
    bodies_logged: bool = True
    prompts_ms: list[float | None] = field(default_factory=list)
    # User lines the client wrote for the user (Claude Code's `isMeta`): history, no prompts.
    meta_lines: int = 0
    steps: list[Step] = field(default_factory=list)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [call for step in self.steps for call in step.tool_calls]

    def think_times_ms(self) -> list[float]:
        """User think time: from the last response to one prompt to the next prompt."""
        gaps = []
        for index in range(1, len(self.prompts_ms)):
            prompt_ms = self.prompts_ms[index]
            answered = [s for s in self.steps if s.prompt_index == index - 1]
            if prompt_ms is None or not answered:
                continue
            last = answered[-1].last_block_ms
            if last is not None:
                gaps.append(max(0.0, prompt_ms - last))
        return gaps


def describe_api_error(error: Any) -> str:
    """An API error as logged (an error body, its inner object, or text) in one short line:
    `overloaded_error: Overloaded`."""
    if isinstance(error, dict):
        inner = error["error"] if isinstance(error.get("error"), dict) else error
        kind = inner.get("type") or error.get("status") or "error"
        return f"{kind}: {inner.get('message', '')}".rstrip(": ")
    return str(error)[:200]


def tool_call_of(block: dict[str, Any], where: str, use_ms: float | None) -> ToolCall:
    """The call a `tool_use` block makes (an input that is not an object counts as `{}`)."""
    given = block.get("input")
    inputs: dict[str, Any] = given if isinstance(given, dict) else {}
    return ToolCall(str(block.get("id")), str(block.get("name")), inputs, where, use_ms=use_ms,
                    input_unparsed=UNPARSED_INPUT_KEY in inputs)

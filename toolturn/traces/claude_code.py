"""Claude Code session logs: `~/.claude/projects/<project>/<session>.jsonl`.

The format, as Claude Code 2.1 writes it (the fixtures under tests/fixtures/traces/claude-code are
real files it wrote against `toolturn serve`): one JSON object per line, with a `type`.

- `user`: `message` is `{"role": "user", "content": str | [blocks]}`. Content holding
  `tool_result` blocks answers tool calls (a line with one result may log the tool's own run
  time in `toolUseResult.durationMs`, `totalDurationMs` for a sub-agent); any other content is
  a prompt (a line whose text starts `[Request interrupted by user` joins the history but is not
  counted as a prompt). `isMeta` lines
  (a local command's caveat, the "Your response above was cut off mid-stream" resume) join the
  history and time the next request, but are no prompts (counted as `meta_lines`).
- `assistant`: `message` is the API's message object, holding ONE content block per line: a
  response of three blocks is three lines sharing `message.id`, each written when its block
  stopped, and tool results may be written between them (Claude Code starts tools while the
  model still streams). `isApiErrorMessage: true` marks the synthetic message Claude Code writes
  when a request failed for good, its kind in the line's `error` (`connection_failed`); right
  after blocks of a response, it says that response was cut off: that step's `stream_error`, no
  request of its own.
- `system` with `subtype: "api_error"`: a failed attempt (Claude Code retries it), with the wait
  before the next attempt in `retryInMs` (2.1.332): without request lines, the next attempt is
  timed as sent at the line's time plus that wait, so a response's first-block delay leaves out
  the failed attempts and the client's backoff. (2.1.197 writes no such line: a log of it cannot
  tell its retries from a slow first token.)
- `api-request` (2.1.332; not in 2.1.197): one per request sent, attempts included, written as
  it is sent: its `timestamp` and `id`; the assistant lines of its response name it in
  `requestRef`. Where the log has them, they time the requests (`Step.sent_ms`, `sent_logged`):
  a response by its `requestRef`, a failed attempt by the latest request line not yet taken;
  without them a request counts as sent at the line before it (a prompt, a tool result).
- `summary`, `attachment`, `queue-operation`, `last-prompt`, `mode`, `file-history-snapshot`,
  other `system` lines and any type not listed: no part of the conversation, counted by type.

Every line carries `timestamp` (ISO 8601), `uuid`, `parentUuid`, `sessionId` and `isSidechain`
(a sub-agent's conversation). Lines are read in file order; a sidechain is a session of its own
(keyed by `agentId` when the line has one). A line that is not a JSON object, lacks `type`, or
whose message or timestamp has the wrong shape is skipped and reported with its line number.

Each session's steps carry the history the log implies for each request: prompts, assistant
messages merged by `message.id`, each batch of tool results as one user message after them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolturn.traces.logged import LoggedSession, Step, ToolCall, describe_api_error, tool_call_of
from toolturn.traces.skipped import Skipped
from toolturn.traces.timestamps import epoch_ms

INTERRUPTED_PREFIX = "[Request interrupted by user"


class _LineError(ValueError):
    """This line cannot be read; the message says why."""


@dataclass(slots=True)
class _Builder:
    """One session being read: its history so far and the step whose response is arriving."""

    session: LoggedSession
    messages: list[dict[str, Any]] = field(default_factory=list)
    step: Step | None = None
    message_id: str | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    # The calls awaiting a result, by id, in call order: two calls may share one id (a
    # model's mistake the log keeps), and each result answers the first call still waiting.
    calls: dict[str, list[ToolCall]] = field(default_factory=dict)
    last_user_ms: float | None = None
    prompt_index: int = -1
    # The `api-request` lines: each one's time by id, and the latest one no step has taken.
    request_lines: dict[str, float | None] = field(default_factory=dict)
    untaken_request: str | None = None
    # When the client sends its next attempt, where a retried attempt's line says how long it
    # waits (`retryInMs`): the next request is timed from there, not from the line before the
    # first attempt (the failed attempts and the client's backoff are no part of its TTFT).
    retry_sent_ms: float | None = None

    def commit(self) -> None:
        """The step's response and its results join the history."""
        if self.step is not None and self.step.api_error is None:
            self.messages.append({"role": "assistant", "content": _sent_blocks(self.step)})
        if self.results:
            self.messages.append({"role": "user", "content": self.results})
        self.step, self.message_id, self.results = None, None, []

    def request_line(self, request_id: str, at_ms: float | None) -> None:
        """An `api-request` line: a request was sent at `at_ms`."""
        self.request_lines[request_id] = at_ms
        self.untaken_request = request_id

    def _sent(self, step: Step, request_ref: Any) -> None:
        """Time `step` by its request line: the one `request_ref` names, else (a failed attempt,
        whose error line names none) the latest one no step has taken; none: as it was set."""
        request = request_ref if request_ref in self.request_lines else self.untaken_request
        if request is None:
            return
        if request == self.untaken_request:
            self.untaken_request = None
        at_ms = self.request_lines[request]
        if at_ms is not None:
            step.sent_ms, step.sent_logged = at_ms, True

    def assistant(
        self, message: dict[str, Any], at_ms: float | None, where: str, request_ref: Any = None
    ) -> None:
        message_id = message.get("id")
        if self.step is None or message_id is None or message_id != self.message_id:
            self.commit()
            self.step = Step(
                where=where,
                messages=list(self.messages),
                prompt_index=max(self.prompt_index, 0),
                sent_ms=self._take_sent_ms(),
                first_block_ms=at_ms,
            )
            self._sent(self.step, request_ref)
            self.session.steps.append(self.step)
            self.message_id = message_id
        step = self.step
        step.last_block_ms = at_ms if at_ms is not None else step.last_block_ms
        step.model = message.get("model") or step.model
        step.stop_reason = message.get("stop_reason") or step.stop_reason
        usage = message.get("usage")
        if isinstance(usage, dict):
            if isinstance(usage.get("output_tokens"), int):
                step.output_tokens = usage["output_tokens"]
            if isinstance(usage.get("input_tokens"), int):
                step.input_tokens = usage["input_tokens"]
        for block in message["content"]:
            step.blocks.append(block)
            if block.get("type") == "tool_use":
                call = tool_call_of(block, where, at_ms)
                step.tool_calls.append(call)
                self.calls.setdefault(call.tool_use_id, []).append(call)

    def _take_sent_ms(self) -> float | None:
        """When a request without a request line was sent: after the client's logged retry
        wait, if the last attempt failed and said how long; else at the line before it."""
        sent = self.last_user_ms if self.retry_sent_ms is None else self.retry_sent_ms
        self.retry_sent_ms = None
        return sent

    def api_error(
        self, text: str, where: str, *, synthetic: bool = False, at_ms: float | None = None,
        retry_in_ms: float | None = None,
    ) -> None:
        """A request failed: a retried attempt (`system` api_error line), or Claude Code's
        synthetic error message (`synthetic`). A synthetic line is no request of its own: after
        blocks of a response (no prompt between; tool results that ran while it streamed may),
        it cut that response off and marks that step; after a failed attempt or a prompt, it
        is how that request ended for good (the last attempt, which has no retry line)."""
        step = self.step
        if synthetic and step is not None and step.api_error is None and step.blocks:
            step.stream_error, step.stream_error_ms = text, at_ms
            return
        self.commit()
        failed = Step(where=where, messages=list(self.messages),
                      prompt_index=max(self.prompt_index, 0), sent_ms=self._take_sent_ms(),
                      api_error=text)
        self._sent(failed, None)
        self.session.steps.append(failed)
        if at_ms is not None and retry_in_ms is not None:
            self.retry_sent_ms = at_ms + retry_in_ms

    def meta(self, content: list[dict[str, Any]] | str, at_ms: float | None) -> None:
        """An `isMeta` user line: text Claude Code sends the model for the user (a resume after
        a response was cut off, a local command's caveat): it joins the history, and the next
        request is sent after it, but it is no prompt."""
        self.commit()
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "user" and isinstance(last["content"], list):
            # After tool results (a response cut once its calls ran): the client sends the
            # resume in the results' message, one user turn.
            self.messages[-1] = {"role": "user", "content": [*last["content"], *blocks]}
        else:
            self.messages.append({"role": "user", "content": content})
        self.last_user_ms = at_ms
        self.session.meta_lines += 1
        self.retry_sent_ms = None

    def user(self, content: list[dict[str, Any]] | str, at_ms: float | None,
             run_ms: float | None = None) -> None:
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        results = [block for block in blocks if block.get("type") == "tool_result"]
        if results:
            for block in results:
                # The line's run time is its result's only when it holds one.
                self._result(block, at_ms, run_ms if len(results) == 1 else None)
            self.results.extend(blocks)
        else:
            self.commit()
            self.messages.append({"role": "user", "content": content})
            text = content if isinstance(content, str) else _first_text(blocks)
            if not text.startswith(INTERRUPTED_PREFIX):
                self.session.prompts_ms.append(at_ms)
                self.prompt_index += 1
        self.last_user_ms = at_ms
        self.retry_sent_ms = None  # the next request follows this line, no retry wait

    def _result(self, block: dict[str, Any], at_ms: float | None, run_ms: float | None) -> None:
        waiting = self.calls.get(str(block.get("tool_use_id")))
        if not waiting:
            return  # an orphan (or a second result): the history keeps it, the repair says so
        call = waiting.pop(0)
        call.result_ms, call.run_ms = at_ms, run_ms
        call.result_text = _result_text(block.get("content"))
        call.is_error = block.get("is_error") is True


def _sent_blocks(step: Step) -> list[dict[str, Any]]:
    """The blocks of `step`'s response the next request holds: all of them, but a cut
    response's calls that got no result never ran, and the client sends them no more (the next
    request was answered, so it held no call left unanswered)."""
    if step.stream_error is None:
        return list(step.blocks)
    unanswered = {call.tool_use_id for call in step.tool_calls if call.result_text is None}
    return [b for b in step.blocks
            if not (b.get("type") == "tool_use" and str(b.get("id")) in unanswered)]


def _api_error_text(line: dict[str, Any], message: dict[str, Any]) -> str:
    """A synthetic error message as `kind: text`, its kind the one the line names (`apiError`
    where 2.1.332 writes it, beside a coarser `error`; else `error`: `connection_failed`,
    `rate_limit`, ...); without one, the text alone ("API Error: 529")."""
    text = _first_text(message["content"]) or "API error"
    kind = line.get("apiError") if isinstance(line.get("apiError"), str) else line.get("error")
    if isinstance(kind, dict):
        kind = describe_api_error(kind).split(":", 1)[0]
    return f"{kind}: {text}" if isinstance(kind, str) and kind else text


def _run_time(line: dict[str, Any]) -> float | None:
    """The tool's own run time a result line logs (`toolUseResult.durationMs`, or a sub-agent's
    `totalDurationMs`), in ms; None where it logs none."""
    result = line.get("toolUseResult")
    if not isinstance(result, dict):
        return None
    for key in ("durationMs", "totalDurationMs"):
        value = result.get(key)
        if not isinstance(value, bool) and isinstance(value, int | float) \
                and 0 <= value < 86_400_000:
            return float(value)
    return None


def _retry_wait(line: dict[str, Any]) -> float | None:
    """The wait a retried attempt's line announces before the next attempt (`retryInMs`)."""
    wait = line.get("retryInMs")
    if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait < 86_400_000:
        return None
    return float(wait)


def _first_text(blocks: list[dict[str, Any]]) -> str:
    for block in blocks:
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            return str(block["text"])
    return ""


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _message(line: dict[str, Any], role: str) -> dict[str, Any]:
    message = line.get("message")
    if not isinstance(message, dict):
        raise _LineError(f"bad message: {role} line: 'message' must be an object")
    content = message.get("content")
    if role == "assistant" and not isinstance(content, list):
        raise _LineError("bad message: assistant line: message.content must be a list of blocks")
    if not isinstance(content, str | list):
        raise _LineError(
            f"bad message: {role} line: message.content must be a string or a list of blocks"
        )
    if isinstance(content, list) and not all(
        isinstance(b, dict) and isinstance(b.get("type"), str) for b in content
    ):
        raise _LineError(
            f"bad message: {role} line: every content block must be an object with a 'type'"
        )
    return message


def _timestamp(line: dict[str, Any]) -> float | None:
    if "timestamp" not in line:
        return None
    try:
        return epoch_ms(line["timestamp"])
    except ValueError as error:
        raise _LineError(f"bad timestamp: {error}") from None


class ClaudeCodeReader:
    """Reads Claude Code session files into `LoggedSession`s; one reader may read many files."""

    def __init__(self, skipped: Skipped) -> None:
        self.skipped = skipped
        # Lines that are no part of a conversation, by type.
        self.other_lines: dict[str, int] = {}
        # The `api-request` lines read (they time requests: no other lines).
        self.request_lines = 0

    def read(self, path: Path, lines: list[tuple[int, dict[str, Any]]]) -> list[LoggedSession]:
        """The sessions of one file, given its lines already parsed as JSON objects (with their
        line numbers; `toolturn.traces.sources` reports the lines that are not JSON objects)."""
        builders: dict[tuple[str, str], _Builder] = {}
        for number, line in lines:
            where = f"{path}:{number}"
            try:
                self._line(path, line, where, builders)
            except _LineError as error:
                self.skipped.add(str(path), number, str(error))
        for builder in builders.values():
            builder.commit()
        return [b.session for b in builders.values() if b.session.steps or b.session.prompts_ms]

    def _line(
        self,
        path: Path,
        line: dict[str, Any],
        where: str,
        builders: dict[tuple[str, str], _Builder],
    ) -> None:
        kind = line.get("type")
        if not isinstance(kind, str):
            raise _LineError("no type: the line has no 'type' string")
        if kind == "api-request":
            self._request_line(path, line, builders)
            return
        if kind not in ("user", "assistant") and not (
            kind == "system" and line.get("subtype") == "api_error"
        ):
            self.other_lines[kind] = self.other_lines.get(kind, 0) + 1
            return
        at_ms = _timestamp(line)
        builder = self._builder(path, line, builders)
        if kind == "system":
            error = line.get("error") or line.get("content") or "api_error"
            builder.api_error(f"retried: {describe_api_error(error)}", where, at_ms=at_ms,
                              retry_in_ms=_retry_wait(line))
        elif kind == "assistant":
            message = _message(line, "assistant")
            if line.get("isApiErrorMessage") is True:
                builder.api_error(
                    _api_error_text(line, message), where, synthetic=True, at_ms=at_ms
                )
            else:
                builder.assistant(message, at_ms, where, line.get("requestRef"))
        elif line.get("isMeta") is True:
            builder.meta(_message(line, "user")["content"], at_ms)
        else:
            builder.user(_message(line, "user")["content"], at_ms, _run_time(line))

    def _request_line(
        self, path: Path, line: dict[str, Any], builders: dict[tuple[str, str], _Builder]
    ) -> None:
        request_id = line.get("id")
        if not isinstance(request_id, str):
            raise _LineError("bad api-request line: 'id' must be a string")
        self._builder(path, line, builders).request_line(request_id, _timestamp(line))
        self.request_lines += 1

    @staticmethod
    def _builder(
        path: Path, line: dict[str, Any], builders: dict[tuple[str, str], _Builder]
    ) -> _Builder:
        session_id = str(line.get("sessionId") or path.stem)
        sidechain = line.get("isSidechain") is True
        agent = str(line.get("agentId") or "agent") if sidechain else ""
        key = (session_id, agent)
        if key not in builders:
            name = f"{session_id}/{agent}" if sidechain else session_id
            builders[key] = _Builder(LoggedSession(str(path), name, sidechain=sidechain))
        return builders[key]

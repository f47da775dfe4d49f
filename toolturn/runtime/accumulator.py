"""The stream accumulator: Anthropic Messages API stream events in, one message per finished
block out.

Rules of the state machine (events are the JSON of each SSE ``data:`` line, as dicts):

1. The first event must be ``message_start``; it sets the message id, model and initial usage.
   An ``error`` event is the one exception: it may end a stream at any point, even before
   ``message_start``, because the API sends it after HTTP 200 when it gives up on a response.
2. ``content_block_start`` opens the block at ``index`` (an index may be used once).
   text: ``text_delta`` appends text, ``citations_delta`` appends to ``citations``.
   thinking (starts with ``thinking: ""`` and ``signature: ""``): ``thinking_delta`` appends,
   ``signature_delta`` replaces. tool_use / server_tool_use: ``input_json_delta`` appends raw JSON
   text. redacted_thinking and every other block type pass through as started and accept none of
   the known delta types.
3. ``content_block_delta`` for an index that is not open, or of a known delta type that does not
   fit the block, is a protocol violation. A delta type this module does not know is ignored
   (forward compatibility, like unknown event types): the block keeps what it had.
4. ``content_block_stop`` closes the block and returns it as a :class:`BlockMessage`. Tool input is
   parsed here, once. Empty input text leaves the input the block started with (the API sends
   ``{}``); text that is not a JSON object is not an error of the stream but of the call: the block
   gets ``input: {}`` and the message carries ``input_error`` and ``raw_input``. JSON means RFC
   8259's: ``NaN``, ``Infinity``, a number beyond a double's range and nesting deeper than the
   parser recurses are invalid too (the input must be writable back as JSON).
5. ``message_delta`` overwrites ``stop_reason``, ``stop_sequence`` and any other field it carries,
   and each usage key it carries with a non-null value (usage counts are cumulative totals; a null
   means "not applicable" and the earlier value stands, as in the SDK).
6. ``message_stop`` ends the stream. ``error`` ends it too and is kept in :attr:`error`. After
   either, every event is a protocol violation.
7. ``ping`` and unknown event types are ignored once the message has started.

8. ``reopen(index)`` (not an event: the caller's word) takes the completed tool block at
   ``index`` back to open, with the input text it had, so that the deltas after append to it and
   its next ``content_block_stop`` completes it again. It is for a block completed early: Chat
   Completions never says a call is complete, and a runtime that started it once its arguments
   parsed (`toolturn.runtime.protocol_timing`) learns from a later delta that they go on.

A second ``message_start`` is a violation. A block still open when the stream ends (a cut, or a
``message_stop`` that skipped its ``content_block_stop``) is never returned as complete: it is
listed in :attr:`StreamAccumulator.open_indices`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolturn.runtime.stream_events import StreamProtocolError, as_dict, describe
from toolturn.runtime.strict_json import parse_json

__all__ = [
    "BlockMessage",
    "ResponseSummary",
    "StreamAccumulator",
    "StreamProtocolError",
    "merge_block_messages",
]


@dataclass(frozen=True, slots=True)
class ResponseSummary:
    """What a response said about itself, as far as it was read: the usage's `input_tokens`, the
    final `output_tokens` (message_delta's count; 0 before it came), the stop reason (None before
    message_delta) and when message_stop came (None: it did not). The accumulator knows no time:
    `message_stop_ns` is its caller's."""

    input_tokens: int
    output_tokens: int
    stop_reason: str | None
    message_stop_ns: int | None


@dataclass(frozen=True, slots=True)
class BlockMessage:
    """One completed content block: one internal assistant message.

    ``block`` is API-shaped; for tool_use and server_tool_use its ``input`` is the parsed object.
    When the tool input text was not a JSON object, ``block["input"]`` is ``{}``, ``input_error``
    says why and ``raw_input`` keeps the text, so the loop can answer with an is_error result.
    When it was, ``input_json`` is the text it was parsed from: what the executor remembers its
    validation verdicts by (the same text always parses to the same input).
    """

    message_id: str
    index: int
    block: dict[str, Any]
    input_error: str | None = None
    raw_input: str | None = None
    input_json: str | None = None

    def as_message(self) -> dict[str, Any]:
        """The block as an API assistant message ``{"role": "assistant", "content": [block]}``."""
        return {"role": "assistant", "content": [self.block]}


# For each block type that accumulates: the delta type that appends, the key of the delta that
# holds the text, and the block key the joined text goes to (None: tool input, parsed at stop).
_APPENDERS: dict[str, tuple[str, str, str | None]] = {
    "text": ("text_delta", "text", "text"),
    "thinking": ("thinking_delta", "thinking", "thinking"),
    "tool_use": ("input_json_delta", "partial_json", None),
    "server_tool_use": ("input_json_delta", "partial_json", None),
}
_TOOL_BLOCK_TYPES = frozenset({"tool_use", "server_tool_use"})
_KNOWN_DELTA_TYPES = frozenset(
    {"text_delta", "thinking_delta", "input_json_delta", "signature_delta", "citations_delta"}
)


class _OpenBlock:
    """Accumulation state of one started block. Text arrives as a list of parts joined once at
    stop, so a block of n deltas costs O(total length), not O(n * length)."""

    __slots__ = ("append_key", "append_type", "block", "parts", "target_key")

    def __init__(self, block: dict[str, Any]) -> None:
        self.block = block
        appender = _APPENDERS.get(block["type"])
        if appender is None:
            self.append_type, self.append_key, self.target_key = "", "", None
            self.parts: list[str] = []
        else:
            self.append_type, self.append_key, self.target_key = appender
            self.parts = [block[self.target_key]] if self.target_key else []


# Not the index of any block: the first delta of a run always looks its block up.
_NO_BLOCK = object()


def _parse_tool_input(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse tool input text: (the object, None) or (None, why it is not a JSON object)."""
    try:
        value = parse_json(raw)
    except ValueError as error:
        return None, f"tool input is not valid JSON: {error}"
    if not isinstance(value, dict):
        return None, f"tool input is JSON {type(value).__name__}, not an object"
    return value, None


class StreamAccumulator:
    """Turns one response's stream events into one :class:`BlockMessage` per completed block.

    Feed events in order with :meth:`feed`; it returns the completed block on
    ``content_block_stop`` and None otherwise, and raises :class:`StreamProtocolError` on an event
    that breaks the protocol (the accumulator is then unchanged). Sans-I/O: no clocks, no threads.
    """

    def __init__(self) -> None:
        self.message_id: str | None = None
        self.model: str | None = None
        self.usage: dict[str, Any] = {}
        # message_delta's output_tokens, the final count (the message_start's is a first one).
        self.final_output_tokens = 0
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
        self.started = False
        self.finished = False
        self.error: dict[str, Any] | None = None
        self.completed: list[BlockMessage] = []
        self._message: dict[str, Any] = {}
        self._open: dict[int, _OpenBlock] = {}
        self._used_indices: set[int] = set()
        self._live = False  # started and neither finished nor ended by an error

    @property
    def open_indices(self) -> tuple[int, ...]:
        """Indices of blocks started but not stopped, ascending (after a cut: the lost blocks)."""
        return tuple(sorted(self._open))

    def feed(self, event: Mapping[str, Any] | Any) -> BlockMessage | None:
        """Apply one event (a dict, or an SDK typed event via the thin adapter). Returns the
        completed block on content_block_stop, else None. Raises StreamProtocolError."""
        if type(event) is not dict:
            event = as_dict(event)
        try:
            kind = event["type"]
            # The hot path first: an appending delta to an open block of the right type. The
            # same steps as one round of `append_deltas`'s loop, on purpose: handing the event to
            # `append_deltas((event,))` instead costs 2.2 times the instructions per delta (its
            # loop's set-up; counted with callgrind), and callers that feed one event at a time
            # (the live driver, `toolturn serve`, bench_accumulator's `feed` against the SDK's)
            # would pay it on nearly every event. Change both together:
            # tests/runtime/test_loop_on_events.py holds the two to one answer.
            if kind == "content_block_delta" and self._live:
                state = self._open.get(event["index"])
                if state is not None:
                    delta = event["delta"]
                    if delta["type"] == state.append_type:
                        text = delta[state.append_key]
                        if type(text) is str:
                            state.parts.append(text)
                            return None
                self._other_delta(event, state)
                return None
            if not self._live:
                self._check_can_start(kind, event)
            if kind == "content_block_stop":
                return self._stop_block(event)
            if kind == "content_block_start":
                self._start_block(event)
            elif kind == "message_delta":
                self._apply_message_delta(event)
            elif kind == "message_start":
                self._start_message(event)
            elif kind == "message_stop":
                self.finished = True
                self._live = False
            elif kind == "error":
                self.error = dict(event["error"])
                self._live = False
            # ping and unknown event types: nothing to do.
            return None
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise StreamProtocolError(
                f"malformed {event.get('type', 'untyped')!s} event ({error!r}): {describe(event)}"
            ) from None

    def append_deltas(self, events: Sequence[Any], start: int = 0) -> int:
        """Apply the run of plain appending deltas from `events[start]` on: text, thinking or
        tool input JSON added to an open block of the matching type, exactly as :meth:`feed`
        applies them. Returns the index of the first event that is anything else (or
        `len(events)`); that event is left untouched, for :meth:`feed` to handle or reject.

        Why: nearly every event of a stream is such a delta, and one call per run of them costs
        far less than a call (and its checks for the rare events) per delta.
        """
        if not self._live:
            return start
        open_blocks = self._open
        position = start
        # The block of the previous delta, looked up again only when the index changes: a run
        # is mostly deltas of one block.
        index: Any = _NO_BLOCK
        append_type = append_key = ""
        parts: list[str] = []
        # Subscripts, not .get(): a missing key or a wrong type ends the run (KeyError,
        # TypeError) as cheaply as the hot path of `feed`, which leaves the event to it.
        try:
            for position in range(start, len(events)):
                event = events[position]
                if type(event) is not dict or event["type"] != "content_block_delta":
                    return position
                if event["index"] != index:
                    state = open_blocks.get(event["index"])
                    if state is None:
                        return position
                    index = event["index"]
                    append_type, append_key, parts = (
                        state.append_type, state.append_key, state.parts
                    )
                delta = event["delta"]
                if delta["type"] != append_type:
                    return position
                text = delta[append_key]
                if type(text) is not str:
                    return position
                parts.append(text)
        except (KeyError, TypeError):
            return position
        return len(events)

    def reopen(self, index: int) -> BlockMessage:
        """Rule 8: the completed tool block at `index` is open again, with its input text so
        far. Returns the completed message it was (now withdrawn from `completed`). Raises
        ValueError when no completed tool block has that index or the stream is over."""
        if not self._live:
            raise ValueError(f"reopen of block {index} after the stream ended")
        done = next((d for d in self.completed if d.index == index), None)
        if done is None or done.block["type"] not in _TOOL_BLOCK_TYPES:
            raise ValueError(f"reopen of block {index}, which is no completed tool block")
        self.completed.remove(done)
        # A fresh block: the withdrawn message keeps the input it was completed with.
        state = _OpenBlock({**done.block, "input": {}})
        text = done.input_json if done.input_json is not None else done.raw_input
        if text:
            state.parts.append(text)
        self._open[index] = state
        return done

    def summary(self, message_stop_ns: int | None = None) -> ResponseSummary:
        """The response's `ResponseSummary` so far; `message_stop_ns` is when the caller saw
        message_stop (None if it has not come)."""
        input_tokens = self.usage.get("input_tokens", 0)
        return ResponseSummary(
            input_tokens if type(input_tokens) is int else 0,
            self.final_output_tokens,
            self.stop_reason,
            message_stop_ns,
        )

    def snapshot(self) -> dict[str, Any]:
        """The assistant message so far, from completed blocks only, in API Message shape
        (id, type, role, model, content in index order, stop_reason, stop_sequence, usage)."""
        message = dict(self._message)
        message.update(
            id=self.message_id,
            model=self.model,
            stop_reason=self.stop_reason,
            stop_sequence=self.stop_sequence,
            usage=dict(self.usage),
            content=[dict(done.block) for done in sorted(self.completed, key=_block_index)],
        )
        return message

    def _check_can_start(self, kind: str, event: dict[str, Any]) -> None:
        if self.finished or self.error is not None:
            ended_by = "message_stop" if self.finished else "an error event"
            raise StreamProtocolError(f"{kind} event after {ended_by}: {describe(event)}")
        if kind not in ("message_start", "error"):
            raise StreamProtocolError(f"{kind} event before message_start: {describe(event)}")

    def _start_message(self, event: dict[str, Any]) -> None:
        if self.started:
            raise StreamProtocolError(f"a second message_start: {describe(event)}")
        message = dict(event["message"])
        if message.get("content"):
            raise StreamProtocolError(f"message_start already carries content: {describe(event)}")
        message_id = message["id"]
        if not isinstance(message_id, str):
            raise StreamProtocolError(
                f"message_start without a string message id: {describe(event)}"
            )
        self.message_id = message_id
        self.model = message.get("model")
        self.usage = dict(message.get("usage") or {})
        self.stop_reason = message.get("stop_reason")
        self.stop_sequence = message.get("stop_sequence")
        self._message = message
        self.started = True
        self._live = True

    def _start_block(self, event: dict[str, Any]) -> None:
        index = event["index"]
        block = dict(event["content_block"])
        block_type = block["type"]
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise StreamProtocolError(f"content_block_start with a bad index: {describe(event)}")
        if index in self._used_indices:
            state = "still open" if index in self._open else "already stopped"
            raise StreamProtocolError(
                f"content_block_start for index {index}, which is {state}: {describe(event)}"
            )
        if block_type == "thinking":
            block.setdefault("thinking", "")
            block.setdefault("signature", "")
        elif block_type == "text":
            block.setdefault("text", "")
        if block_type in ("text", "thinking") and type(block[block_type]) is not str:
            raise StreamProtocolError(
                f"a {block_type} block whose {block_type} is not a string: {describe(event)}"
            )
        self._open[index] = _OpenBlock(block)
        self._used_indices.add(index)

    def _other_delta(self, event: dict[str, Any], state: _OpenBlock | None) -> None:
        """Every delta that is not the block's appending kind: the rare and the wrong ones."""
        index = event["index"]
        if state is None:
            where = "a stopped block" if index in self._used_indices else "no started block"
            raise StreamProtocolError(
                f"content_block_delta for index {index}, which is {where}: {describe(event)}"
            )
        delta = event["delta"]
        delta_type = delta["type"]
        block = state.block
        block_type = block["type"]
        if delta_type == state.append_type:
            raise StreamProtocolError(
                f"{delta_type} whose {state.append_key} is not a string, at index {index}: "
                f"{describe(event)}"
            )
        if delta_type == "signature_delta" and block_type == "thinking":
            block["signature"] = delta["signature"]
        elif delta_type == "citations_delta" and block_type == "text":
            citations = block.get("citations")
            block["citations"] = [*(citations or ()), delta["citation"]]
        elif delta_type in _KNOWN_DELTA_TYPES:
            raise StreamProtocolError(
                f"{delta_type} does not fit the {block_type} block at index {index}: "
                f"{describe(event)}"
            )
        return None

    def _stop_block(self, event: dict[str, Any]) -> BlockMessage:
        index = event["index"]
        state = self._open.get(index)
        if state is None:
            where = "already stopped" if index in self._used_indices else "never started"
            raise StreamProtocolError(
                f"content_block_stop for index {index}, which is {where}: {describe(event)}"
            )
        del self._open[index]
        block = state.block
        input_error = raw_input = input_json = None
        joined = "".join(state.parts)  # every part was checked to be a str on arrival
        if state.target_key is not None:
            block[state.target_key] = joined
        elif state.append_type:  # a tool block: parse the input text, once
            if joined:
                parsed, input_error = _parse_tool_input(joined)
                block["input"] = {} if parsed is None else parsed
                if parsed is None:
                    raw_input = joined
                else:
                    input_json = joined
            elif not isinstance(block.get("input"), dict):
                block["input"] = {}
        assert self.message_id is not None  # blocks open only after message_start
        done = BlockMessage(self.message_id, index, block, input_error, raw_input, input_json)
        self.completed.append(done)
        return done

    def _apply_message_delta(self, event: dict[str, Any]) -> None:
        delta = event["delta"]
        usage = event.get("usage") or {}
        if not isinstance(delta, dict) or not isinstance(usage, dict):
            raise StreamProtocolError(
                f"message_delta whose delta or usage is not an object: {describe(event)}"
            )
        self._message.update(delta)
        if "stop_reason" in delta:
            self.stop_reason = delta["stop_reason"]
        if "stop_sequence" in delta:
            self.stop_sequence = delta["stop_sequence"]
        for key, value in usage.items():
            if value is not None:
                self.usage[key] = value
        output_tokens = usage.get("output_tokens")
        if type(output_tokens) is int:
            self.final_output_tokens = output_tokens


def _block_index(done: BlockMessage) -> int:
    return done.index


def merge_block_messages(blocks: Iterable[BlockMessage]) -> list[dict[str, Any]]:
    """Per-block messages sharing a message_id merge into one assistant message
    ({"role": "assistant", "content": [...]}) in block index order; different ids stay separate
    messages, in first-seen order."""
    by_id: dict[str, list[BlockMessage]] = {}
    for done in blocks:
        by_id.setdefault(done.message_id, []).append(done)
    return [
        {
            "role": "assistant",
            "content": [dict(done.block) for done in sorted(group, key=_block_index)],
        }
        for group in by_id.values()
    ]

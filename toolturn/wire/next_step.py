"""What a client did about an answer, read from what it sent next: the one classifier of the
recording's `recoveries` (`toolturn.wire.recorder`) and the probe's scorecard
(`toolturn.probe.verdicts`), so the two cannot disagree (issue 30).

The request an answer went to (`Asked`) is set beside the next request of the same session, and
the answer is what was written to the socket (`Written`: blocks as sent, and which of them got
their `content_block_stop`), never the plan. The pair gets one class (`CLASSES`), named for
what the client did:

- `identical_retry`: the same request again, byte for byte;
- `non_streaming_retry`: the same conversation again, asked with `stream: false`;
- `modified_retry`: the same conversation again, other bytes (another max_tokens, headers in the
  body, a streaming retry of a non-streaming request);
- `broken_transcript`: the next request broke tool pairing (our 400);
- `calls_answered`: every completed tool_use that was written kept in the transcript, each with
  a result that is not an error (the ordinary next turn; a call left open may be dropped);
- `calls_answered_with_errors`: every completed call kept, but one or more of them answered
  with an `is_error` result (the client did not run it: it said the call failed, was
  interrupted, or was refused);
- `some_calls_dropped`: some of the written calls kept, a completed one not;
- `calls_dropped_resumed`: none of the written calls kept, and a new user message holds text
  (asking to go on: "Output token limit hit. Resume...", "...cut off mid-stream. Resume...");
- `calls_dropped`: none of the calls kept, no user text added;
- `resumed` / `moved_on`: no tool_use was written, the transcript grown with / without a user
  message of text;
- `transcript_rewritten`: the next request does not extend the conversation (compaction, a
  rewind);
- `stopped`: no further request (the agent ended, or gave up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CLASSES = (
    "identical_retry", "non_streaming_retry", "modified_retry", "broken_transcript",
    "calls_answered", "calls_answered_with_errors", "some_calls_dropped",
    "calls_dropped_resumed", "calls_dropped", "resumed", "moved_on", "transcript_rewritten",
    "stopped",
)
STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class Asked:
    """A request as the classes read it."""

    digest: bytes  # of the body's bytes (or the bytes themselves): a retry repeats them
    messages: list[Any]  # the conversation, in the Messages shape whatever the protocol
    streamed: bool  # asked with `stream: true`
    broken: bool  # our pairing verdict refused it (a 400)


@dataclass(frozen=True, slots=True)
class WrittenCall:
    """A tool_use block that went out: its id, and whether its `content_block_stop` did."""

    tool_use_id: str
    completed: bool


def next_step(struck: Asked, written: Sequence[WrittenCall], following: Asked | None) -> str:
    """What `following` did about the answer to `struck`, whose calls written were `written`
    (`CLASSES`)."""
    if following is None:
        return STOPPED
    if following.digest == struck.digest:
        return "identical_retry"
    if following.broken:
        return "broken_transcript"
    before, after = conversation(struck.messages), conversation(following.messages)
    if after == before:
        if struck.streamed and not following.streamed:
            return "non_streaming_retry"
        return "modified_retry"
    if after[:len(before)] != before:
        return "transcript_rewritten"
    return _grown(written, after[len(before):])


def _grown(written: Sequence[WrittenCall], extra: list[Any]) -> str:
    calls = {call.tool_use_id for call in written if call.tool_use_id}
    kept = {block.get("id") for block in blocks_of(extra, "assistant")
            if block.get("type") == "tool_use"} & calls
    if kept:
        completed = {call.tool_use_id for call in written if call.completed}
        if not completed <= kept:
            return "some_calls_dropped"
        errors = [block for block in blocks_of(extra, "user")
                  if block.get("type") == "tool_result" and block.get("tool_use_id") in kept
                  and block.get("is_error") is True]
        return "calls_answered_with_errors" if errors else "calls_answered"
    resumed = _asks_to_go_on(extra)
    if calls:
        return "calls_dropped_resumed" if resumed else "calls_dropped"
    return "resumed" if resumed else "moved_on"


def conversation(messages: list[Any]) -> list[Any]:
    """The messages that are turns (system-role ones out), without cache markers (they move
    freely between requests)."""
    return [_uncached(m) for m in messages
            if not (isinstance(m, dict) and m.get("role") == "system")]


def _uncached(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _uncached(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_uncached(item) for item in value]
    return value


def blocks_of(messages: list[Any], role: str) -> list[dict[str, Any]]:
    """The content blocks of the messages of `role` (a string content has none)."""
    return [block for m in messages if isinstance(m, dict) and m.get("role") == role
            and isinstance(m.get("content"), list)
            for block in m["content"] if isinstance(block, dict)]


def _asks_to_go_on(extra: list[Any]) -> bool:
    """Whether the new user messages hold text (not only tool results). Any text: the CLI
    wraps its "Output token limit hit. Resume..." in a `<system-reminder>` (2.1.332)."""
    texts = [m["content"] for m in extra if isinstance(m, dict) and m.get("role") == "user"
             and isinstance(m.get("content"), str)]
    texts += [str(b.get("text", "")) for b in blocks_of(extra, "user") if b.get("type") == "text"]
    return any(text.strip() for text in texts)

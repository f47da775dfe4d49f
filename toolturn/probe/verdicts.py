"""What the client did about a probe case's fault, read from what it sent next (issue 30).

The request a fault struck (for a clean case: the first answer of the faulted turn) is set
beside the next request of the same session, and the pair gets one class (`CLASSES`), named for
what the client did:

- `identical_retry`: the same request again, byte for byte;
- `non_streaming_retry`: the same conversation again, asked with `stream: false`;
- `modified_retry`: the same conversation again, other bytes (another max_tokens, headers in the
  body, a streaming retry of a non-streaming request);
- `broken_transcript`: the next request broke tool pairing (our 400);
- `calls_answered`: every completed tool_use of the answer kept in the transcript with its
  result (the ordinary next turn; a call the answer left open may be dropped);
- `some_calls_dropped`: some of the answer's calls kept and answered, a completed one not;
- `calls_dropped_resumed`: none of the answer's calls kept, and a new user message holds text
  (asking to go on: "Output token limit hit. Resume...", "...cut off mid-stream. Resume...");
- `calls_dropped`: none of the calls kept, no user text added;
- `resumed` / `moved_on`: an answer with no tool_use, the transcript grown with / without a
  user message of text;
- `transcript_rewritten`: the next request does not extend the conversation (compaction, a
  rewind);
- `stopped`: no further request (the agent ended, or gave up).

A run whose requests never reached the fault's turn is `fault_not_reached`.

A run's class is its struck requests' classes, distinct, in order, joined by `+`
(`identical_retry` for three 529s all retried alike). A run with no request at all is not
classed: it failed (`NO_REQUEST`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolturn.probe.exchanges import Exchange

CLASSES = (
    "identical_retry", "non_streaming_retry", "modified_retry", "broken_transcript",
    "calls_answered", "some_calls_dropped", "calls_dropped_resumed", "calls_dropped",
    "resumed", "moved_on", "transcript_rewritten", "stopped", "fault_not_reached",
)
NO_REQUEST = "the agent sent no request to the server (does it honour ANTHROPIC_BASE_URL?)"


def run_class(exchanges: Sequence[Exchange]) -> str:
    """The class of one run (the module docstring)."""
    classes: list[str] = []
    for position, exchange in enumerate(exchanges):
        if not exchange.faulted:
            continue
        following = next((later for later in exchanges[position + 1:]
                          if later.session == exchange.session or later.turn is None), None)
        verdict = next_step(exchange, following)
        if verdict not in classes:
            classes.append(verdict)
    return "+".join(classes) or "fault_not_reached"


def next_step(struck: Exchange, following: Exchange | None) -> str:
    """What `following` did about the answer to `struck` (`CLASSES`)."""
    if following is None:
        return "stopped"
    if following.raw == struck.raw:
        return "identical_retry"
    if following.violations:
        return "broken_transcript"
    before, after = _conversation(struck.body), _conversation(following.body)
    if after == before:
        if struck.streamed and not following.streamed:
            return "non_streaming_retry"
        return "modified_retry"
    if after[:len(before)] != before:
        return "transcript_rewritten"
    return _grown(struck, after[len(before):])


def _grown(struck: Exchange, extra: list[Any]) -> str:
    calls = {block["id"]: index for index, block in struck.blocks.items()
             if block["type"] == "tool_use" and block["id"]}
    kept = {block.get("id") for block in _blocks(extra, "assistant")
            if block.get("type") == "tool_use"} & calls.keys()
    resumed = _asks_to_go_on(extra)
    if kept:
        completed = {tool_id for tool_id, index in calls.items() if index in struck.completed}
        return "calls_answered" if completed <= kept else "some_calls_dropped"
    if calls:
        return "calls_dropped_resumed" if resumed else "calls_dropped"
    return "resumed" if resumed else "moved_on"


def _conversation(body: dict[str, Any]) -> list[Any]:
    """The body's turns, without system-role messages and cache markers (they move freely)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [_uncached(m) for m in messages
            if not (isinstance(m, dict) and m.get("role") == "system")]


def _uncached(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _uncached(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_uncached(item) for item in value]
    return value


def _blocks(messages: list[Any], role: str) -> list[dict[str, Any]]:
    return [block for m in messages if isinstance(m, dict) and m.get("role") == role
            and isinstance(m.get("content"), list)
            for block in m["content"] if isinstance(block, dict)]


def _asks_to_go_on(extra: list[Any]) -> bool:
    """Whether the new user messages hold text (not only tool results). Any text: the CLI
    wraps its "Output token limit hit. Resume..." in a `<system-reminder>` (2.1.332)."""
    texts = [m["content"] for m in extra if isinstance(m, dict) and m.get("role") == "user"
             and isinstance(m.get("content"), str)]
    texts += [str(b.get("text", "")) for b in _blocks(extra, "user") if b.get("type") == "text"]
    return any(text.strip() for text in texts)

"""Stream events whose content does not vary, each made once and shared by every stream.

A stream is mostly deltas of generated text, which are phrases of a small vocabulary
(`toolturn.model.chunking`): the same `content_block_delta` of the same block index and text recurs
across responses, sessions and runs, as do every `ping`, `message_stop`, the `content_block_stop`
of an index and the empty `content_block_start` of a text or thinking block. Making each of them
once saves a dict (two for a delta) per event and keeps nothing per event alive after its batch.

Rule: an event is never changed once made. Every reader (the runtime's accumulator, the wire
server, the probe's rewrites, the event trace) only reads events, or copies before it edits;
`tests/model/test_model_shared_events.py` runs every policy and profile and checks that no event
changed.

Events that vary are made per stream: `message_start` (the message id), a tool_use block's start
(its id and name), a signature, `message_delta` (stop reason and tokens), the pieces of tool
input JSON (fragments of drawn inputs: they seldom repeat).
"""

from __future__ import annotations

from typing import Any

PING: dict[str, Any] = {"type": "ping"}
MESSAGE_STOP: dict[str, Any] = {"type": "message_stop"}

# Distinct texts remembered per delta kind and block index, for the first SHARED_BLOCKS indices
# (a scripted text brings its own; past this many a table starts again, and later blocks get new
# events: only the speed depends on it). Generated text has about 3,000 distinct deltas per
# index; the tables hold at most 2 x 16 x 4,096 events, as many as the one table per kind of
# 65,536 delta payloads did before.
SHARED_DELTAS_KEPT = 1 << 12
SHARED_BLOCKS = 16

_STOPS: list[dict[str, Any]] = []  # the content_block_stop of each index
_EMPTY_STARTS: dict[tuple[str, int], dict[str, Any]] = {}  # (block type, index) -> its start
# (block type, index) -> text -> its delta event
_TEXT_DELTAS: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}

# Delta type and its payload key, per block type.
_DELTA_KINDS = {"text": ("text_delta", "text"), "thinking": ("thinking_delta", "thinking")}


def block_stop(index: int) -> dict[str, Any]:
    """The `content_block_stop` of block `index`."""
    while len(_STOPS) <= index:
        _STOPS.append({"type": "content_block_stop", "index": len(_STOPS)})
    return _STOPS[index]


def block_start(index: int, block_type: str, tool_id: str = "", name: str = "") -> dict[str, Any]:
    """The `content_block_start` of block `index`: shared for text and thinking, new for a
    tool_use (its id and name vary)."""
    if block_type == "tool_use":
        content = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
        return {"type": "content_block_start", "index": index, "content_block": content}
    key = (block_type, index)
    start = _EMPTY_STARTS.get(key)
    if start is None:
        empty: dict[str, Any] = (
            {"type": "text", "text": ""}
            if block_type == "text"
            else {"type": "thinking", "thinking": "", "signature": ""}
        )
        start = _EMPTY_STARTS[key] = {
            "type": "content_block_start", "index": index, "content_block": empty
        }
    return start


def text_deltas(block_type: str, index: int, pieces: list[str]) -> list[dict[str, Any]]:
    """The `content_block_delta` of each piece of text or thinking block `index`: the one made
    before for the same text, or a new one, kept (new ones only, past `SHARED_BLOCKS`)."""
    kind, field = _DELTA_KINDS[block_type]
    if index >= SHARED_BLOCKS:
        return [_delta(index, kind, field, piece) for piece in pieces]
    key = (block_type, index)
    known = _TEXT_DELTAS.get(key)
    if known is None:
        known = _TEXT_DELTAS[key] = {}
    elif len(known) >= SHARED_DELTAS_KEPT:
        known.clear()
    # Looked up in C (a map of the table's `get`): most pieces are known; the few that are not
    # are made and kept in a second pass.
    made: list[dict[str, Any] | None] = list(map(known.get, pieces))
    if None in made:
        keep = known.setdefault
        for position, event in enumerate(made):
            if event is None:
                piece = pieces[position]
                made[position] = keep(piece, _delta(index, kind, field, piece))
    return made  # type: ignore[return-value]  # no None is left


def _delta(index: int, kind: str, field: str, text: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, field: text}}


def tool_json_deltas(index: int, pieces: list[str]) -> list[dict[str, Any]]:
    """The `content_block_delta` of each piece of tool input JSON of block `index` (new)."""
    return [
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "input_json_delta", "partial_json": piece},
        }
        for piece in pieces
    ]
